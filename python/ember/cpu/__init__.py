"""ember.cpu: torch.cpu's names (ember.cpu.amp.autocast)."""
from . import amp, memory  # noqa: F401
