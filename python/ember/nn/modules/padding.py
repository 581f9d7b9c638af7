"""torch.nn.modules.padding's names (defined in misc.py)."""
from .misc import (ZeroPad1d, ZeroPad2d, ZeroPad3d, ConstantPad1d, ConstantPad2d,  # noqa: F401
                   ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                   ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, CircularPad1d,
                   CircularPad2d, CircularPad3d)
