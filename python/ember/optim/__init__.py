"""ember.optim: torch.optim's optimizers and learning-rate schedulers. The optimizers are Python
classes with PyTorch's param_groups, state and state_dict; SGD, the Adam family, RMSprop, Adagrad
and Adadelta step in C++, one call per parameter group; ASGD, Rprop and Adafactor run PyTorch's
update in Python over ember's ops."""
from . import lr_scheduler, swa_utils  # noqa: F401
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW, Adamax, NAdam, RAdam
from .rmsprop import RMSprop, Adagrad, Adadelta
from .asgd import ASGD
from .rprop import Rprop
from .adafactor import Adafactor
from .sparse_adam import SparseAdam
from .lbfgs import LBFGS

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad",
           "Adadelta", "ASGD", "Rprop", "Adafactor", "SparseAdam", "LBFGS", "lr_scheduler",
           "swa_utils"]
