"""torch.distributed.device_mesh: the ranks of a job laid out as a 1-D or 2-D grid, each dimension
with its process groups (2-D: rows of consecutive ranks, as HSDP shards within a machine and
replicates across machines)."""
from .. import _C

_d = _C._distributed


class DeviceMesh:
    def __init__(self, device_type, mesh, *, mesh_dim_names=None, _groups=None):
        self.device_type = device_type
        if hasattr(mesh, "tolist"):
            mesh = mesh.tolist()
        two_d = len(mesh) > 0 and isinstance(mesh[0], (list, tuple))
        self._ranks = [list(r) for r in mesh] if two_d else list(mesh)
        self.mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names else None
        self._groups = _groups

    @property
    def ndim(self):
        return 2 if isinstance(self._ranks[0], list) else 1

    @property
    def shape(self):
        return ((len(self._ranks), len(self._ranks[0])) if self.ndim == 2
                else (len(self._ranks),))

    def size(self, mesh_dim=None):
        shape = self.shape
        if mesh_dim is None:
            n = 1
            for s in shape:
                n *= s
            return n
        return shape[self._dim(mesh_dim)]

    def _dim(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if not self.mesh_dim_names or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"Invalid mesh_dim {mesh_dim!r}: the mesh's dimensions are "
                               f"{self.mesh_dim_names}")
            return self.mesh_dim_names.index(mesh_dim)
        return mesh_dim

    def get_group(self, mesh_dim=None):
        """The process group of this rank along a dimension (1-D: the mesh's own group)."""
        if self.ndim == 1:
            return self._groups[0] if self._groups else None
        if mesh_dim is None:
            raise RuntimeError("Found the DeviceMesh have 2 dimensions; pass mesh_dim to "
                               "get_group")
        return self._groups[self._dim(mesh_dim)]

    def get_rank(self):
        return _d.get_rank()

    def get_local_rank(self, mesh_dim=None):
        rank = _d.get_rank()
        if self.ndim == 1:
            return self._ranks.index(rank)
        for row in self._ranks:
            if rank in row:
                return self._ranks.index(row) if self._dim(mesh_dim or 0) == 0 else row.index(rank)
        raise RuntimeError(f"rank {rank} is not in the mesh")

    def __getitem__(self, name):
        dim = self._dim(name)
        if self.ndim == 1:
            return self
        rank = _d.get_rank()
        row = next(r for r in self._ranks if rank in r)
        ranks = row if dim == 1 else [r[row.index(rank)] for r in self._ranks]
        return DeviceMesh(self.device_type, ranks, mesh_dim_names=(self.mesh_dim_names[dim],),
                          _groups=[self._groups[dim]])

    def __repr__(self):
        return f"DeviceMesh('{self.device_type}', {self._ranks})"


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None):
    """A mesh over every rank of the default group, in rank order. A 2-D mesh (R, S) makes the
    groups of its rows (S consecutive ranks) and columns, every rank calling new_group for each
    in the same order."""
    world = _d.get_world_size()
    shape = tuple(mesh_shape)
    n = 1
    for s in shape:
        n *= s
    if n != world:
        raise RuntimeError(f"init_device_mesh: the mesh shape {shape} has {n} ranks, but the "
                           f"world size is {world}")
    if len(shape) == 1:
        return DeviceMesh(device_type, list(range(world)), mesh_dim_names=mesh_dim_names,
                          _groups=[None])
    if len(shape) != 2:
        raise NotImplementedError("ember's DeviceMesh has 1 or 2 dimensions")
    rows = [list(range(r * shape[1], (r + 1) * shape[1])) for r in range(shape[0])]
    rank = _d.get_rank()
    row_group = col_group = None
    for row in rows:
        g = _d.new_group(row)
        if rank in row:
            row_group = g
    for c in range(shape[1]):
        col = [row[c] for row in rows]
        g = _d.new_group(col)
        if rank in col:
            col_group = g
    return DeviceMesh(device_type, rows, mesh_dim_names=mesh_dim_names,
                      _groups=[col_group, row_group])


__all__ = ["DeviceMesh", "init_device_mesh"]
