"""Multi-head attention: nn.MultiheadAttention and F.multi_head_attention_forward with PyTorch
1.13's arguments, parameter names (in_proj_weight, out_proj.weight, ...), mask conventions and
outputs. The heads run through F.scaled_dot_product_attention, ember's fused kernel that never
holds the L x S weights, unless the caller asks for the weights (need_weights=True), which only
the math path has."""
import warnings

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention", "multi_head_attention_forward"]

_ops = _C._ops


def _in_projection(query, key, value, num_heads, in_proj_weight, in_proj_bias,
                   use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight):
    if not use_separate_proj_weight:
        if query is key and key is value:  # self-attention: one GEMM for q, k and v
            return F.linear(query, in_proj_weight, in_proj_bias).chunk(3, dim=-1)
        weights = in_proj_weight.chunk(3)
    else:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise ValueError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight "
                             "or v_proj_weight is None")
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    biases = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
    return tuple(F.linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))


def _as_float_mask(mask, dtype, name):
    """PyTorch's MultiheadAttention masks: bool (or legacy uint8) True means 'do not attend',
    float is added to the scores. Returned as the float to add (-inf where bool was True)."""
    if mask is None:
        return None
    if mask.dtype == _C.uint8:
        warnings.warn(f"Byte tensor for {name} in nn.MultiheadAttention is deprecated. "
                      "Use bool tensor instead.")
        mask = mask.to(_C.bool)
    if mask.dtype == _C.bool:
        return _ops.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(
            mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported, got "
                             f"{mask.dtype}")
    return mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                 out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True):
    """query (L, N, E) or (L, E), key and value (S, N, E) or (S, E); returns (output (L, N, E),
    weights (N, L, S), averaged over heads, or (N, heads, L, S), or None)."""
    is_batched = query.dim() == 3
    if not is_batched:
        if query.dim() != 2:
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                                 f"{query.dim()}-D query tensor")
        same_kv, same_qk = key is value, query is key
        query = query.unsqueeze(1)
        key = query if same_qk else key.unsqueeze(1)
        value = key if same_kv else value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got "
                             f"{embed_dim}")
    if embed_dim % num_heads != 0:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                             f"{tuple(value.shape)}")
    head_dim = embed_dim // num_heads
    q, k, v = _in_projection(query, key, value, num_heads, in_proj_weight, in_proj_bias,
                             use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight)

    dtype = q.dtype
    attn_mask = _as_float_mask(attn_mask, dtype, "attn_mask")
    key_padding_mask = _as_float_mask(key_padding_mask, dtype, "key_padding_mask")
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, key.shape[0]):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(tgt_len, key.shape[0])}.")
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, key.shape[0]):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(bsz * num_heads, tgt_len, key.shape[0])}.")
            attn_mask = attn_mask.view(bsz, num_heads, tgt_len, key.shape[0])
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    def pad_masks():
        nonlocal attn_mask, key_padding_mask
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = _ops.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = _ops.cat([v, bias_v.expand(1, bsz, embed_dim)])
        pad_masks()
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # (len, N, E) -> (N, heads, len, head_dim): the masks then broadcast over heads and batch.
    def heads(x):
        return x.reshape(x.shape[0], bsz, num_heads, head_dim).permute(1, 2, 0, 3)

    q = heads(q)
    k = heads(k) if static_k is None else static_k.view(bsz, num_heads, -1, head_dim)
    v = heads(v) if static_v is None else static_v.view(bsz, num_heads, -1, head_dim)
    if add_zero_attn:
        k = _ops.cat([k, _ops.zeros(bsz, num_heads, 1, head_dim, dtype=dtype, device=k.device)], 2)
        v = _ops.cat([v, _ops.zeros(bsz, num_heads, 1, head_dim, dtype=dtype, device=v.device)], 2)
        pad_masks()
    src_len = k.shape[2]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    p = dropout_p if training else 0.0
    if need_weights:
        out, weights = F._attention_math(q, k, v, attn_mask, p)
    else:
        out, weights = F.scaled_dot_product_attention(q, k, v, attn_mask, p), None
    out = out.permute(2, 0, 1, 3).reshape(tgt_len, bsz, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias)
    if weights is not None and average_attn_weights:
        weights = weights.mean(dim=1)
    if not is_batched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights


class MultiheadAttention(Module):
    """Attention over num_heads heads of embed_dim // num_heads features each, with input and output
    projections. Inputs are (L, N, E), or (N, L, E) with batch_first, or unbatched (L, E)."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype if dtype is not None else _C.float32}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_ops.empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(_ops.empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(_ops.empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_ops.empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_ops.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(_ops.empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(_ops.empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True):
        is_batched = query.dim() == 3
        if self.batch_first and is_batched:
            # Keep q, k and v one object when they were, so the in-projection stays one GEMM.
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights
