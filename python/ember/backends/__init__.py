"""ember.backends: switches of the compute libraries (torch.backends' names)."""
from . import cuda  # noqa: F401
