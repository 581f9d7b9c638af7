"""What nn.utils' reparametrizations need to know about ember's modules.

Note [Reparametrizing ember's C++ layers]: torch.nn.utils replaces a parameter by a computed
tensor (weight_norm's `module.weight = g * v / ||v||`, parametrize's property, functional_call's
values) and relies on forward() reading `self.weight` as a Python attribute. ember's C++ layers
(nn.Linear, nn.Conv2d, the batch norms, ...) read the tensor in their C++ slot instead, and a
slot whose parameter was deleted is still registered, only empty (named_parameters and state_dict
skip it). So while such a layer's C++ forward runs, the computed tensor is put in the slot
(`slots_holding`, or a forward pre-hook and forward hook pair) and the slot is emptied again
afterwards: named_parameters, state_dict and optimizers never see it, and autograd flows from it
back to the real parameters.

Limits, all in ember's C++: a C++ container (nn.Sequential) calls its children's C++ forward
directly, skipping Python hooks and Python classes, so a reparametrized C++ layer inside one runs
with its slot empty; so does a C++ layer called through DataParallel's replicas. The layer must be
called from Python (directly, or from a Python module's forward).
"""
import contextlib
import re
import sys
import types

from ... import _C

_CTOR_ARG = re.compile(r"(\w+)\s*:")


def package():
    """The ember package, for what it sets up after importing ember.nn (finfo, linalg, the
    memory formats): looked up at call time."""
    return sys.modules[__name__.split(".")[0]]


def runs_native_forward(cls):
    """Whether calling a module of class `cls` runs one of ember's C++ forwards (which reads the
    C++ slots) rather than a forward written in Python (which reads attributes)."""
    for klass in cls.__mro__:
        if klass.__dict__.get("_ember_reparametrized", False):
            continue  # a class made by parametrize: its forward only wraps the one below
        forward = klass.__dict__.get("forward")
        if forward is not None:
            return not isinstance(forward, types.FunctionType)
    return False


def layer_option(module, name):
    """module.<name>; for one of ember's C++ layers that keeps an option only as a constructor
    argument (the batch norms' eps and momentum), the value it was built with."""
    if hasattr(module, name):
        return getattr(module, name)
    args = getattr(module, "_ember_args", None)
    if args is not None:
        # _ember_args() are the constructor's leading arguments, in the order its pybind11
        # signature (the first line of __init__'s docstring) lists them after `self`.
        doc = (type(module).__init__.__doc__ or "").strip().splitlines()
        names = _CTOR_ARG.findall(doc[0].split("(", 1)[1]) if doc else []
        names = names[1:]  # self
        values = args()
        if name in names and names.index(name) < len(values):
            return values[names.index(name)]
    raise AttributeError(f"'{type(module).__name__}' object has no attribute '{name}'")


def slot_kind(module, name):
    """'parameter', 'buffer' (with its persistence) or None: what `name` is registered as in the
    module's C++ slots, an emptied slot included."""
    params, buffers, _ = module._registered()
    if any(n == name for n, _ in params):
        return "parameter", None
    for n, _, persistent in buffers:
        if n == name:
            return "buffer", persistent
    return None, None


def put_in_slot(module, name, tensor):
    """Stores `tensor` (None empties it) in the module's C++ slot `name`, as it is registered."""
    kind, persistent = slot_kind(module, name)
    if kind == "parameter":
        module.register_parameter(name, tensor)
    elif kind == "buffer":
        module.register_buffer(name, tensor, persistent)
    else:
        raise KeyError(f"'{type(module).__name__}' has no parameter or buffer '{name}'")


@contextlib.contextmanager
def slots_holding(module, values):
    """Within the block, each emptied slot `name` of module holds values[name] (Note
    [Reparametrizing ember's C++ layers]); they are emptied again on the way out."""
    try:
        for name, tensor in values.items():
            put_in_slot(module, name, tensor)
        yield
    finally:
        for name in values:
            put_in_slot(module, name, None)


def hooks(module, kind):
    """The module's forward ("forward") or forward pre ("forward_pre") hooks, an ordered dict
    handle -> hook that may be edited (PyTorch's module._forward_hooks / _forward_pre_hooks;
    ember's Module keeps them in module.py's table)."""
    table = getattr(module, "_" + kind + "_hooks", None)
    if isinstance(table, dict):
        return table
    return module.__dict__.get("_ember_hooks", {}).get(kind, {})


class EmptySlotAfterForward:
    """A forward hook that empties the slot a forward pre-hook filled (Note [Reparametrizing
    ember's C++ layers])."""

    def __init__(self, name):
        self.name = name

    def __call__(self, module, inputs, output):
        put_in_slot(module, self.name, None)


def register_recompute_hooks(module, fn):
    """Registers fn, a forward pre-hook that recomputes module.<fn.name> (weight_norm,
    spectral_norm), and for a C++ layer the hook that empties the slot fn fills. Returns whether
    fn must fill the slot."""
    module.register_forward_pre_hook(fn)
    fills_slot = runs_native_forward(type(module))
    if fills_slot:
        module.register_forward_hook(EmptySlotAfterForward(fn.name))
    return fills_slot


def pop_recompute_hook(module, cls, name):
    """Removes the recompute hook of class cls for `name` (and its slot-emptying hook); returns
    it, or None if there is none."""
    pre = hooks(module, "forward_pre")
    for key, hook in list(pre.items()):
        if isinstance(hook, cls) and hook.name == name:
            del pre[key]
            post = hooks(module, "forward")
            for k, h in list(post.items()):
                if isinstance(h, EmptySlotAfterForward) and h.name == name:
                    del post[k]
            return hook
    return None


def find_recompute_hook(module, cls, name):
    return next((h for h in hooks(module, "forward_pre").values()
                 if isinstance(h, cls) and h.name == name), None)


def set_plain_attr(module, name, value):
    """PyTorch's `setattr(module, name, tensor)` once `name` is no longer a parameter: a plain
    attribute (in ember the emptied slot would refuse a tensor that is not a Parameter)."""
    object.__setattr__(module, name, value)


def del_plain_attr(module, name):
    module.__dict__.pop(name, None)


def is_module(obj):
    return isinstance(obj, _C._nn.Module)
