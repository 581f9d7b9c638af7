"""Settings applied across a graph of DataPipes (graph.traverse_dps), as
torch.utils.data.graph_settings: turning every Shuffler on or off (a DataLoader's shuffle=),
seeding every random DataPipe (a DataLoader does at each epoch), and sharding."""
import inspect
import warnings

from .graph import traverse_dps

__all__ = ["apply_random_seed", "apply_sharding", "apply_shuffle_seed", "apply_shuffle_settings",
           "get_all_graph_pipes"]


def get_all_graph_pipes(graph):
    """Every DataPipe of a traverse_dps graph, each once, depth first."""
    results, seen = [], set()

    def visit(g):
        for dp_id, (datapipe, sub_graph) in g.items():
            if dp_id not in seen:
                seen.add(dp_id)
                results.append(datapipe)
                visit(sub_graph)

    visit(graph)
    return results


def apply_sharding(datapipe, num_of_instances, instance_id):
    """Makes the graph's one shardable DataPipe (a ShardingFilter) keep instance instance_id
    of num_of_instances; RuntimeError when there are several."""
    already_applied_to = None
    for pipe in get_all_graph_pipes(traverse_dps(datapipe)):
        if hasattr(pipe, "is_shardable") and pipe.is_shardable() and \
                hasattr(pipe, "apply_sharding"):
            if already_applied_to is not None:
                raise RuntimeError("This implementation of sharding can be only applied once per "
                                   "instance of DataPipeline.", "Already applied to",
                                   already_applied_to, "while trying to apply to", pipe)
            pipe.apply_sharding(num_of_instances, instance_id)
            already_applied_to = pipe
    return datapipe


def _is_shuffle_datapipe(datapipe):
    return inspect.ismethod(getattr(datapipe, "set_shuffle", None)) and \
        inspect.ismethod(getattr(datapipe, "set_seed", None))


def apply_shuffle_settings(datapipe, shuffle=None):
    """set_shuffle(shuffle) on every Shuffler of the graph (None: leaves them); with
    shuffle=True and no Shuffler, one is added at the end (a warning says so)."""
    if shuffle is None:
        return datapipe
    shufflers = [pipe for pipe in get_all_graph_pipes(traverse_dps(datapipe))
                 if _is_shuffle_datapipe(pipe)]
    if not shufflers and shuffle:
        warnings.warn("`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. "
                      "Adding one at the end. Be aware that the default buffer size might not "
                      "be sufficient for your task.")
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for shuffler in shufflers:
        shuffler.set_shuffle(shuffle)
    return datapipe


def apply_shuffle_seed(datapipe, rng):
    warnings.warn("`apply_shuffle_seed` is deprecated since 1.12 and will be removed in the "
                  "future releases.\nPlease use `apply_random_seed` instead.")
    return apply_random_seed(datapipe, rng)


def apply_random_seed(datapipe, rng):
    """set_seed(a seed drawn from the generator rng) on every random DataPipe of the graph."""
    import ember
    for pipe in get_all_graph_pipes(traverse_dps(datapipe)):
        if inspect.ismethod(getattr(pipe, "set_seed", None)):
            pipe.set_seed(int(ember.empty((), dtype=ember.int64).random_(generator=rng).item()))
    return datapipe
