"""Multi-head attention: nn.MultiheadAttention and F.multi_head_attention_forward with PyTorch
1.13's arguments, parameter names (in_proj_weight, out_proj.weight, ...), mask conventions and
outputs. The computation is C++'s (ember/nn/attention.h): the heads run through the fused attention
kernel, which never holds the L x S weights, unless the caller asks for the weights
(need_weights=True), which only the math path has."""
import warnings

from ... import _C
from .. import init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention", "multi_head_attention_forward"]

_ops = _C._ops


def _check_mask(mask, name):
    """PyTorch's deprecation of uint8 masks, said where Python can say it; the C++ side reads
    them as bool."""
    if mask is not None and mask.dtype == _C.uint8:
        warnings.warn(f"Byte tensor for {name} in nn.MultiheadAttention is deprecated. "
                      "Use bool tensor instead.")
    return mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                 out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True):
    """query (L, N, E) or (L, E), key and value (S, N, E) or (S, E); returns (output (L, N, E),
    weights (N, L, S), averaged over heads, or (N, heads, L, S), or None). Computed by
    ember::nn::functional::multi_head_attention_forward (C++), which also serves C++'s
    nn::MultiheadAttention; query, key and value passed as one tensor are projected by one GEMM."""
    out, weights = _C._F._multi_head_attention_forward(
        query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k,
        bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training,
        _check_mask(key_padding_mask, "key_padding_mask"), need_weights,
        _check_mask(attn_mask, "attn_mask"), use_separate_proj_weight, q_proj_weight,
        k_proj_weight, v_proj_weight, static_k, static_v, average_attn_weights)
    return out, (weights if need_weights else None)


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
