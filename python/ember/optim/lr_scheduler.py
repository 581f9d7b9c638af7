"""ember.optim.lr_scheduler: learning-rate schedules stepped once per epoch."""
from .. import _C

LRScheduler, StepLR, CosineAnnealingLR = (_C._optim.LRScheduler, _C._optim.StepLR,
                                          _C._optim.CosineAnnealingLR)
