"""torch.optim.swa_utils: stochastic weight averaging (https://arxiv.org/abs/1803.05407) and
exponential moving averages of a model - AveragedModel, update_bn, SWALR, and PyTorch 2.x's
averaging functions get_ema_avg_fn / get_swa_avg_fn and their multi-tensor forms.

AveragedModel keeps PyTorch 1.13's behaviour when use_buffers=False: the copy's buffers are left
as they were copied (PyTorch 2.x also copies the source model's buffers at each update); call
update_bn for batch-norm statistics that match the averaged weights."""
import itertools
import math
import warnings
from copy import deepcopy

from .. import _C
from .. import tensor, ones_like, zeros_like
from ..autograd import no_grad
from ..nn.modules.module import Module
from ..nn.utils._native import layer_option
from .lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay=0.999):
    """An averaging function for AveragedModel(multi_avg_fn=): ema <- ema + (1 - decay) *
    (current - ema) over lists of tensors, in place."""
    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """An averaging function for AveragedModel(multi_avg_fn=): the running mean of the
    models averaged so far, over lists of tensors, in place. The lerp weight 1 / (n + 1) is a
    Python float (exact in the tensors' dtype). Integer tensors (a batch norm's
    num_batches_tracked, with use_buffers=True), which PyTorch 2.x's integer addcdiv_ refuses,
    are averaged as get_swa_avg_fn does and truncated back into the tensor."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
                weight = 1.0 / (float(num_averaged) + 1)
                for p_avg, p_model in zip(averaged_param_list, current_param_list):
                    p_avg.lerp_(p_model, weight)
            else:
                for p_avg, p_model in zip(averaged_param_list, current_param_list):
                    p_avg.copy_(p_avg + (p_model - p_avg) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An averaging function for AveragedModel(avg_fn=): decay * ema + (1 - decay) * current."""
    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """An averaging function for AveragedModel(avg_fn=): the running mean."""
    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of `model` (on `device`, if given) whose parameters (and buffers, with
    use_buffers=True) update_parameters(model) averages: by avg_fn(averaged, current,
    num_averaged) per tensor, or multi_avg_fn(averaged_list, current_list, num_averaged) per
    device and dtype, or (neither) as the equal-weight running mean. Calling it calls the copy."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        assert avg_fn is None or multi_avg_fn is None, \
            "Only one of avg_fn and multi_avg_fn should be provided"
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer('n_averaged', tensor(0, dtype=_C.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        self_param = (itertools.chain(self.module.parameters(), self.module.buffers())
                      if self.use_buffers else self.parameters())
        model_param = (itertools.chain(model.parameters(), model.buffers())
                       if self.use_buffers else model.parameters())
        self_param_detached = []
        model_param_detached = []
        first = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            self_param_detached.append(p_averaged.detach())
            model_param_detached.append(p_model_)
            if first:
                p_averaged.detach().copy_(p_model_)

        if not first:
            if self.multi_avg_fn is not None:
                groups = {}
                for p_avg, p_model in zip(self_param_detached, model_param_detached):
                    key = (str(p_avg.device), p_avg.dtype)
                    avgs, models = groups.setdefault(key, ([], []))
                    avgs.append(p_avg)
                    models.append(p_model)
                for avgs, models in groups.values():
                    self.multi_avg_fn(avgs, models, self.n_averaged.to(avgs[0].device))
            else:
                avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                for p_avg, p_model in zip(self_param_detached, model_param_detached):
                    n_averaged = self.n_averaged.to(p_avg.device)
                    p_avg.detach().copy_(avg_fn(p_avg.detach(), p_model, n_averaged))
        self.n_averaged += 1


def _batch_norms(model):
    from ..nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm
    kinds = (BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm)
    return [m for m in model.modules()
            if isinstance(m, kinds) and getattr(m, "running_mean", None) is not None]


def update_bn(loader, model, device=None):
    """Recomputes the running mean and variance of every batch norm in `model` as the equal-weight
    average of their values over one pass through `loader` (batches are tensors, or lists and
    tuples whose first element is the input; moved to `device` if given).

    PyTorch sets each batch norm's momentum to None (cumulative averaging) for the pass. ember's
    C++ batch norms keep their momentum fixed, so the same average is computed from each batch's
    update instead: after batch n, with momentum m, the batch statistic is recovered as
    b = prev + (running - prev) / m and the running value set to (1 - 1/n) * prev + b / n,
    PyTorch's cumulative update (to rounding: the recovery scales the rounding of the running
    value by 1/m). A batch norm with momentum 0 learns nothing from a batch and is refused."""
    momenta = {}
    with no_grad():
        for module in _batch_norms(model):
            module.running_mean = zeros_like(module.running_mean)
            module.running_var = ones_like(module.running_var)
            momenta[module] = layer_option(module, "momentum")
            if momenta[module] == 0:
                raise ValueError("update_bn: a batch norm with momentum=0 never updates its "
                                 "running statistics, so ember cannot average them")
        if not momenta:
            return

        was_training = model.training
        model.train()
        for module in momenta.keys():
            module.num_batches_tracked *= 0

        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            before = {m: (m.running_mean.clone(), m.running_var.clone(),
                          int(m.num_batches_tracked)) for m in momenta}
            model(input)
            for m, (mean, var, count) in before.items():
                n = int(m.num_batches_tracked)
                if n == count or momenta[m] is None:
                    continue  # not called on this batch, or already a cumulative average
                for running, prev in ((m.running_mean, mean), (m.running_var, var)):
                    batch = prev + (running - prev) / momenta[m]
                    running.copy_(batch * (1.0 / n) + prev * (1 - 1.0 / n))
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate to swa_lr (a value, or one per group) over
    anneal_epochs epochs, by cosine ("cos") or linear ("linear") annealing, then keeps it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy='cos', last_epoch=-1,
                 verbose=False):
        swa_lrs = self._format_param(optimizer, swa_lr)
        for swa_lr, group in zip(swa_lrs, optimizer.param_groups):
            group['swa_lr'] = swa_lr
        if anneal_strategy not in ['cos', 'linear']:
            raise ValueError("anneal_strategy must by one of 'cos' or 'linear', "
                             f"instead got {anneal_strategy}")
        elif anneal_strategy == 'cos':
            self.anneal_func = self._cosine_anneal
        elif anneal_strategy == 'linear':
            self.anneal_func = self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch, verbose)

    @staticmethod
    def _format_param(optimizer, swa_lrs):
        if isinstance(swa_lrs, (list, tuple)):
            if len(swa_lrs) != len(optimizer.param_groups):
                raise ValueError("swa_lr must have the same length as "
                                 f"optimizer.param_groups: swa_lr has {len(swa_lrs)}, "
                                 f"optimizer.param_groups has {len(optimizer.param_groups)}")
            return swa_lrs
        else:
            return [swa_lrs] * len(optimizer.param_groups)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, "
                          "please use `get_last_lr()`.", UserWarning)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # The lr the previous step would have started from, recovered from the current lr.
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group['lr'], group['swa_lr'], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group['swa_lr'] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs)]
