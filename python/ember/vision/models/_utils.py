"""What every model builder shares (torchvision.models._utils): the pre-0.13 calling conventions
(positional arguments, pretrained=) and where the weights come from (a WeightsEnum member found
locally, or the path of a safetensors state dict; there is no network to download from)."""
import functools
import os
import warnings

from ... import load
from ..transforms._presets import ImageClassification
from .resnet import Weights, WeightsEnum

_MISSING = object()


def _is_local_file(weights):
    return isinstance(weights, os.PathLike) or (isinstance(weights, str) and
                                                os.path.isfile(weights))


def handle_legacy_interface(legacy_weights):
    """Lets a builder take pre-0.13 (pretrained, progress), warning as torchvision does."""
    # pretrained=True means legacy_weights, the first weights published (not DEFAULT).

    def outer(builder):
        @functools.wraps(builder)
        def inner(*args, **kwargs):
            if args:
                if len(args) > 2:
                    raise TypeError(f"{builder.__name__}() takes at most 2 positional arguments "
                                    f"({len(args)} given)")
                named = dict(zip(("weights", "progress"), args))
                warnings.warn(f"Using {' and '.join(repr(n) for n in named)} as positional "
                              "parameter(s) is deprecated since 0.13 and may be removed in the "
                              "future. Please use keyword parameter(s) instead.")
                kwargs.update(named)
            weights = kwargs.get("weights", _MISSING)
            new_style = (isinstance(weights, WeightsEnum) or weights is None
                         or (isinstance(weights, str) and weights != "legacy")
                         or isinstance(weights, os.PathLike))
            if ("pretrained" not in kwargs and weights is _MISSING) or new_style:
                return builder(**kwargs)
            # A positional first argument is the legacy `pretrained` flag.
            positional = weights is not _MISSING
            pretrained = kwargs.pop("weights") if positional else kwargs["pretrained"]
            kwargs.pop("pretrained", None)
            default = legacy_weights if pretrained else None
            if pretrained and default is None:
                raise ValueError(f"No weights available for model {builder.__name__}")
            if not positional:
                warnings.warn("The parameter 'pretrained' is deprecated since 0.13 and may be "
                              "removed in the future, please use 'weights' instead.")
            msg = ("Arguments other than a weight enum or `None` for 'weights' are deprecated "
                   "since 0.13 and may be removed in the future. The current behavior is "
                   f"equivalent to passing `weights={default}`.")
            if pretrained:
                msg += (f" You can also use `weights={type(default).__name__}.DEFAULT` to get "
                        "the most up-to-date weights.")
            warnings.warn(msg)
            kwargs["weights"] = default
            return builder(**kwargs)

        return inner

    return outer


def resolve_weights(weights_enum, weights):
    """(member or None, local file or None) for a builder's `weights` argument."""
    if _is_local_file(weights):
        return None, os.fspath(weights)
    return weights_enum.verify(weights), None


def ovewrite_named_param(kwargs, param, new_value):
    """Sets kwargs[param] to new_value; a ValueError if the caller asked for another value."""
    if param in kwargs:
        if kwargs[param] != new_value:
            raise ValueError(f"The parameter '{param}' expected value {new_value} but got "
                             f"{kwargs[param]} instead.")
    else:
        kwargs[param] = new_value


def build(make, weights_enum, weights, progress, kwargs, when_loading=None):
    """make(**kwargs), loaded with `weights` (a weights_enum member, its name, or a path)."""
    # The weights are read before the model is built, so missing ones fail at once (a VGG takes
    # seconds to initialise); when_loading holds the kwargs for a model about to be overwritten.
    weights, local_file = resolve_weights(weights_enum, weights)
    if weights is not None and weights.meta.get("num_classes") is not None:
        ovewrite_named_param(kwargs, "num_classes", weights.meta["num_classes"])
    state_dict = None
    if weights is not None:
        state_dict = weights.get_state_dict(progress=progress)
    elif local_file is not None:
        state_dict = load(local_file)
    if state_dict is None:
        return make(**kwargs)
    model = make(**kwargs, **(when_loading or {}))
    model.load_state_dict(state_dict)
    return model


def imagenet_weights(url, num_params, acc1, acc5, min_size, recipe, num_classes=1000,
                     **transform_kwargs):
    """A Weights entry for an ImageNet-1K classifier, with torchvision's meta."""
    # torchvision's meta lists the 1000 category names; ember ships none: num_classes stands in.
    transforms = functools.partial(ImageClassification, crop_size=224, **transform_kwargs)
    return Weights(url=url, transforms=transforms,
                   meta={"num_params": num_params, "min_size": min_size,
                         "num_classes": num_classes, "recipe": recipe,
                         "_metrics": {"ImageNet-1K": {"acc@1": acc1, "acc@5": acc5}}})
