"""Nested state dicts as flat ones, PyTorch's way (torch.distributed.checkpoint._traverse and
_nested_dict): mappings are walked into, lists only when they hold tensors or mappings, and each
leaf is named by its path joined with dots ({"optim": {"state": {0: ...}}} -> "optim.state.0")."""
from collections.abc import Mapping

from ... import _C


def _is_terminal(value):
    if isinstance(value, Mapping):
        return False
    if not isinstance(value, list):
        return True
    for entry in value:
        if isinstance(entry, (Mapping, list)) and not _is_terminal(entry):
            return False
        if isinstance(entry, _C.Tensor):
            return False
    return True


def traverse_state_dict(state_dict, visitor):
    """Calls visitor(path, value) on every leaf of state_dict."""
    def walk(path, value):
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(path + (str(k),), v)
        elif _is_terminal(value):
            visitor(path, value)
        else:
            for i, v in enumerate(value):
                walk(path + (i,), v)

    for key, value in state_dict.items():
        walk((str(key),), value)


def flatten_state_dict(state_dict):
    """(flat, mappings): flat maps each leaf's dotted name to it, mappings to its path."""
    flat, mappings = {}, {}

    def visit(path, value):
        name = ".".join(map(str, path))
        if name in flat:
            raise ValueError(f"duplicated flatten key {name}")
        flat[name], mappings[name] = value, path

    traverse_state_dict(state_dict, visit)
    return flat, mappings


def set_element(root, path, value):
    """Puts value at path in root, making the dicts and lists on the way."""
    node = root
    for here, nxt in zip(path, path[1:]):
        empty = {} if isinstance(nxt, str) else []
        if isinstance(node, Mapping):
            node = node.setdefault(here, empty)
        else:
            node.extend([None] * (here + 1 - len(node)))
            if node[here] is None:
                node[here] = empty
            node = node[here]
    if isinstance(path[-1], int):
        node.extend([None] * (path[-1] + 1 - len(node)))
    node[path[-1]] = value


def unflatten_state_dict(flat, mappings):
    nested = {}
    for name, value in flat.items():
        set_element(nested, mappings[name], value)
    return nested
