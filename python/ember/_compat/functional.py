"""torch.* functions that are nn.functional's, and nn.functional's names written in Python. Part of
ember._compat (see its __init__)."""
import warnings

from ._registry import _F, _TENSOR, _dname, _functional, _out, _torch
from .linalg import pdist

_E = None  # the ember module, set by install()


# ================================================================================================
# torch.* functions that are nn.functional's (PyTorch has both)
# ================================================================================================

_FROM_F = """conv1d conv2d conv_transpose1d conv_transpose2d avg_pool1d max_pool1d max_pool2d
    adaptive_avg_pool1d pixel_shuffle pixel_unshuffle prelu selu celu
    cosine_similarity pairwise_distance bilinear hardshrink rrelu channel_shuffle threshold
    threshold_ selu_ celu_ rrelu_ conv3d conv_transpose3d max_pool3d feature_alpha_dropout
    rms_norm""".split()

# torch.name(input, ...) for the Tensor methods that PyTorch also has as functions.
_FROM_TENSOR = """i0_ xlogy_ logit_ sinc_ gcd_ lcm_ ldexp_ round_ nan_to_num_ clamp_min_ clamp_max_
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
    x = input if input.dim() > 1 else input.reshape(1, -1)
    y = target.reshape(-1, 1)
    picked = x.gather(1, y)
    loss = _E.clamp(margin - picked + x, min=0)
    if p == 2:
        loss = loss * loss
    if weight is not None:
        loss = loss * weight[y]
    loss = loss.scatter(1, y, _E.zeros_like(picked)).sum(1) / x.shape[1]
    if input.dim() <= 1:
        loss = loss.reshape(target.shape)
    return _reduce(loss, reduction)


@_functional
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: for each sample, the sum over its labels j (target up to the first
    -1) and the classes i not among them of max(0, 1 - (x[j] - x[i])), over C."""
    if target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    x = input if input.dim() > 1 else input.reshape(1, -1)
    y = target.reshape(x.shape)
    # The labels are those before the first -1; the rest of the row is ignored.
    listed = _E.cumprod((y != -1).to(_E.int64), 1).to(x.dtype)
    labels = y.clamp(min=0)
    is_label = _E.zeros_like(x).scatter_add(1, labels, listed) > 0
    picked = x.gather(1, labels)
    margins = _E.clamp(1 - picked.unsqueeze(2) + x.unsqueeze(1), min=0)
    weight = listed.unsqueeze(2) * (~is_label).to(x.dtype).unsqueeze(1)
    loss = (margins * weight).sum((1, 2)) / x.shape[1]
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


@_functional
def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The 3-D power-average pool: (sum over each window of x**p) ** (1/p) (PyTorch 2.6)."""
    F = _E.nn.functional
    kd, kh, kw = (kernel_size,) * 3 if isinstance(kernel_size, int) else kernel_size
    out = F.avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_E.sign(out) * F.relu(out.abs())).mul(kd * kh * kw).pow(1.0 / norm_type)


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


@_functional
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool3d's partial inverse: each value back at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def _adaptive_windows(size, out):
    """PyTorch's adaptive pooling windows: [floor(i * size / out), ceil((i + 1) * size / out))."""
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


@_functional
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """The 3-D adaptive max pool: the 2-D one per depth slice, then the max over each depth window
    (the first depth that holds it, so ties resolve in PyTorch's d, h, w scan order)."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got "
                           f"{list(input.shape)}")
    batched = input.dim() == 5
    x = input if batched else input.unsqueeze(0)
    n, c, d, h, w = x.shape
    size = (output_size,) * 3 if isinstance(output_size, int) else tuple(output_size)
    od, oh, ow = (s if o is None else o for s, o in zip((d, h, w), size))
    planes, where = _E.nn.functional.adaptive_max_pool2d(x.reshape(n, c * d, h, w), (oh, ow),
                                                         True)
    planes, where = planes.reshape(n, c, d, oh, ow), where.reshape(n, c, d, oh, ow)
    values, indices = [], []
    for lo, hi in _adaptive_windows(d, od):
        v, k = planes[:, :, lo:hi].max(2)
        values.append(v)
        indices.append(where[:, :, lo:hi].gather(2, k.unsqueeze(2)).squeeze(2) + (k + lo) * h * w)
    out, idx = _E.stack(values, 2), _E.stack(indices, 2)
    if not batched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


def _with_indices(name):
    def fn(*args, **kwargs):
        kwargs["return_indices"] = True
        return getattr(_E.nn.functional, name)(*args, **kwargs)
    fn.__name__ = name + "_with_indices"
    fn.__doc__ = f"F.{name}(..., return_indices=True): (output, indices)."
    return fn


for _n in ("max_pool1d", "max_pool2d", "max_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d"):
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


# ================================================================================================
# Dropout, bags of embeddings, attention
# ================================================================================================


@_functional
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout over whole channels: one draw per (N, C), kept at SELU's mean and variance."""
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1:
        out = input * _E.zeros_like(input)
    else:
        alpha = 1.7580993408473766  # SELU's scale * alpha: the value a dropped unit takes
        a = 1.0 / ((alpha * alpha * p + 1) * (1 - p)) ** 0.5
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
        keep = _E.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
        out = input * (keep * a) + (keep - 1) * (alpha * a) + alpha * a * p
    return input.copy_(out) if inplace else out


