"""torch.nn.utils.parametrize: a parameter or buffer computed from other tensors on each access.

As PyTorch, registering a parametrization on `module.weight` moves the tensor to
`module.parametrizations.weight.original` (a ParametrizationList, whose modules compute the
weight), changes the module's class to a subclass "Parametrized<Class>" with a `weight` property,
and restores the class when the last parametrization is removed.

ember's differences (Note [Reparametrizing ember's C++ layers] in _native.py): the emptied slot of
the tensor stays registered (invisible to named_parameters and state_dict); the class made here has
`__slots__ = ()` so that one of ember's C++ layers (whose instances pybind11 lays out) may take it;
and for such a layer, whose C++ forward reads its slots, the class's forward puts the parametrized
values in the slots for the duration of the call.
"""
import collections
from contextlib import contextmanager
from copy import deepcopy

from ... import _C
from ...autograd import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter
from . import _native

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Within the block, each parametrized tensor is computed once, on first access, and reused
    (a weight used several times in a forward, an RNN's recurrent kernel)."""
    global _cache
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, X):
    if isinstance(X, Parameter):
        module.register_parameter(name, X)
    else:
        module.register_buffer(name, X)


def _set_original(original, value):
    """PyTorch's `original.set_(value)`: the original tensor takes value's data (and shape)
    while staying the same tensor, so an optimizer that holds it keeps working."""
    original.data = value


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor (module.parametrizations[name]) and the tensor(s) they
    start from: `original`, or `original0`, `original1`, ... when the first parametrization's
    right_inverse returns several tensors. Made by register_parametrization only."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe

        # module.weight must keep its dtype and shape: right_inverse (the identity where a
        # parametrization has none or raises NotImplementedError) maps it to the original(s),
        # and the parametrizations must map those back to the same dtype and shape.
        original_shape = original.shape
        original_dtype = original.dtype
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass

        if not isinstance(new, _C.Tensor) and not isinstance(new, collections.abc.Sequence):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")

        self.is_tensor = isinstance(new, _C.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)

        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}"
                )
            # The original tensor itself becomes `original`, so that the user does not need to
            # give the optimizer a new parameter.
            with no_grad():
                _set_original(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, _C.Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     "tensors (list, tuple...). "
                                     f"Got element {i} of the sequence with type "
                                     f"{type(originali).__name__}.")
                # New parameters: the user adds them to the optimizer (as documented).
                if isinstance(original, Parameter):
                    originali = Parameter(originali)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)

        if not self.unsafe:
            Z = self()
            if not isinstance(Z, _C.Tensor):
                raise ValueError(
                    f"A parametrization must return a tensor. Got {type(Z).__name__}."
                )
            if Z.dtype != original_dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {original_dtype}\n"
                    f"parametrized dtype: {Z.dtype}"
                )
            if Z.shape != original_shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {original_shape}\n"
                    f"parametrized shape: {Z.shape}"
                )

    def right_inverse(self, value):
        """Runs the parametrizations' right_inverse in reverse order of registration and stores
        the result in `original` (or `original0`, `original1`, ...): what assigning to the
        parametrized attribute does."""
        with no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
            if self.is_tensor:
                if not isinstance(value, _C.Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                        f"while `original` has dtype {self.original.dtype}"
                    )
                _set_original(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors. "
                        f"Got {type(value).__name__}."
                    )
                if len(value) != self.ntensors:
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors of length "
                        f"{self.ntensors}. Got a sequence of lenght {len(value)}."
                    )
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, _C.Tensor):
                        raise ValueError(
                            f"`right_inverse` must return a sequence of tensors. "
                            f"Got element {i} of type {type(tensor).__name__}"
                        )
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(
                            f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                            f"while `original{i}` has dtype {original_i.dtype}"
                        )
                    _set_original(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            originals = (getattr(self, f"original{i}") for i in range(self.ntensors))
            x = self[0](*originals)
        # The later parametrizations, by index (the list may hold other, non-integer keys).
        curr_idx = 1
        while hasattr(self, str(curr_idx)):
            x = self[curr_idx](x)
            curr_idx += 1
        return x


def _serialization_error(*args):
    raise RuntimeError(
        "Serialization of parametrized modules is only "
        "supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training"
    )


def _deepcopy(self, memo):
    """A deep copy of a parametrized module, of the same parametrized class. ember copies a
    module through Module.__reduce_ex__, which this class refuses (as PyTorch refuses to pickle
    a parametrized module), so the copy is made as the class before parametrization."""
    replica = memo.get(id(self))
    if replica is not None:
        return replica
    cls = type(self)
    self.__class__ = cls.__bases__[0]
    try:
        replica = deepcopy(self, memo)
    finally:
        self.__class__ = cls
    # One of ember's C++ layers is copied by calling its constructor, which fills the emptied
    # slots again.
    for name in self.parametrizations:
        if getattr(replica, name, None) is not None:
            delattr(replica, name)
    replica.__class__ = cls
    return replica


def _setattr(self, name, value):
    """Assigning to a parametrized attribute runs right_inverse (the property's setter), as
    PyTorch's Module.__setattr__ lets a plain tensor through to it; a Parameter is refused as
    PyTorch's register_parameter refuses an existing attribute."""
    if isinstance(type(self).__dict__.get(name), property):
        if isinstance(value, Parameter):
            raise KeyError(f"attribute '{name}' already exists")
        object.__setattr__(self, name, value)
    else:
        type(self).__bases__[0].__setattr__(self, name, value)


def _inject_new_class(module):
    """Changes the module's class to a subclass of it named Parametrized<Class>, which will hold
    the properties."""
    cls = module.__class__
    dct = {
        # An empty __slots__ keeps the instance layout of a pybind11 class, so that one of
        # ember's C++ layers can change class.
        "__slots__": (),
        "_ember_reparametrized": True,
        "__getstate__": _serialization_error,
        "__reduce_ex__": _serialization_error,  # how ember pickles a module
        "__setattr__": _setattr,
    }
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = _deepcopy
    if _native.runs_native_forward(cls):
        native_forward = cls.forward

        def forward(self, *args, **kwargs):
            values = {name: getattr(self, name) for name in self.parametrizations}
            with _native.slots_holding(self, values):
                return native_forward(self, *args, **kwargs)

        dct["forward"] = forward
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), dct)


