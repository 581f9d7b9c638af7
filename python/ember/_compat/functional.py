"""torch.* functions that are nn.functional's, and nn.functional's names written in Python. Part of
ember._compat (see its __init__)."""
import warnings

from ._registry import _F, _TENSOR, _functional, _torch
from .linalg import pdist

_E = None  # the ember module, set by install()


# ================================================================================================
# torch.* functions that are nn.functional's (PyTorch has both)
# ================================================================================================

_FROM_F = """conv1d conv2d conv_transpose1d conv_transpose2d avg_pool1d max_pool1d max_pool2d
    adaptive_avg_pool1d pixel_shuffle pixel_unshuffle prelu selu celu
    cosine_similarity pairwise_distance bilinear hardshrink rrelu channel_shuffle threshold
    threshold_ selu_ celu_ rrelu_""".split()

# torch.name(input, ...) for the Tensor methods that PyTorch also has as functions.
_FROM_TENSOR = """xlogy_ logit_ sinc_ gcd_ lcm_ ldexp_ round_ nan_to_num_ clamp_min_ clamp_max_
    detach_ zero_ fill_ index_put_ is_same_size addmv_""".split()


@_torch
def fill(input, value):
    """A tensor like input filled with value."""
    return input.clone().fill_(value)


def _torch_norms():
    F = _E.nn.functional

    def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05,
                   cudnn_enable=True):
        """F.layer_norm (cudnn_enable is ignored)."""
        return F.layer_norm(input, normalized_shape, weight, bias, eps)

    def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
        """F.group_norm (cudnn_enabled is ignored)."""
        return F.group_norm(input, num_groups, weight, bias, eps)

    def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                   cudnn_enabled):
        """F.batch_norm with ATen's argument order."""
        return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                            eps)

    def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                      eps, cudnn_enabled):
        """F.instance_norm with ATen's argument order."""
        return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                               momentum, eps)

    def dropout(input, p, train):
        """F.dropout with ATen's argument names."""
        return F.dropout(input, p, train)

    def alpha_dropout(input, p, train):
        """F.alpha_dropout with ATen's argument names."""
        return F.alpha_dropout(input, p, train)

    def adaptive_max_pool1d(input, output_size):
        """(values, indices) of F.adaptive_max_pool1d."""
        return tuple(F.adaptive_max_pool1d(input, output_size, True))

    def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                                ceil_mode=False):
        """(values, indices) of F.max_pool1d."""
        return tuple(F.max_pool1d(input, kernel_size, stride or None, padding, dilation,
                                  ceil_mode, True))

    def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
        """F.embedding with ATen's argument order."""
        return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                           scale_grad_by_freq=scale_grad_by_freq)

    return dict(layer_norm=layer_norm, group_norm=group_norm, batch_norm=batch_norm,
                instance_norm=instance_norm, dropout=dropout, alpha_dropout=alpha_dropout,
                adaptive_max_pool1d=adaptive_max_pool1d,
                max_pool1d_with_indices=max_pool1d_with_indices, embedding=embedding)


# ================================================================================================
# nn.functional
# ================================================================================================


def _inplace_f(name):
    def fn(input, *args, **kwargs):
        kwargs.pop("inplace", None)
        return input.copy_(getattr(_E.nn.functional, name)(input, *args, **kwargs))
    fn.__name__ = name + "_"
    fn.__doc__ = f"In-place F.{name}."
    return fn


for _n in ("relu", "leaky_relu", "elu", "hardtanh", "selu", "celu", "threshold", "rrelu"):
    _F[_n + "_"] = _inplace_f(_n)


@_functional
def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return _E.where(input.abs() > lambd, input, _E.zeros_like(input))


_TENSOR["hardshrink"] = hardshrink


@_functional
def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    zero = _E.zeros_like(input)
    return _E.where(input > lambd, input - lambd, _E.where(input < -lambd, input + lambd, zero))


@_functional
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU, its slope drawn from U(lower, upper) per element in training, else their mean."""
    if training:
        slope = _E.empty_like(input).uniform_(lower, upper)
        out = _E.where(input >= 0, input, input * slope)
    else:
        out = _E.nn.functional.leaky_relu(input, (lower + upper) / 2)
    return input.copy_(out) if inplace else out


@_functional
def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax distribution; one-hot (with the soft gradient) if hard."""
    gumbels = -_E.empty_like(logits).exponential_().log()
    y = _E.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    index = y.argmax(dim, keepdim=True)
    y_hard = _E.zeros_like(logits).scatter_(dim, index, _E.ones_like(index, dtype=logits.dtype))
    return y_hard - y.detach() + y


@_functional
def channel_shuffle(input, groups):
    """(N, C, *) with its channels regrouped: C = g * k channels read in k-major order."""
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    rest = tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


