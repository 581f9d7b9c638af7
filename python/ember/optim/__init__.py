"""ember.optim: torch.optim's optimizers and learning-rate schedulers. The optimizers are Python
classes with PyTorch's param_groups, state and state_dict; each step runs in C++, one call per
parameter group."""
from . import lr_scheduler  # noqa: F401
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW, Adamax, NAdam, RAdam
from .rmsprop import RMSprop, Adagrad, Adadelta
from .lbfgs import LBFGS

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad",
           "Adadelta", "LBFGS", "lr_scheduler"]
