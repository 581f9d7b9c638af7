"""ember.cuda.amp: torch.cuda.amp.autocast (float16 by default) and GradScaler."""
from .. import amp as _amp
from .. import float16
from ..amp import _device_autocast

autocast = _device_autocast("cuda", float16)


class GradScaler(_amp.GradScaler):
    """torch.cuda.amp.GradScaler: torch.amp.GradScaler("cuda", ...) with the 1.x signature."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
