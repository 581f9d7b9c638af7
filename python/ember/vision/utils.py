"""make_grid and save_image (torchvision.utils): a batch of images tiled into one, and written
through PIL."""
import math

from PIL import Image

from .. import Tensor, cat, is_tensor, no_grad, stack, uint8

__all__ = ["make_grid", "save_image"]


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
              pad_value=0.0, **kwargs):
    """The images of a (B, C, H, W) tensor or a list of (C, H, W) ones tiled nrow to a row,
    `padding` pixels of pad_value apart (3 channels for 1-channel images)."""
    if not is_tensor(tensor):
        if isinstance(tensor, list):
            for t in tensor:
                if not is_tensor(t):
                    raise TypeError("tensor or list of tensors expected, got a list "
                                    f"containing {type(t)}")
        else:
            raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    with no_grad():
        if isinstance(tensor, list):
            tensor = stack(tensor, dim=0)
        if tensor.dim() == 2:  # one H x W image
            tensor = tensor.unsqueeze(0)
        if tensor.dim() == 3:  # one image
            if tensor.size(0) == 1:
                tensor = cat((tensor, tensor, tensor), 0)
            tensor = tensor.unsqueeze(0)
        if tensor.dim() == 4 and tensor.size(1) == 1:  # 1-channel images as RGB
            tensor = cat((tensor, tensor, tensor), 1)

        if normalize is True:
            tensor = tensor.clone()  # the caller's tensor stays as it was
            if value_range is not None and not isinstance(value_range, tuple):
                raise TypeError("value_range has to be a tuple (min, max) if specified. min and "
                                "max are numbers")

            def norm_ip(img, low, high):
                img.clamp_(min=low, max=high)
                img.sub_(low).div_(max(high - low, 1e-5))

            def norm_range(t, value_range):
                if value_range is not None:
                    norm_ip(t, value_range[0], value_range[1])
                else:
                    norm_ip(t, float(t.min()), float(t.max()))

            if scale_each is True:
                for t in tensor:  # each image of the batch on its own range
                    norm_range(t, value_range)
            else:
                norm_range(tensor, value_range)

        if not isinstance(tensor, Tensor):
            raise TypeError("tensor should be of type torch.Tensor")
        if tensor.size(0) == 1:
            return tensor.squeeze(0)

        nmaps = tensor.size(0)
        xmaps = min(nrow, nmaps)
        ymaps = int(math.ceil(float(nmaps) / xmaps))
        height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
        num_channels = tensor.size(1)
        grid = tensor.new_full((num_channels, height * ymaps + padding, width * xmaps + padding),
                               pad_value)
        k = 0
        for y in range(ymaps):
            for x in range(xmaps):
                if k >= nmaps:
                    break
                grid.narrow(1, y * height + padding, height - padding).narrow(
                    2, x * width + padding, width - padding).copy_(tensor[k])
                k = k + 1
        return grid


def save_image(tensor, fp, format=None, **kwargs):
    """Writes a tensor image (or a batch, as make_grid(**kwargs) tiles it) with values in [0, 1]
    to fp (a path or a file object, then with format) through PIL."""
    with no_grad():
        grid = make_grid(tensor, **kwargs)
        # + 0.5 rounds to the nearest integer when the cast truncates.
        ndarr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", uint8)
        im = Image.fromarray(ndarr.contiguous().numpy())
    im.save(fp, format=format)
