"""ember.optim: optimizers (SGD, Adam, AdamW) and lr_scheduler."""
from .. import _C
from . import lr_scheduler  # noqa: F401

Optimizer, SGD, Adam, AdamW = _C._optim.Optimizer, _C._optim.SGD, _C._optim.Adam, _C._optim.AdamW
