"""torch.distributed.fsdp.wrap: which submodules become FSDP units of their own. A policy is
called as policy(module=, recurse=, nonwrapped_numel=): with recurse=True it says whether to look
inside the module, with recurse=False whether to wrap it (nonwrapped_numel: its parameters not yet
in a unit below it)."""
import contextlib

from ... import nn


def always_wrap_policy(*args, **kwargs):
    return True


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    return True if recurse else bool(lambda_fn(module))


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8),
                                force_leaf_modules=None, exclude_wrap_modules=None):
    force_leaf = (size_based_auto_wrap_policy.FORCE_LEAF_MODULES
                  if force_leaf_modules is None else force_leaf_modules)
    exclude = (size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES
               if exclude_wrap_modules is None else exclude_wrap_modules)
    large = nonwrapped_numel >= min_num_params
    if recurse:
        return large and not isinstance(module, tuple(force_leaf))
    return large and not isinstance(module, tuple(exclude))


size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {nn.ModuleList, nn.ModuleDict}
size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {nn.MultiheadAttention}


def _or_policy(module, recurse, nonwrapped_numel, policies):
    return any(p(module=module, recurse=recurse, nonwrapped_numel=nonwrapped_numel)
               for p in policies)


class ModuleWrapPolicy:
    """Wraps every module of the given classes."""

    def __init__(self, module_classes):
        self._module_classes = tuple(set(module_classes))

    def __call__(self, module, recurse, *args, **kwargs):
        return True if recurse else isinstance(module, self._module_classes)


class CustomPolicy:
    """Wraps the modules for which lambda_fn(module) is true (a dict: true, with those options)."""

    def __init__(self, lambda_fn):
        self._lambda_fn = lambda_fn

    def __call__(self, module, recurse, *args, **kwargs):
        return True if recurse else bool(self._lambda_fn(module))


def _flat_numel(module, ignored):
    return sum(p.numel() for name, p in module.named_parameters()
               if id(p) not in ignored and not name.rpartition(".")[2].startswith("_flat_param"))


def _recursive_wrap(module, auto_wrap_policy, wrap_fn, ignored_modules=(), ignored_params=(),
                    only_wrap_children=False):
    """PyTorch's order: children first, each replaced in its parent by its unit; then the module
    itself if the policy wants its remaining parameters in a unit of their own. Returns the
    (possibly wrapped) module and how many parameters were wrapped."""
    if any(module is m for m in ignored_modules):
        return module, 0
    ignored = {id(p) for p in ignored_params}
    numel = _flat_numel(module, ignored)
    if not auto_wrap_policy(module=module, recurse=True, nonwrapped_numel=numel):
        return module, 0
    wrapped = 0
    for name, child in list(module.named_children()):
        if any(child is m for m in ignored_modules):
            continue
        new_child, n = _recursive_wrap(child, auto_wrap_policy, wrap_fn, ignored_modules,
                                       ignored_params)
        if new_child is not child:
            setattr(module, name, new_child)
        wrapped += n
    if not only_wrap_children and auto_wrap_policy(module=module, recurse=False,
                                                   nonwrapped_numel=numel - wrapped):
        return wrap_fn(module), numel
    return module, wrapped


class _ConfigAutoWrap:
    in_autowrap_context = False
    wrapper_cls = None
    kwargs = {}


@contextlib.contextmanager
def enable_wrap(*, wrapper_cls, **wrapper_kwargs):
    """Inside it, wrap(module) wraps with wrapper_cls and these arguments."""
    previous = (_ConfigAutoWrap.in_autowrap_context, _ConfigAutoWrap.wrapper_cls,
                _ConfigAutoWrap.kwargs)
    _ConfigAutoWrap.in_autowrap_context = True
    _ConfigAutoWrap.wrapper_cls, _ConfigAutoWrap.kwargs = wrapper_cls, wrapper_kwargs
    try:
        yield
    finally:
        (_ConfigAutoWrap.in_autowrap_context, _ConfigAutoWrap.wrapper_cls,
         _ConfigAutoWrap.kwargs) = previous


def wrap(module, **wrap_overrides):
    """module as a unit of its own inside enable_wrap (else unchanged)."""
    if not _ConfigAutoWrap.in_autowrap_context:
        return module
    return _ConfigAutoWrap.wrapper_cls(module, **{**_ConfigAutoWrap.kwargs, **wrap_overrides})


__all__ = ["always_wrap_policy", "lambda_auto_wrap_policy", "transformer_auto_wrap_policy",
           "size_based_auto_wrap_policy", "ModuleWrapPolicy", "CustomPolicy", "enable_wrap", "wrap"]