@_functional
def upsample_nearest(input, size=None, scale_factor=None):
    """F.interpolate(mode='nearest') (deprecated in PyTorch)."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate "
                  "instead.")
    return _E.nn.functional.interpolate(input, size, scale_factor, mode="nearest")


@_functional
def upsample_bilinear(input, size=None, scale_factor=None):
    """F.interpolate(mode='bilinear', align_corners=True) (deprecated in PyTorch)."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate "
                  "instead.")
    return _E.nn.functional.interpolate(input, size, scale_factor, mode="bilinear",
                                        align_corners=True)


_F["pdist"] = pdist


@_functional
def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) for a distance d (pairwise_distance by default)."""
    dist_fn = distance_function or _E.nn.functional.pairwise_distance
    d_pos, d_neg = dist_fn(anchor, positive), dist_fn(anchor, negative)
    if swap:
        d_neg = _E.minimum(d_neg, dist_fn(positive, negative))
    loss = _E.clamp(d_pos - d_neg + margin, min=0)
    return _reduce(loss, reduction)


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


@_functional
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """The multi-class hinge loss: sum over i != y of max(0, margin - x[y] + x[i])**p / C."""
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() > 1 else input.unsqueeze(0)
    y = target.reshape(-1, 1)
    picked = x.gather(1, y)
    loss = _E.clamp(margin - picked + x, min=0)
    if p == 2:
        loss = loss * loss
    if weight is not None:
        loss = loss * weight[y]
    loss = loss.scatter(1, y, _E.zeros_like(picked)).sum(1) / x.shape[1]
    if input.dim() <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


@_functional
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The power-average pool: (sum over each window of x**p) ** (1/p)."""
    F = _E.nn.functional
    out = F.avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_E.sign(out) * F.relu(out.abs())).mul(kernel_size).pow(1.0 / norm_type)


