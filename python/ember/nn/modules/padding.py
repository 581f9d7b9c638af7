"""torch.nn.modules.padding's names (defined in misc.py)."""
from .misc import ZeroPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d, ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, CircularPad1d, CircularPad2d  # noqa: F401