@_functional
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """The sum, mean or max of the embeddings in each bag: the rows of a 2-D input, or the runs of a
    1-D input that start at offsets. An empty bag gives zeros; padding_idx entries are left out."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on GitHub.")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is "
                             "a mini-batch of fixed length sequences.")
        bags, length = input.shape
        offsets = _E.arange(0, bags * length, max(length, 1), device=input.device)[:bags]
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        if include_last_offset:
            offsets = offsets[:-1]
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if padding_idx is not None:
        if not -weight.shape[0] <= padding_idx < weight.shape[0]:
            raise AssertionError("padding_idx must be within the number of embeddings")
        padding_idx %= weight.shape[0]
    if max_norm is not None:
        _E.embedding_renorm_(weight, input, max_norm, norm_type)
    if _dname(weight.dtype) in ("float16", "bfloat16"):
        # Sums in float32, rounded once, as PyTorch's kernel accumulates.
        return embedding_bag(input, weight.float(), offsets, None, norm_type, scale_grad_by_freq,
                             mode, sparse, per_sample_weights if per_sample_weights is None else
                             per_sample_weights.float(), False,  # offsets are trimmed already
                             padding_idx).to(weight.dtype)
    count, bags = input.shape[0], offsets.shape[0]
    # Each entry's bag: a 1 where a bag starts (repeated offsets skip empty bags), summed up.
    starts = _E.zeros(count + 1, dtype=_E.int64, device=input.device)
    starts = starts.index_add(0, offsets.clamp(max=count), _E.ones_like(offsets))
    bag_of = starts[:count].cumsum(0) - 1
    kept = _E.ones(count, dtype=weight.dtype, device=weight.device)
    if padding_idx is not None:
        kept = (input != padding_idx).to(weight.dtype)
    rows = weight.index_select(0, input)
    if mode == "max":
        out = []
        ends = offsets.tolist()[1:] + [count]
        for start, end in zip(offsets.tolist(), ends):
            members = [i for i in range(start, end) if kept[i] != 0]
            out.append(rows[members].amax(0) if members else weight.new_zeros(weight.shape[1:]))
        return _E.stack(out) if out else weight.new_zeros((0,) + tuple(weight.shape[1:]))
    scale = kept if per_sample_weights is None else kept * per_sample_weights
    total = weight.new_zeros((bags,) + tuple(weight.shape[1:]))
    total = total.index_add(0, bag_of, rows * scale.unsqueeze(1))
    if mode == "sum":
        return total
    sizes = weight.new_zeros(bags).index_add(0, bag_of, kept)
    return total / sizes.clamp(min=1).unsqueeze(1)


@_functional
def _scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                  need_attn_weights=False, is_causal=False):
    """PyTorch 1.13's private attention: (output, attention weights), the weights after dropout."""
    return tuple(_E.nn.functional._attention_math(query, key, value, attn_mask, dropout_p,
                                                  is_causal))


# ================================================================================================
# ATen's normalisation entry points, CTC
# ================================================================================================


