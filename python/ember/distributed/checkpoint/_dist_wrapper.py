"""One save or load across a process group, or in one process (no_dist): ranks, the coordinator
(rank 0), and failures gathered so that every rank raises the same CheckpointException."""
from ... import _C
from .. import _object_collectives as _objects
from .api import CheckpointException, _describe

_d = _C._distributed


class _DistWrapper:
    def __init__(self, group, use_dist):
        self.group, self.use_dist = group, use_dist
        self.rank = _d.get_rank(group) if use_dist else 0
        self.world = _d.get_world_size(group) if use_dist else 1
        self.is_coordinator = self.rank == 0

    def all_gather(self, step, fn):
        """[fn() of every rank]; if any rank's fn raised, all raise."""
        try:
            mine = (True, fn())
        except Exception as err:  # noqa: BLE001 (any failure is reported by every rank)
            mine = (False, _describe(err))
        results = [mine]
        if self.use_dist:
            results = [None] * self.world
            _objects.all_gather_object(results, mine, group=self.group)
        failures = {r: v for r, (ok, v) in enumerate(results) if not ok}
        if failures:
            raise CheckpointException(step, failures)
        return [v for _, v in results]

    def from_coordinator(self, step, fn):
        """The coordinator's fn(), on every rank (its failure raised by all)."""
        mine = None
        if self.is_coordinator:
            try:
                mine = (True, fn())
            except CheckpointException as err:  # other ranks' failures, gathered here
                mine = (False, err.failures)
            except Exception as err:  # noqa: BLE001
                mine = (False, {0: _describe(err)})
        if self.use_dist:
            box = [mine]
            _objects.broadcast_object_list(box, src=0, group=self.group)
            mine = box[0]
        ok, value = mine
        if not ok:
            raise CheckpointException(step, value)
        return value

    def to_coordinator(self, step, fn, then):
        """Every rank's fn() gathered to the coordinator, which runs then(results); a failure
        anywhere is raised by all."""
        try:
            mine = (True, fn())
        except Exception as err:  # noqa: BLE001
            mine = (False, _describe(err))
        results = [mine]
        if self.use_dist:
            results = [None] * self.world if self.is_coordinator else None
            _objects.gather_object(mine, results, dst=0, group=self.group)

        def finish():
            failures = {r: v for r, (ok, v) in enumerate(results) if not ok}
            if failures:
                raise CheckpointException(step, failures)
            return then([v for _, v in results])

        return self.from_coordinator(step, finish)
