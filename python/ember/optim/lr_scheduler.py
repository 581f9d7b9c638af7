"""ember.optim.lr_scheduler: PyTorch 1.13's learning-rate schedulers, in Python.

They read and write `optimizer.param_groups` (dicts with 'lr', and 'momentum' or 'betas'), so they
drive any optimizer with PyTorch's layout, and give the same numbers as torch: each chainable
`get_lr` is torch's recursive formula with its operations in the same order, and a scheduler's
`__dict__` (hence `state_dict()`) has torch's keys.
"""
import functools
import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
# Names torch.optim.lr_scheduler's namespace also has (code annotates with
# lr_scheduler.Optimizer, compares with lr_scheduler.inf).
from functools import wraps  # noqa: F401
from math import inf  # noqa: F401

from .optimizer import Optimizer  # noqa: F401

__all__ = ['LambdaLR', 'MultiplicativeLR', 'StepLR', 'MultiStepLR', 'ConstantLR', 'LinearLR',
           'ExponentialLR', 'SequentialLR', 'CosineAnnealingLR', 'ChainedScheduler',
           'ReduceLROnPlateau', 'CyclicLR', 'CosineAnnealingWarmRestarts', 'OneCycleLR',
           'PolynomialLR']

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)
_GET_LAST_LR_WARNING = ("To get the last learning rate computed by the scheduler, "
                        "please use `get_last_lr()`.")


def _check_optimizer(optimizer):
    # Torch checks isinstance(optimizer, Optimizer); any object with torch's layout will do here.
    if not hasattr(optimizer, 'param_groups'):
        raise TypeError('{} is not an Optimizer'.format(type(optimizer).__name__))