@_torch
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(layer_norm's output, the mean, 1 / sqrt(var + eps)), the statistics kept with size-1 dims
    in the normalised positions."""
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    # The statistics are not differentiable outputs in PyTorch either.
    x = _statistics_input(input)
    mean = x.mean(dims, keepdim=True)
    rstd = (x.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return (_E.nn.functional.layer_norm(input, normalized_shape, weight, bias, eps),
            mean.to(input.dtype), rstd.to(input.dtype))


def _statistics_input(input):
    """input detached, in float32 if 16-bit: the normalisations' statistics are computed in
    float32 and rounded once, as their kernels' (and PyTorch's)."""
    x = input.detach()
    return x.float() if x.dtype in (_E.float16, _E.bfloat16) else x


@_torch
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(batch_norm's output, the batch mean, 1 / sqrt(batch var + eps)); in eval mode the two
    statistics are empty, as ATen's."""
    out = _E.nn.functional.batch_norm(input, running_mean, running_var, weight, bias, training,
                                      momentum, eps)
    if not training:
        empty = input.new_empty(0)
        return out, empty, empty
    dims = [0] + list(range(2, input.dim()))
    x = _statistics_input(input)
    mean = x.mean(dims)
    invstd = (x.var(dims, unbiased=False) + eps).rsqrt()
    return out, mean.to(input.dtype), invstd.to(input.dtype)


def _logsumexp_safe(terms, dim):
    """logsumexp over dim that stays -inf, with a zero gradient, where every term is -inf (the
    plain one's gradient there is NaN)."""
    m = terms.detach().amax(dim, keepdim=True)
    none = m == float("-inf")
    m = _E.where(none, _E.zeros_like(m), m)
    total = (terms - m).exp().sum(dim, keepdim=True)
    total = _E.where(none, _E.ones_like(total), total)
    out = _E.where(none, _E.full_like(m, float("-inf")), total.log() + m)
    return out.squeeze(dim)


def _lengths(v, name):
    if _E.is_tensor(v):
        return [int(x) for x in v.reshape(-1).tolist()]
    if isinstance(v, int):
        raise TypeError(f"ctc_loss(): argument '{name}' must be tuple of ints, not int")
    return [int(x) for x in v]


@_functional
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification: -log of the total probability of the alignments of
    each target with its (T, C) log-probabilities, by the forward (alpha) recursion over the target
    with blanks between and around its labels. The gradient is PyTorch's, which assumes log_probs
    come from log_softmax (it adds exp(log_probs) times the loss's gradient)."""
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    T, N, C = lp.shape
    in_len, tg_len = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths,
                                                                        "target_lengths")
    if len(in_len) != N or len(tg_len) != N:
        raise RuntimeError(f"input_lengths and target_lengths must have {N} entries")
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    for n in range(N):
        if in_len[n] > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value "
                               f"{in_len[n]} (while checking arguments for ctc_loss_cpu)")
    # Each sample's labels: a row of a padded (N, S) targets, or its run of a 1-D concatenation.
    flat = targets.reshape(-1).tolist()
    rows, at = [], 0
    for n in range(N):
        if targets.dim() == 2:  # padded (N, S)
            rows.append(targets[n, :tg_len[n]].tolist())
        else:  # concatenated (one sample's alone when unbatched)
            rows.append(flat[at:at + tg_len[n]])
            at += tg_len[n]
    L = max(tg_len) if tg_len else 0
    S = 2 * L + 1
    # The extended labels: blank, l1, blank, l2, ..., blank (padded with blanks to S).
    ext = [[blank] * S for _ in range(N)]
    skip = [[False] * S for _ in range(N)]  # may s come from s - 2 (a label unlike the last)?
    for n, row in enumerate(rows):
        for i, lab in enumerate(row):
            ext[n][2 * i + 1] = int(lab)
            skip[n][2 * i + 1] = i > 0 and int(lab) != int(row[i - 1])
    device = lp.device
    ext_t = _E.tensor(ext, dtype=_E.int64, device=device)
    emit = lp.gather(2, ext_t.unsqueeze(0).expand(T, N, S))  # (T, N, S)
    neg_inf = float("-inf")
    # Paths start on the first blank or the first label.
    starts = _E.tensor([0.0, 0.0] + [neg_inf] * (S - 2), dtype=lp.dtype, device=device)[:S]
    alpha = starts + emit[0]
    pad1 = _E.full((N, 1), neg_inf, dtype=lp.dtype, device=device)
    pad2 = _E.full((N, 2), neg_inf, dtype=lp.dtype, device=device)
    skip_t = _E.tensor(skip, dtype=_E.bool, device=device)
    lens = _E.tensor(in_len, dtype=_E.int64, device=device).unsqueeze(1)
    for t in range(1, T):
        stay = alpha
        step = _E.cat([pad1, alpha[:, :-1]], 1)
        jump = _E.where(skip_t, _E.cat([pad2, alpha[:, :-2]], 1), _E.full_like(alpha, neg_inf))
        new = _logsumexp_safe(_E.stack([stay, step, jump], 2), 2) + emit[t]
        alpha = _E.where(lens > t, new, alpha)  # a sample's alpha stops at its last frame
    # The alignments end on the last label or the blank after it.
    end = _E.tensor([2 * k for k in tg_len], dtype=_E.int64, device=device).unsqueeze(1)
    last = alpha.gather(1, end)
    before = alpha.gather(1, (end - 1).clamp(min=0))
    before = _E.where(end > 0, before, _E.full_like(before, neg_inf))
    nll = -_logsumexp_safe(_E.cat([last, before], 1), 1)
    # PyTorch's gradient: d/dx of log_softmax's input, i.e. + exp(lp) on every frame in range.
    frames = (_E.arange(T, device=device).unsqueeze(1) < lens.reshape(1, N)).to(lp.dtype)
    p = lp.detach().exp() * frames.unsqueeze(2)
    nll = nll + (p * (lp - lp.detach())).sum((0, 2))
    if zero_infinity:
        nll = _E.where(_E.isinf(nll), _E.zeros_like(nll), nll)
    if reduction == "mean":
        div = _E.tensor(tg_len, dtype=lp.dtype, device=device).clamp(min=1)
        return (nll / div).mean()
    if reduction == "sum":
        return nll.sum()
    if reduction != "none":
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return nll if batched else nll.squeeze(0)