def _inject_property(module, tensor_name):
    """Adds to the module's (parametrized) class a property `tensor_name` that evaluates the
    parametrizations, through the cache when cached() is active."""

    def get_cached_parametrization(parametrization):
        key = (id(module), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = parametrization()
            _cache[key] = tensor
        return tensor

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            return get_cached_parametrization(parametrization)
        return parametrization()

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _has_tensor(module, tensor_name):
    """Whether tensor_name is one of the module's own parameters or buffers (PyTorch's
    `name in module._parameters or name in module._buffers`, a None one included)."""
    return _native.slot_kind(module, tensor_name)[0] is not None


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrizes module.<tensor_name>: reading it returns parametrization(original), and
    gradients flow to module.parametrizations.<tensor_name>.original. A second call on the same
    tensor chains the parametrizations. right_inverse (optional) maps a value to the original, and
    assigning to the attribute calls it. unsafe=True skips the dtype and shape checks. Returns
    the module."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        # The parametrization must map the current value to the same dtype and shape, and its
        # right_inverse back.
        if not unsafe:
            Y = getattr(module, tensor_name)
            X = parametrization(Y)
            if not isinstance(X, _C.Tensor):
                raise ValueError(
                    f"A parametrization must return a tensor. Got {type(X).__name__}."
                )
            if X.dtype != Y.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.dtype: {Y.dtype}\n"
                    f"parametrization(module.{tensor_name}).dtype: {X.dtype}"
                )
            if X.shape != Y.shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.shape: {Y.shape}\n"
                    f"parametrization(module.{tensor_name}).shape: {X.shape}"
                )
            if hasattr(parametrization, "right_inverse"):
                try:
                    Z = parametrization.right_inverse(X)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(Z, _C.Tensor):
                        raise ValueError(
                            "parametrization.right_inverse must return a tensor. Got: "
                            f"{type(Z).__name__}"
                        )
                    if Z.dtype != Y.dtype:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have the "
                            f"same dtype as module.{tensor_name}, unless the `unsafe` flag is "
                            "enabled.\n"
                            f"module.{tensor_name}.dtype: {Y.dtype}\n"
                            f"returned dtype: {Z.dtype}"
                        )
                    if Z.shape != Y.shape:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have the "
                            f"same shape as module.{tensor_name}, unless the `unsafe` flag is "
                            "enabled.\n"
                            f"module.{tensor_name}.shape: {Y.shape}\n"
                            f"returned shape: {Z.shape}"
                        )
        module.parametrizations[tensor_name].append(parametrization)
        # Once unsafe, always unsafe.
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif _has_tensor(module, tensor_name):
        original = getattr(module, tensor_name)
        # Made first, so that an error leaves the module as it was.
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a "
            f"parametrized element with name '{tensor_name}'"
        )
    return module


def is_parametrized(module, tensor_name=None):
    """Whether the module has a parametrization (on tensor_name, if given)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Removes the parametrizations on module.<tensor_name>. leave_parametrized=True keeps its
    current (parametrized) value in the original tensor; False restores the original (only when
    there is one original tensor). The last removal restores the module's class."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")

    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            # Same dtype (checked at registration): the original takes the value in place, so
            # the optimizer's reference to it stays valid.
            with no_grad():
                _set_original(original, t)
    else:
        if leave_parametrized:
            # Not under no_grad: whether the originals required grad decides what t is.
            t = getattr(module, tensor_name)
            original = Parameter(t) if t.requires_grad else t
        else:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")

    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)

    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class before parametrizations were registered on it."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Registers from_module's parametrizations (of tensor_name, or all) on to_module, creating
    the parameter there if missing, and gives to_module the same original tensors. Returns
    to_module."""
    if is_parametrized(from_module):
        parameters_to_transfer = (
            from_module.parametrizations if tensor_name is None else [tensor_name]
        )
        for parameter_name in parameters_to_transfer:
            if not hasattr(to_module, parameter_name) or \
                    getattr(to_module, parameter_name) is None:
                setattr(to_module, parameter_name,
                        Parameter(getattr(from_module, parameter_name)))
            for param_func in from_module.parametrizations[parameter_name]:
                register_parametrization(to_module, parameter_name, param_func)
            # The originals are `original` or `original0`, `original1`, ...
            if hasattr(from_module.parametrizations[parameter_name], "original"):
                to_module.parametrizations[parameter_name].original = \
                    from_module.parametrizations[parameter_name].original
            else:
                num = 0
                orig_num = "original" + str(num)
                while hasattr(from_module.parametrizations[parameter_name], orig_num):
                    setattr(
                        to_module.parametrizations[parameter_name],
                        orig_num,
                        getattr(from_module.parametrizations[parameter_name], orig_num),
                    )
                    num = num + 1
                    orig_num = "original" + str(num)
    return to_module