def _per_group(name, optimizer, value):
    """`value` once per param group: a list or tuple of that length is kept, a scalar repeated."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError("expected {} values for {}, got {}".format(
                len(optimizer.param_groups), name, len(value)))
        return value
    return [value] * len(optimizer.param_groups)


# Note [Counting optimizer steps]
# Torch warns when lr_scheduler.step() comes before the first optimizer.step() (the schedule
# would then skip its first value). To see that, the first scheduler replaces the optimizer's
# `step` attribute by a wrapper that counts calls in optimizer._step_count. Torch's wrapper is a
# closure over a weak reference, which pickle and deepcopy cannot copy; _StepCounter is an object
# that pickles as "count the steps of this optimizer's function", so a pickled optimizer comes
# back with a working, counting step.
class _StepCounter:
    """optimizer.step, counting its calls in optimizer._step_count."""

    _with_counter = True

    def __init__(self, optimizer, func):
        # Weak, as torch's: the optimizer holding its own wrapper must not keep itself alive.
        self._optimizer = weakref.ref(optimizer)
        self._func = func
        functools.update_wrapper(self, func)

    def __call__(self, *args, **kwargs):
        optimizer = self._optimizer()
        optimizer._step_count += 1
        return self._func(optimizer, *args, **kwargs)

    def __reduce__(self):
        return _StepCounter, (self._optimizer(), self._func)


def _count_steps(optimizer):
    step = getattr(optimizer, 'step', None)
    if getattr(step, '_with_counter', False):
        return
    func = getattr(step, '__func__', None)
    if func is None or getattr(step, '__self__', None) is not optimizer:
        return  # not a Python method of this optimizer: nothing to wrap, no call-order warning
    try:
        optimizer.step = _StepCounter(optimizer, func)
    except (AttributeError, TypeError):
        pass  # an extension type without a __dict__ or weak references


class LRScheduler:
    """The base of the epoch-stepped schedulers: subclasses define get_lr()."""

    def __init__(self, optimizer, last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        # The first scheduler on an optimizer records each group's starting lr; later ones (and a
        # resumed run, last_epoch >= 0) start from it.
        if last_epoch == -1:
            for group in optimizer.param_groups:
                if 'initial_lr' not in group.keys():
                    group['initial_lr'] = group['lr']
        else:
            for i, group in enumerate(optimizer.param_groups):
                if 'initial_lr' not in group.keys():
                    raise KeyError("param 'initial_lr' is not specified "
                                   "in param_groups[{}] when resuming an optimizer".format(i))
        self.base_lrs = [group['initial_lr'] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        _count_steps(optimizer)
        self.verbose = verbose
        self._initial_step()

    def _initial_step(self):
        """Resets the step counts and takes the step to epoch 0."""
        try:
            self.optimizer._step_count = 0
        except AttributeError:
            pass  # an optimizer that takes no attributes cannot count its steps
        self._step_count = 0
        self.step()

    def state_dict(self):
        """The scheduler's state: every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != 'optimizer'}

    def load_state_dict(self, state_dict):
        """Restores a state from state_dict()."""
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates the last step() set, one per param group."""
        return self._last_lr

    def get_lr(self):
        """The learning rates of the current epoch (chainable form)."""
        raise NotImplementedError

    def print_lr(self, is_verbose, group, lr, epoch=None):
        """Prints the learning rate a step set, when verbose."""
        if is_verbose:
            if epoch is None:
                print('Adjusting learning rate of group {} to {:.4e}.'.format(group, lr))
            else:
                epoch_str = ("%.2f" if isinstance(epoch, float) else "%.5d") % epoch
                print('Epoch {}: adjusting learning rate of group {} to {:.4e}.'.format(
                    epoch_str, group, lr))

    def _warn_call_order(self):
        # On the second scheduler step, the optimizer should have stepped once (Note [Counting
        # optimizer steps]); an optimizer that cannot count (no _step_count) is not checked.
        if self._step_count != 1 or getattr(self.optimizer, '_step_count', None) is None:
            return
        if not hasattr(self.optimizer.step, '_with_counter'):
            warnings.warn("Seems like `optimizer.step()` has been overridden after learning rate "
                          "scheduler initialization. Please, make sure to call `optimizer.step()` "
                          "before `lr_scheduler.step()`. See more details at "
                          "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                          UserWarning)
        elif self.optimizer._step_count < 1:
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                          "In PyTorch 1.1.0 and later, you should call them in the opposite "
                          "order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do "
                          "this will result in PyTorch skipping the first value of the learning "
                          "rate schedule. See more details at "
                          "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                          UserWarning)

    def step(self, epoch=None):
        """Advances one epoch (or, deprecated, to `epoch` by the closed form) and sets the lrs."""
        self._warn_call_order()
        self._step_count += 1
        # get_lr() warns when called from outside step(): it would advance chainable state.
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
                self.last_epoch = epoch
                if hasattr(self, '_get_closed_form_lr'):
                    values = self._get_closed_form_lr()
                else:
                    values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for i, (group, lr) in enumerate(zip(self.optimizer.param_groups, values)):
            group['lr'] = lr
            self.print_lr(self.verbose, i, lr, epoch)
        self._last_lr = [group['lr'] for group in self.optimizer.param_groups]

    def _warn_outside_step(self):
        if not self._get_lr_called_within_step:
            warnings.warn(_GET_LAST_LR_WARNING, UserWarning)

    def _group_lrs(self, factor=None):
        if factor is None:
            return [group['lr'] for group in self.optimizer.param_groups]
        return [group['lr'] * factor for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler


class _LambdaScheduler(LRScheduler):
    """LambdaLR and MultiplicativeLR: one function of the epoch per param group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False):
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError("Expected {} lr_lambdas, but got {}".format(
                    len(optimizer.param_groups), len(lr_lambda)))
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch, verbose)

    def state_dict(self):
        """The scheduler's state; a lambda's attributes are kept only when it is a callable
        object (plain functions and lambdas cannot be restored)."""
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ('optimizer', 'lr_lambdas')}
        state['lr_lambdas'] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        """Restores a state from state_dict(), updating callable-object lambdas in place."""
        state = dict(state_dict)
        lr_lambdas = state.pop('lr_lambdas')
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaScheduler):
    """lr = initial_lr * lr_lambda(epoch), per param group."""

    def get_lr(self):
        """The learning rates of the current epoch."""
        self._warn_outside_step()
        return [base_lr * fn(self.last_epoch)
                for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """Multiplies each group's lr by lr_lambda(epoch) every epoch after the first."""

    def get_lr(self):
        """The learning rates of the current epoch."""
        self._warn_outside_step()
        if self.last_epoch > 0:
            return [group['lr'] * fn(self.last_epoch)
                    for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]
        return self._group_lrs()


class StepLR(LRScheduler):
    """Multiplies the lr by gamma every step_size epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose=False):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        """The learning rates of the current epoch."""
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return self._group_lrs(self.gamma)

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiplies the lr by gamma at each milestone epoch (a repeated milestone, once per copy)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1, verbose=False):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        """The learning rates of the current epoch."""
        self._warn_outside_step()
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        return self._group_lrs(self.gamma ** self.milestones[self.last_epoch])

    def load_state_dict(self, state_dict):
        """Restores a state from state_dict()."""
        super().load_state_dict(state_dict)
        # ember.save keeps plain values as JSON, which turns the Counter's epochs into strings:
        # no epoch would then match a milestone.
        self.milestones = Counter({int(k): v for k, v in self.milestones.items()})

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr = initial_lr * factor for the first total_iters epochs, then initial_lr."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1, verbose=False):
        if factor > 1.0 or factor < 0:
            raise ValueError('Constant multiplicative factor expected to be between 0 and 1.')
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        """The learning rates of the current epoch."""
        self._warn_outside_step()
        if self.last_epoch == 0:
            return self._group_lrs(self.factor)
        if self.last_epoch != self.total_iters:
            return self._group_lrs()
        return self._group_lrs(1.0 / self.factor)

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scales the lr linearly from start_factor to end_factor over total_iters epochs."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1, verbose=False):
        if start_factor > 1.0 or start_factor < 0:
            raise ValueError('Starting multiplicative factor expected to be between 0 and 1.')
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError('Ending multiplicative factor expected to be between 0 and 1.')
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        """The learning rates of the current epoch."""
        self._warn_outside_step()
        if self.last_epoch == 0:
            return self._group_lrs(self.start_factor)
        if self.last_epoch > self.total_iters:
            return self._group_lrs()
        # The ratio of this epoch's factor to the last one's.
        delta = self.end_factor - self.start_factor
        return self._group_lrs(1. + delta / (self.total_iters * self.start_factor
                                             + (self.last_epoch - 1) * delta))

    def _get_closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies the lr by gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1, verbose=False):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        """The learning rates of the current epoch."""
        self._warn_outside_step()
        if self.last_epoch == 0:
            return self._group_lrs()
        return self._group_lrs(self.gamma)

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class _SchedulerList(LRScheduler):
    """SequentialLR and ChainedScheduler: their state holds each wrapped scheduler's state."""

    def state_dict(self):
        """The state, with each wrapped scheduler's state_dict() under '_schedulers'."""
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ('optimizer', '_schedulers')}
        state['_schedulers'] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        """Restores a state from state_dict(), the wrapped schedulers' too."""
        state = dict(state_dict)
        saved = state.pop('_schedulers')
        self.__dict__.update(state)
        for scheduler, s in zip(self._schedulers, saved):
            scheduler.load_state_dict(s)


