"""DistributedSampler: each rank's share of a dataset's indices (torch.utils.data.distributed's).

The indices come from ember's C++ DistributedSampler (the one `ember train --nproc` uses): every
rank gets the same number (padded by repeating indices, or the tail dropped with drop_last), in an
order shuffled by seed + epoch identically on every rank. Call set_epoch at each epoch's start.
"""
from .sampler import Sampler


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        from ... import distributed as dist
        if num_replicas is None or rank is None:
            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler: the default process group has not been "
                                   "initialized; call ember.distributed.init_process_group or "
                                   "give num_replicas and rank")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, seed, drop_last, 0
        self._core = dist._d._DistributedSampler(len(dataset), num_replicas, rank, shuffle, seed,
                                                 drop_last)

    @property
    def num_samples(self):
        return len(self._core)

    @property
    def total_size(self):
        return self.num_samples * self.num_replicas

    def set_epoch(self, epoch):
        self.epoch = epoch
        self._core.set_epoch(epoch)

    def __iter__(self):
        return iter(self._core.indices())

    def __len__(self):
        return len(self._core)
