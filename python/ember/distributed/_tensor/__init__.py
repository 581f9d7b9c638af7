"""torch.distributed._tensor: DTensor's name before PyTorch 2.5 (torch.distributed.tensor)."""
from ..tensor import DTensor, Partial, Placement, Replicate, Shard, distribute_tensor
from ..device_mesh import DeviceMesh, init_device_mesh

__all__ = ["DTensor", "Partial", "Placement", "Replicate", "Shard", "distribute_tensor",
           "DeviceMesh", "init_device_mesh"]
