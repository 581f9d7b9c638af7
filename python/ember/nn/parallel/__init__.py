"""ember.nn.parallel: data parallelism in one process (replicate, scatter, parallel_apply,
gather, DataParallel) and across processes (DistributedDataParallel)."""
from ... import _C

_p = _C._parallel
replicate, scatter, gather, parallel_apply = _p.replicate, _p.scatter, _p.gather, _p.parallel_apply
data_parallel, DataParallel = _p.data_parallel, _p.DataParallel
DistributedDataParallel = _C._distributed.DistributedDataParallel
