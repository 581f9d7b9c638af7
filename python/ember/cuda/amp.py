"""ember.cuda.amp: torch.cuda.amp.autocast (float16 by default) and GradScaler."""
from .. import float16
from ..amp import GradScaler, _device_autocast  # noqa: F401

autocast = _device_autocast("cuda", float16)
