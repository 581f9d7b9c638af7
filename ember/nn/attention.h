// Multi-head attention as torch.nn.functional.multi_head_attention_forward computes it: the input
// projections, PyTorch's mask conventions, the heads through the fused attention kernel (or the
// math path when the caller wants the weights), the output projection. nn::MultiheadAttention and
// Python's nn.MultiheadAttention both run this one function.
#pragma once

#include <tuple>

#include "ember/core/tensor.h"

namespace ember::nn::functional {

/// The parameters of nn.MultiheadAttention, under its names. Either in_proj_weight (3E, E), for
/// keys and values as wide as the queries, or the three separate projections.
struct MultiheadAttentionWeights {
  Tensor in_proj_weight;                               // (3E, E) or undefined
  Tensor in_proj_bias;                                 // (3E) or undefined
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;  // (E, E), (E, kdim), (E, vdim)
  Tensor bias_k, bias_v;  // (1, 1, E): one more key and value per sequence, or undefined
  Tensor out_proj_weight, out_proj_bias;
};

/// One call's options, with PyTorch's defaults.
struct MultiheadAttentionArgs {
  /// (N, S) or (S) unbatched: true (bool) ignores that key; a float mask is added to the scores.
  Tensor key_padding_mask;
  /// (L, S), or (N * num_heads, L, S): true ignores the pair; a float mask is added.
  Tensor attn_mask;
  bool need_weights = true;          // also return the attention weights (the math path)
  bool average_attn_weights = true;  // weights averaged over the heads: (N, L, S)
  bool add_zero_attn = false;        // a zero key and value appended to every sequence
  double dropout_p = 0;              // on the attention weights, when training
  bool training = true;
  Tensor static_k, static_v;  // (N * num_heads, S, head_dim): keys and values given whole
};

/// query (L, N, E) or (L, E), key (S, N, kdim), value (S, N, vdim) -> (output (L, N, E),
/// weights (N, L, S), or (N, num_heads, L, S) when not averaged, or undefined without
/// need_weights). When query, key and value are one tensor the three projections are one GEMM.
std::tuple<Tensor, Tensor> multi_head_attention_forward(const Tensor& query, const Tensor& key,
                                                        const Tensor& value, int64_t embed_dim,
                                                        int64_t num_heads,
                                                        const MultiheadAttentionWeights& weights,
                                                        const MultiheadAttentionArgs& args = {});

/// (sz, sz) float: -inf above the diagonal, 0 elsewhere (a position sees itself and those before).
Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options = {});

}  // namespace ember::nn::functional