class SequentialLR(_SchedulerList):
    """Runs schedulers[i] from milestones[i-1] on, restarting each at its milestone."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1, verbose=False):
        for i, scheduler in enumerate(schedulers):
            if scheduler.optimizer != optimizer:
                raise ValueError(
                    "Sequential Schedulers expects all schedulers to belong to the same "
                    f"optimizer, but got schedulers at index {i} to be different than the "
                    "optimizer passed in.")
            if scheduler.optimizer != schedulers[0].optimizer:
                raise ValueError(
                    "Sequential Schedulers expects all schedulers to belong to the same "
                    f"optimizer, but got schedulers at index 0 and {i} to be different.")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                "than the number of milestone points, but got number of schedulers {} and the "
                "number of milestones to be equal to {}".format(len(schedulers), len(milestones)))
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Each scheduler stepped to epoch 0 when made: undo that, and start the first alone.
        for group in optimizer.param_groups:
            group['lr'] = group['initial_lr']
        for scheduler in schedulers:
            scheduler.last_epoch -= 1
        schedulers[0]._initial_step()
        self._last_lr = schedulers[0].get_last_lr()

    def step(self):
        """Steps the scheduler of the current epoch (to epoch 0 at its milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler.step(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - epoch / total_iters) ** power, then 0 from total_iters on."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1, verbose=False):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        """The learning rates of the current epoch."""
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch > self.total_iters:
            return self._group_lrs()
        decay = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return self._group_lrs(decay)

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneals the lr from initial_lr to eta_min along a half cosine of period T_max (SGDR)."""

    def __init__(self, optimizer, T_max, eta_min=0, last_epoch=-1, verbose=False):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        """The learning rates of the current epoch."""
        self._warn_outside_step()
        if self.last_epoch == 0:
            return self._group_lrs()
        if self._step_count == 1 and self.last_epoch > 0:
            # Resumed (last_epoch given): no previous lr to recur from.
            return [self.eta_min + (base_lr - self.eta_min)
                    * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base_lr in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            # At the bottom of the cosine the ratio below is 0/0: step up by the first increment.
            return [group['lr']
                    + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, self.optimizer.param_groups)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group['lr'] - self.eta_min) + self.eta_min
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class ChainedScheduler(_SchedulerList):
    """Steps every scheduler of a list at each step (their factors multiply)."""

    def __init__(self, schedulers):
        for i in range(1, len(schedulers)):
            if schedulers[i].optimizer != schedulers[0].optimizer:
                raise ValueError(
                    "ChainedScheduler expects all schedulers to belong to the same optimizer, but "
                    "got schedulers at index {} and {} to be different".format(0, i))
        self._schedulers = list(schedulers)
        self.optimizer = schedulers[0].optimizer
        self._last_lr = [group['lr'] for group in self._schedulers[-1].optimizer.param_groups]

    def step(self):
        """Steps each scheduler in turn."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group['lr'] for group in self._schedulers[-1].optimizer.param_groups]


class ReduceLROnPlateau:
    """Multiplies the lr by factor when a metric has not improved for `patience` epochs."""

    def __init__(self, optimizer, mode='min', factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode='rel', cooldown=0, min_lr=0, eps=1e-8, verbose=False):
        if factor >= 1.0:
            raise ValueError('Factor should be < 1.0.')
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError("expected {} min_lrs, got {}".format(
                    len(optimizer.param_groups), len(min_lr)))
            self.min_lrs = list(min_lr)
        else:
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.best = None
        self.num_bad_epochs = None
        self.mode_worse = None  # the worst value in `mode`: the best before any metric
        self.eps = eps
        self.last_epoch = 0
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Records one epoch's metric (a number or 0-dim tensor) and reduces the lr if due."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group['lr'] for group in self.optimizer.param_groups]

    def get_last_lr(self):
        """The learning rates after the last step(), one per param group."""
        return self._last_lr

    def _reduce_lr(self, epoch):
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group['lr'])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                group['lr'] = new_lr
                if self.verbose:
                    epoch_str = ("%.2f" if isinstance(epoch, float) else "%.5d") % epoch
                    print('Epoch {}: reducing learning rate of group {} to {:.4e}.'.format(
                        epoch_str, i, new_lr))

    @property
    def in_cooldown(self):
        """Whether the epochs after a reduction are still being skipped."""
        return self.cooldown_counter > 0

    def is_better(self, a, best):
        """Whether metric `a` improves on `best` by more than the threshold."""
        if self.mode == 'min' and self.threshold_mode == 'rel':
            return a < best * (1. - self.threshold)
        if self.mode == 'min' and self.threshold_mode == 'abs':
            return a < best - self.threshold
        if self.mode == 'max' and self.threshold_mode == 'rel':
            return a > best * (self.threshold + 1.)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in {'min', 'max'}:
            raise ValueError('mode ' + mode + ' is unknown!')
        if threshold_mode not in {'rel', 'abs'}:
            raise ValueError('threshold mode ' + threshold_mode + ' is unknown!')
        self.mode_worse = math.inf if mode == 'min' else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def state_dict(self):
        """The scheduler's state: every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != 'optimizer'}

    def load_state_dict(self, state_dict):
        """Restores a state from state_dict()."""
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)


