"""resnet18 (torchvision.models.resnet18) over ember's own ResNet-18, which has torchvision's module
names, so its state dicts are torchvision's.

There is no network to download pretrained weights from: they load from a local safetensors file,
either given as `weights=` or in the hub cache where torchvision would have downloaded them.
"""
import enum
import os
import warnings
from dataclasses import dataclass, fields
from functools import partial

from ... import load, no_grad
from ... import models as _models
from ..transforms._presets import ImageClassification

__all__ = ["ResNet18_Weights", "resnet18"]


@dataclass
class Weights:
    """Where a model's pretrained weights come from, the transforms they expect, their metadata."""
    url: str
    transforms: object
    meta: dict


def _hub_checkpoints_dir():
    # torch.hub.get_dir()'s default: $TORCH_HOME/hub, else $XDG_CACHE_HOME/torch/hub.
    cache = os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache"))
    torch_home = os.path.expanduser(os.environ.get("TORCH_HOME", os.path.join(cache, "torch")))
    return os.path.join(torch_home, "hub", "checkpoints")


class WeightsEnum(enum.Enum):
    """The pretrained weights a model builder takes (torchvision.models.WeightsEnum)."""

    @classmethod
    def verify(cls, obj):
        """obj as a member of cls (a member, its name as a string, or None)."""
        if obj is not None:
            if type(obj) is str:
                name = obj.replace(cls.__name__ + ".", "")
                if name not in cls.__members__:
                    raise ValueError(f"Unknown weights: {obj}; {cls.__name__} has "
                                     f"{', '.join(cls.__members__)}")
                obj = cls[name]
            elif not isinstance(obj, cls):
                raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but "
                                f"received {obj.__class__.__name__}.")
        return obj

    def local_path(self):
        """Where these weights are looked for: <hub dir>/checkpoints/<url's name>.safetensors."""
        stem = os.path.splitext(os.path.basename(self.url))[0]
        return os.path.join(_hub_checkpoints_dir(), stem + ".safetensors")

    def get_state_dict(self, progress=True):
        """The state dict from local_path(); a RuntimeError that says how to make it if absent."""
        path = self.local_path()
        if not os.path.isfile(path):
            pth = os.path.basename(self.url)
            raise RuntimeError(
                f"{self!r}: pretrained weights need a download and this machine has no network. "
                f"Fetch {self.url} elsewhere, convert it to safetensors with PyTorch "
                f"(from safetensors.torch import save_file; save_file(torch.load('{pth}'), "
                f"'{os.path.basename(path)}')) and put the result at {path}, or pass its path as "
                "weights=.")
        return load(path)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"

    def __getattr__(self, name):
        # The Weights fields read directly off the member (weights.url, weights.meta).
        for f in fields(Weights):
            if f.name == name:
                return object.__getattribute__(self.value, name)
        raise AttributeError(f"{self.__class__.__name__} has no attribute {name!r}")


class ResNet18_Weights(WeightsEnum):
    """ResNet-18's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = Weights(
        url="https://download.pytorch.org/models/resnet18-f37072fd.pth",
        transforms=partial(ImageClassification, crop_size=224),
        # torchvision's meta also lists the 1000 ImageNet category names; ember ships none.
        meta={"num_params": 11689512, "min_size": (1, 1), "num_classes": 1000,
              "recipe": "https://github.com/pytorch/vision/tree/main/references/classification"
                        "#resnet",
              "_metrics": {"ImageNet-1K": {"acc@1": 69.758, "acc@5": 89.078}}},
    )
    DEFAULT = IMAGENET1K_V1


# torchvision.models.ResNet's options that ember's ResNet-18 has only at their defaults.
_FIXED_OPTIONS = {"groups": 1, "width_per_group": 64, "replace_stride_with_dilation": None,
                  "norm_layer": None}


def resnet18(*args, weights=None, progress=True, **kwargs):
    """ResNet-18 (ImageNet's stem) from ember.models, untrained unless `weights` (a
    ResNet18_Weights member found locally, or the path of a safetensors state dict) is given."""
    if args:  # torchvision's legacy positional (pretrained, progress)
        warnings.warn("Using 'weights' as positional parameter(s) is deprecated since 0.13 and "
                      "may be removed in the future. Please use keyword parameter(s) instead.")
        if len(args) > 2:
            raise TypeError(f"resnet18() takes at most 2 positional arguments ({len(args)} given)")
        kwargs["pretrained"] = args[0]
        if len(args) == 2:
            progress = args[1]
    if "pretrained" in kwargs:
        pretrained = kwargs.pop("pretrained")
        if weights is None:
            warnings.warn("The parameter 'pretrained' is deprecated since 0.13 and may be removed "
                          "in the future, please use 'weights' instead.")
            weights = ResNet18_Weights.IMAGENET1K_V1 if pretrained else None
    local_file = None
    if isinstance(weights, os.PathLike) or (isinstance(weights, str) and os.path.isfile(weights)):
        local_file, weights = os.fspath(weights), None
    else:
        weights = ResNet18_Weights.verify(weights)
    for name, default in _FIXED_OPTIONS.items():
        if kwargs.get(name, default) != default:
            raise NotImplementedError(f"resnet18: ember's ResNet-18 has no {name}={kwargs[name]!r} "
                                      f"(only {default!r})")
        kwargs.pop(name, None)
    zero_init_residual = kwargs.pop("zero_init_residual", False)
    if weights is not None:
        num_classes = weights.meta["num_classes"]
        if kwargs.get("num_classes", num_classes) != num_classes:
            raise ValueError(f"The parameter 'num_classes' expected value {num_classes} but got "
                             f"{kwargs['num_classes']} instead.")
        kwargs["num_classes"] = num_classes
    num_classes = kwargs.pop("num_classes", 1000)
    if kwargs:
        raise TypeError(f"resnet18() got unexpected keyword arguments {sorted(kwargs)}")

    model = _models.resnet18(num_classes=num_classes)
    if zero_init_residual:
        # Each residual branch starts as zero, so each block starts as the identity.
        with no_grad():
            for name, p in model.named_parameters():
                if name.endswith(".bn2.weight"):
                    p.zero_()
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress))
    elif local_file is not None:
        model.load_state_dict(load(local_file))
    return model
