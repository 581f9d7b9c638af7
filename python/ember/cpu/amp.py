"""ember.cpu.amp: torch.cpu.amp.autocast (bfloat16 by default)."""
from .. import bfloat16
from ..amp import _device_autocast

autocast = _device_autocast("cpu", bfloat16)