@_functional
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The 2-D power-average pool: (sum over each window of x**p) ** (1/p)."""
    F = _E.nn.functional
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    out = F.avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_E.sign(out) * F.relu(out.abs())).mul(kh * kw).pow(1.0 / norm_type)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


@_functional
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C, H, W) -> (N, C * kh * kw, L), one column per sliding window."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input, but got: "
                           f"{list(input.shape)}")
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (kernel_size, dilation, padding, stride))
    if ph or pw:
        x = _E.nn.functional.pad(x, (pw, pw, ph, ph))
    eh, ew = dh * (kh - 1) + 1, dw * (kw - 1) + 1  # the dilated kernel's extent
    patches = x.unfold(2, eh, sh).contiguous().unfold(3, ew, sw)  # (N, C, oh, ow, eh, ew)
    patches = patches[..., ::dh, ::dw]
    n, c, oh, ow = patches.shape[:4]
    cols = patches.permute(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)
    return cols if batched else cols.squeeze(0)


@_functional
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, unfold's adjoint: (N, C * kh * kw, L) summed back into (N, C, H, W)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input, but got: "
                           f"{list(input.shape)}")
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    (H, W), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(
        _pair, (output_size, kernel_size, dilation, padding, stride))
    hp, wp = H + 2 * ph, W + 2 * pw
    oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    n, ck, L = x.shape
    if ck % (kh * kw) or L != oh * ow:
        raise RuntimeError(f"[fold] expected input of shape (N, C * {kh * kw}, {oh * ow}), got "
                           f"{list(input.shape)}")
    c = ck // (kh * kw)
    # The padded-image position of each (kernel row, kernel col, window) entry.
    ki = _E.arange(kh).reshape(kh, 1, 1, 1) * dh
    kj = _E.arange(kw).reshape(1, kw, 1, 1) * dw
    oi = _E.arange(oh).reshape(1, 1, oh, 1) * sh
    oj = _E.arange(ow).reshape(1, 1, 1, ow) * sw
    pos = ((ki + oi) * wp + (kj + oj)).reshape(-1).to(input.device)
    out = _E.zeros(n, c, hp * wp, dtype=input.dtype, device=input.device)
    out = _E.index_add(out, 2, pos, x.reshape(n, c, -1))
    out = out.reshape(n, c, hp, wp)[:, :, ph:ph + H, pw:pw + W]
    return out if batched else out.squeeze(0)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    k = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
    s = k if stride is None else ((stride,) * nd if isinstance(stride, int) else tuple(stride))
    p = (padding,) * nd if isinstance(padding, int) else tuple(padding)
    spatial = tuple(input.shape[-nd:])
    if output_size is None:
        size = tuple((spatial[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd))
    else:
        size = tuple(output_size)[-nd:]
    lead = tuple(input.shape[:-nd])
    n = 1
    for v in size:
        n *= v
    flat = input.reshape(lead + (-1,))
    out = _E.zeros(lead + (n,), dtype=input.dtype, device=input.device)
    out = out.scatter(-1, indices.reshape(lead + (-1,)), flat)
    return out.reshape(lead + size)


@_functional
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool1d's partial inverse: each value back at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


@_functional
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool2d's partial inverse: each value back at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def _with_indices(name):
    def fn(*args, **kwargs):
        kwargs["return_indices"] = True
        return getattr(_E.nn.functional, name)(*args, **kwargs)
    fn.__name__ = name + "_with_indices"
    fn.__doc__ = f"F.{name}(..., return_indices=True): (output, indices)."
    return fn


for _n in ("max_pool1d", "max_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d"):
    _F[_n + "_with_indices"] = _with_indices(_n)


def _grid_align_warning(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                      "old behavior is desired. See the documentation of grid_sample for "
                      "details.")
        return False
    return align_corners


def _base_coords(n, align_corners, like):
    if n <= 1:
        return _E.zeros(n, dtype=like.dtype, device=like.device)
    r = _E.linspace(-1, 1, n, dtype=like.dtype, device=like.device)
    return r if align_corners else r * (n - 1) / n


@_functional
def affine_grid(theta, size, align_corners=None):
    """The sampling grid of affine transforms theta (N, 2, 3) for size (N, C, H, W) (or 3-D)."""
    align_corners = _grid_align_warning(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    spatial = size[2:]
    nd = len(spatial)
    if nd not in (2, 3) or tuple(theta.shape[1:]) != (nd, nd + 1) or theta.shape[0] != size[0]:
        raise ValueError(f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} for "
                         f"size {size}. Got {list(theta.shape)}.")
    axes = [_base_coords(s, align_corners, theta) for s in reversed(spatial)]  # x, y[, z]
    grids = _E.meshgrid(list(reversed(axes)), indexing="ij")  # [z,] y, x on (D,) H, W
    coords = list(reversed(grids)) + [_E.ones_like(grids[0])]
    base = _E.stack(coords, -1).reshape(1, -1, nd + 1)
    grid = _E.matmul(base, theta.transpose(1, 2))
    return grid.reshape([size[0]] + spatial + [nd])


def _reflect(coord, lo, hi):
    # Reflects coordinates into [lo, hi] as grid_sample's 'reflection' padding does.
    span = hi - lo
    if span <= 0:
        return _E.zeros_like(coord)
    x = (coord - lo).abs()
    extra = _E.fmod(x, span)
    flips = _E.floor(x / span)
    even = _E.remainder(flips, 2) == 0
    return _E.where(even, extra + lo, span - extra + lo)


def _source_index(coord, size, padding_mode, align_corners):
    x = ((coord + 1) / 2) * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2
    if padding_mode == "border":
        x = _E.clamp(x, 0, size - 1)
    elif padding_mode == "reflection":
        x = _reflect(x, 0, size - 1) if align_corners else _reflect(x, -0.5, size - 0.5)
        x = _E.clamp(x, 0, size - 1)
    return x


@_functional
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input (N, C, H, W) read at grid's (N, Ho, Wo, 2) points (x, y in [-1, 1])."""
    align_corners = _grid_align_warning(align_corners)
    if input.dim() != 4:
        raise NotImplementedError("[grid_sample] ember supports 4-D input (N, C, H, W) only")
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"[grid_sample] mode '{mode}' is not supported by ember yet")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    ix = _source_index(grid[..., 0], w, padding_mode, align_corners)
    iy = _source_index(grid[..., 1], h, padding_mode, align_corners)
    flat = input.reshape(n, c, h * w)

    def tap(yy, xx, weight):
        inside = (xx >= 0) & (xx <= w - 1) & (yy >= 0) & (yy <= h - 1)
        lin = (_E.clamp(yy, 0, h - 1) * w + _E.clamp(xx, 0, w - 1)).to(_E.int64)
        vals = flat.gather(2, lin.reshape(n, 1, -1).expand(n, c, ho * wo))
        weight = _E.where(inside, weight, _E.zeros_like(weight)).reshape(n, 1, -1)
        return vals * weight

    if mode == "nearest":
        xn, yn = _E.round(ix), _E.round(iy)
        out = tap(yn, xn, _E.ones_like(ix))
    else:
        x0, y0 = _E.floor(ix), _E.floor(iy)
        x1, y1 = x0 + 1, y0 + 1
        wx1, wy1 = ix - x0, iy - y0
        wx0, wy0 = 1 - wx1, 1 - wy1
        out = (tap(y0, x0, wy0 * wx0) + tap(y0, x1, wy0 * wx1) + tap(y1, x0, wy1 * wx0)
               + tap(y1, x1, wy1 * wx1))
    return out.reshape(n, c, ho, wo)