# ================================================================================================
# torch.* losses with ATen's signatures (reduction as ATen's enum: 0 none, 1 mean, 2 sum)
# ================================================================================================

_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _aten_reduction(r):
    if r not in _REDUCTION:
        raise ValueError(f"{r} is not a valid value for reduction")
    return _REDUCTION[r]


@_torch
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    """F.binary_cross_entropy_with_logits with ATen's argument order."""
    return _E.nn.functional.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_aten_reduction(reduction), pos_weight=pos_weight)


@_torch
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    """F.cosine_embedding_loss with ATen's argument order."""
    return _E.nn.functional.cosine_embedding_loss(input1, input2, target, margin,
                                                  reduction=_aten_reduction(reduction))


@_torch
def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    """F.hinge_embedding_loss with ATen's argument order."""
    return _E.nn.functional.hinge_embedding_loss(input, target, margin,
                                                 reduction=_aten_reduction(reduction))


@_torch
def kl_div(input, target, reduction=1, *, log_target=False):
    """F.kl_div with ATen's argument order (its 'mean' is the elementwise mean)."""
    return _E.nn.functional.kl_div(input, target, reduction=_aten_reduction(reduction),
                                   log_target=log_target)


@_torch
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    """F.margin_ranking_loss with ATen's argument order."""
    return _E.nn.functional.margin_ranking_loss(input1, input2, target, margin,
                                                reduction=_aten_reduction(reduction))


@_torch
def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """F.poisson_nll_loss with ATen's argument order."""
    return _E.nn.functional.poisson_nll_loss(input, target, log_input, full, eps=eps,
                                             reduction=_aten_reduction(reduction))


@_torch
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        reduction=1):
    """F.triplet_margin_loss with ATen's argument order."""
    return _E.nn.functional.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                                reduction=_aten_reduction(reduction))


def _ctc_loss_aten(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
                   zero_infinity=False):
    """F.ctc_loss with ATen's argument order."""
    return _F["ctc_loss"](log_probs, targets, input_lengths, target_lengths, blank,
                          _aten_reduction(reduction), zero_infinity)


_ctc_loss_aten.__name__ = "ctc_loss"  # torch.ctc_loss; F.ctc_loss is the one above
_torch(_ctc_loss_aten)


@_torch
def feature_dropout(input, p, train):
    """Dropout of whole channels (F.dropout2d's rule for any rank)."""
    if not train or p == 0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    keep = _E.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    return input * keep * (0.0 if p == 1 else 1 / (1 - p))  # p = 1 gives zeros, not NaN


def _inplace_torch(name):
    def fn(input, p, train):
        return input.copy_(getattr(_E, name)(input, p, train))
    fn.__name__ = name + "_"
    fn.__doc__ = f"In-place torch.{name} (ATen's order: input, p, train)."
    return fn


for _n in ("dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"):
    _torch(_inplace_torch(_n))


@_torch
def native_channel_shuffle(input, groups):
    """F.channel_shuffle."""
    return channel_shuffle(input, groups)


_F["native_channel_shuffle"] = native_channel_shuffle