class CyclicLR(LRScheduler):
    """Cycles the lr between base_lr and max_lr (and momentum inversely), stepped per batch."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode='triangular', gamma=1., scale_fn=None, scale_mode='cycle',
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1,
                 verbose=False):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group('base_lr', optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group['lr'] = lr
        self.max_lrs = _per_group('max_lr', optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ['triangular', 'triangular2', 'exp_range'] and scale_fn is None:
            raise ValueError('mode is invalid and scale_fn is None')
        self.mode = mode
        self.gamma = gamma
        # Torch 1.13 also keeps a weakref.WeakMethod to the built-in scale function, which made
        # state_dict() unpicklable (fixed in torch 2.0 by leaving it out, as here): the built-in
        # one is chosen by `mode` at each call instead.
        self._scale_fn_custom = scale_fn
        if scale_fn is None:
            self.scale_mode = 'iterations' if mode == 'exp_range' else 'cycle'
        else:
            self.scale_mode = scale_mode
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if 'momentum' not in optimizer.defaults:
                raise ValueError('optimizer must support momentum with `cycle_momentum` option '
                                 'enabled')
            base_momentums = _per_group('base_momentum', optimizer, base_momentum)
            if last_epoch == -1:
                for momentum, group in zip(base_momentums, optimizer.param_groups):
                    group['momentum'] = momentum
            self.base_momentums = [group['momentum'] for group in optimizer.param_groups]
            self.max_momentums = _per_group('max_momentum', optimizer, max_momentum)
        super().__init__(optimizer, last_epoch, verbose)
        self.base_lrs = base_lrs

    def _format_param(self, name, optimizer, param):
        """`param` once per param group."""
        return _per_group(name, optimizer, param)

    def scale_fn(self, x):
        """The amplitude scale at cycle (or iteration) x."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == 'triangular':
            return self._triangular_scale_fn(x)
        if self.mode == 'triangular2':
            return self._triangular2_scale_fn(x)
        return self._exp_range_scale_fn(x)

    def _triangular_scale_fn(self, x):
        return 1.

    def _triangular2_scale_fn(self, x):
        return 1 / (2. ** (x - 1))

    def _exp_range_scale_fn(self, x):
        return self.gamma ** x

    def get_lr(self):
        """The learning rates at batch last_epoch; sets the momentums too when cycling them."""
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1. + self.last_epoch / self.total_size - cycle  # position in the cycle, in [0, 1)
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        # A custom scale_fn is called once per group and value, as torch calls it.
        at = cycle if self.scale_mode == 'cycle' else self.last_epoch
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * self.scale_fn(at)
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            momentums = [max_m - (max_m - base_m) * scale_factor * self.scale_fn(at)
                         for base_m, max_m in zip(self.base_momentums, self.max_momentums)]
            for group, momentum in zip(self.optimizer.param_groups, momentums):
                group['momentum'] = momentum
        return lrs

    def state_dict(self):
        """The scheduler's state: every attribute but the optimizer."""
        state = super().state_dict()
        state.pop('_scale_fn_ref', None)
        return state

    def load_state_dict(self, state_dict):
        """Restores a state from state_dict() (a torch 1.13 one's `_scale_fn_ref` is ignored)."""
        state = dict(state_dict)
        state.pop('_scale_fn_ref', None)
        super().load_state_dict(state)


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every T_i epochs, T_i growing by T_mult (SGDR); the epoch
    may be fractional."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0, last_epoch=-1, verbose=False):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError("Expected positive integer T_0, but got {}".format(T_0))
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError("Expected integer T_mult >= 1, but got {}".format(T_mult))
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        """The learning rates at T_cur epochs into the current period."""
        self._warn_outside_step()
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        """Advances one epoch, or goes to `epoch` (fractional allowed, e.g. epoch + i / iters)."""
        # As torch's, this step neither counts steps nor warns about `epoch`.
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur - self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError("Expected non-negative epoch, but got {}".format(epoch))
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    # The number of restarts n solves T_0 * (T_mult**n - 1) / (T_mult - 1) <= epoch.
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            for i, (group, lr) in enumerate(zip(self.optimizer.param_groups, self.get_lr())):
                group['lr'] = lr
                self.print_lr(self.verbose, i, lr, epoch)
        finally:
            self._get_lr_called_within_step = False
        self._last_lr = [group['lr'] for group in self.optimizer.param_groups]


