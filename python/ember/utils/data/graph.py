"""The graph of a DataPipe pipeline, as torch.utils.data.graph: {id(dp): (dp, {the graphs of
the DataPipes dp reads from})}. PyTorch finds a DataPipe's sources by pickling it; ember walks
its attributes, and the lists, tuples, sets and dicts among them."""
import warnings

from .datapipes.datapipe import IterDataPipe, MapDataPipe

__all__ = ["traverse", "traverse_dps"]


def _connected_datapipes(obj):
    """The DataPipes among obj's attribute values (inside collections too), in order."""
    found = []

    def visit(value):
        if isinstance(value, (IterDataPipe, MapDataPipe)):
            found.append(value)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for v in value:
                visit(v)
        elif isinstance(value, dict):
            for v in value.values():
                visit(v)

    for value in vars(obj).values():
        visit(value)
    return found


def _traverse_helper(datapipe, cache):
    if not isinstance(datapipe, (IterDataPipe, MapDataPipe)):
        raise RuntimeError("Expected `IterDataPipe` or `MapDataPipe`, but {} is found"
                           .format(type(datapipe)))
    dp_id = id(datapipe)
    if dp_id in cache:
        return {}
    cache.add(dp_id)
    graph = {dp_id: (datapipe, {})}
    for item in _connected_datapipes(datapipe):
        # A copy per path: one DataPipe may appear on several paths, but not twice on one.
        graph[dp_id][1].update(_traverse_helper(item, cache.copy()))
    return graph


def traverse_dps(datapipe):
    """The graph that ends at datapipe."""
    return _traverse_helper(datapipe, set())


def traverse(datapipe, only_datapipe=None):
    """Deprecated spelling of traverse_dps (ember looks only at DataPipes either way)."""
    msg = "`traverse` function and will be removed after 1.13. Please use `traverse_dps` instead."
    if not only_datapipe:
        msg += " And, the behavior will be changed to the equivalent of `only_datapipe=True`."
    warnings.warn(msg, FutureWarning)
    return _traverse_helper(datapipe, set())