# x.op_copy(...): the view op's result as a new tensor (PyTorch's functionalization variants).
def _copy_of(name):
    def fn(input, *args, out=None, **kwargs):
        result = getattr(input, name)(*args, **kwargs)
        if isinstance(result, (tuple, list)):
            return [r.clone() for r in result]
        return _out(result.clone(), out)
    fn.__name__ = name + "_copy"
    fn.__doc__ = f"input.{name}(...) as a new tensor, not a view."
    return fn


for _n in ("as_strided", "detach", "diagonal", "expand", "permute", "select", "split",
           "split_with_sizes", "squeeze", "t", "transpose", "unbind", "unfold", "unsqueeze",
           "view"):
    _torch(_copy_of(_n))


@_torch
def alias_copy(input, *, out=None):
    """A copy of input (the copy variant of its alias)."""
    return _out(input.clone(), out)


# ================================================================================================
# ATen's entry points for recurrent layers, convolutions and grid sampling (torch.lstm,
# torch.convolution, torch.grid_sampler, ...), as PyTorch's modules call them
# ================================================================================================


def _aten_recurrent(mode):
    def fn(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        h0, c0 = hx if mode == "LSTM" else (hx, None)
        params = list(params)
        # Per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr] (the projection: LSTM only).
        per = len(params) // (num_layers * (2 if bidirectional else 1))
        proj = mode == "LSTM" and per == (5 if has_biases else 3)
        out, h, c = _E._C._F._recurrent(input, h0, c0, params, has_biases, mode, num_layers,
                                        bidirectional, batch_first, dropout, train, None,
                                        params[per - 1].shape[0] if proj else 0)
        return (out, h, c) if mode == "LSTM" else (out, h)
    name = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}[mode]
    fn.__name__ = name
    fn.__doc__ = (f"The {name} layers over flat parameters (ATen's {name}; hx is [h0, c0] for "
                  "LSTM), as nn's modules call it: (output, h_n[, c_n]).")
    return fn


for _mode in ("LSTM", "GRU", "RNN_TANH", "RNN_RELU"):
    _torch(_aten_recurrent(_mode))


@_torch
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """ATen's convolution: conv1d/2d/3d, or their transposes, by weight's rank."""
    F = _E.nn.functional
    n = weight.dim() - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight, got {weight.dim()}-D")
    if transposed:
        return getattr(F, f"conv_transpose{n}d")(input, weight, bias, stride, padding,
                                                  output_padding, groups, dilation)
    return getattr(F, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)


@_functional
def conv_tbc(input, weight, bias, pad=0):
    """A 1-d convolution of a (time, batch, channels) input with a (kernel, in, out) weight,
    padded by pad on both ends of time (fairseq's layout)."""
    if input.dim() != 3 or weight.dim() != 3 or bias.dim() != 1:
        raise RuntimeError("conv_tbc: expected a 3-D input and weight and a 1-D bias, got "
                           f"{input.dim()}-D, {weight.dim()}-D and {bias.dim()}-D")
    out = _E.nn.functional.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias,
                                  padding=pad)
    return out.permute(2, 0, 1)


_torch(conv_tbc)


def _grid_sampler(name):
    def fn(input, grid, interpolation_mode, padding_mode, align_corners):
        F = _E.nn.functional
        modes = {v: k for k, v in F.GRID_SAMPLE_INTERPOLATION_MODES.items()}
        pads = {v: k for k, v in F.GRID_SAMPLE_PADDING_MODES.items()}
        return F.grid_sample(input, grid, modes[interpolation_mode], pads[padding_mode],
                             align_corners)
    fn.__name__ = name
    fn.__doc__ = ("F.grid_sample with ATen's codes: interpolation 0 bilinear, 1 nearest, "
                  "2 bicubic; padding 0 zeros, 1 border, 2 reflection.")
    return fn


for _n in ("grid_sampler", "grid_sampler_2d"):
    _torch(_grid_sampler(_n))


@_torch
def affine_grid_generator(theta, size, align_corners):
    """F.affine_grid (ATen's name)."""
    return _E.nn.functional.affine_grid(theta, list(size), align_corners)


@_torch
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(F.group_norm's output, the mean and 1 / sqrt(var + eps) of each (sample, group), shaped
    (N, group)): ATen's native_group_norm."""
    x = _statistics_input(input).reshape(N, group, -1)
    mean = x.mean(-1)
    rstd = (x.var(-1, unbiased=False) + eps).rsqrt()
    out = _E.nn.functional.group_norm(input, group, weight, bias, eps)
    return out, mean.to(input.dtype), rstd.to(input.dtype)