def _annealing_cos(start, end, pct):
    cos_out = math.cos(math.pi * pct) + 1
    return end + (start - end) / 2.0 * cos_out


def _annealing_linear(start, end, pct):
    return (end - start) * pct + start


class OneCycleLR(LRScheduler):
    """The 1cycle policy: lr up from max_lr/div_factor to max_lr, then down far below it
    (momentum inversely), stepped per batch for total_steps batches."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy='cos', cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25., final_div_factor=1e4, three_phase=False,
                 last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is None and epochs is None and steps_per_epoch is None:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError("Expected positive integer total_steps, but got {}".format(
                    total_steps))
            self.total_steps = total_steps
        else:
            if epochs <= 0 or not isinstance(epochs, int):
                raise ValueError("Expected positive integer epochs, but got {}".format(epochs))
            if steps_per_epoch <= 0 or not isinstance(steps_per_epoch, int):
                raise ValueError("Expected positive integer steps_per_epoch, but got {}".format(
                    steps_per_epoch))
            self.total_steps = epochs * steps_per_epoch

        def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
            return {'end_step': end_step, 'start_lr': start_lr, 'end_lr': end_lr,
                    'start_momentum': start_momentum, 'end_momentum': end_momentum}

        warmup_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                phase(warmup_end, 'initial_lr', 'max_lr', 'max_momentum', 'base_momentum'),
                phase(float(2 * pct_start * self.total_steps) - 2, 'max_lr', 'initial_lr',
                      'base_momentum', 'max_momentum'),
                phase(self.total_steps - 1, 'initial_lr', 'min_lr', 'max_momentum',
                      'max_momentum'),
            ]
        else:
            self._schedule_phases = [
                phase(warmup_end, 'initial_lr', 'max_lr', 'max_momentum', 'base_momentum'),
                phase(self.total_steps - 1, 'max_lr', 'min_lr', 'base_momentum', 'max_momentum'),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError("Expected float between 0 and 1 pct_start, but got {}".format(
                pct_start))
        if anneal_strategy not in ['cos', 'linear']:
            raise ValueError("anneal_strategy must by one of 'cos' or 'linear', instead got "
                             "{}".format(anneal_strategy))
        # A module function, not torch's bound method: the state_dict then pickles by name
        # instead of dragging the scheduler and its optimizer along.
        self.anneal_func = _annealing_cos if anneal_strategy == 'cos' else _annealing_linear

        max_lrs = _per_group('max_lr', optimizer, max_lr)
        if last_epoch == -1:
            for group, group_max_lr in zip(optimizer.param_groups, max_lrs):
                group['initial_lr'] = group_max_lr / div_factor
                group['max_lr'] = group_max_lr
                group['min_lr'] = group['initial_lr'] / final_div_factor

        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if 'momentum' not in optimizer.defaults and 'betas' not in optimizer.defaults:
                raise ValueError('optimizer must support momentum with `cycle_momentum` option '
                                 'enabled')
            self.use_beta1 = 'betas' in optimizer.defaults
            max_momentums = _per_group('max_momentum', optimizer, max_momentum)
            base_momentums = _per_group('base_momentum', optimizer, base_momentum)
            if last_epoch == -1:
                for max_m, base_m, group in zip(max_momentums, base_momentums,
                                                optimizer.param_groups):
                    self._set_momentum(group, max_m)
                    group['max_momentum'] = max_m
                    group['base_momentum'] = base_m
        super().__init__(optimizer, last_epoch, verbose)

    def _format_param(self, name, optimizer, param):
        """`param` once per param group."""
        return _per_group(name, optimizer, param)

    def _annealing_cos(self, start, end, pct):
        """Cosine anneal from start to end as pct goes from 0 to 1."""
        return _annealing_cos(start, end, pct)

    def _annealing_linear(self, start, end, pct):
        """Linear anneal from start to end as pct goes from 0 to 1."""
        return _annealing_linear(start, end, pct)

    def _set_momentum(self, group, momentum):
        if self.use_beta1:
            group['betas'] = (momentum, *group['betas'][1:])
        else:
            group['momentum'] = momentum

    def get_lr(self):
        """The learning rates at batch last_epoch; sets the momentums too when cycling them."""
        self._warn_outside_step()
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError("Tried to step {} times. The specified number of total steps is {}"
                             .format(step_num + 1, self.total_steps))
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase['end_step']
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self.anneal_func(group[phase['start_lr']], group[phase['end_lr']], pct)
                    if self.cycle_momentum:
                        momentum = self.anneal_func(group[phase['start_momentum']],
                                                    group[phase['end_momentum']], pct)
                    break
                start_step = phase['end_step']
            lrs.append(lr)
            if self.cycle_momentum:
                self._set_momentum(group, momentum)
        return lrs
