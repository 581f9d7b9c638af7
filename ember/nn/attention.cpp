#include "ember/nn/attention.h"

#include <array>
#include <limits>

#include "ember/core/error.h"
#include "ember/ops/attention.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/join.h"
#include "ember/ops/linalg.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/pad.h"
#include "ember/ops/reduce.h"
#include "ember/ops/shape.h"

namespace ember::nn::functional {
namespace {

std::string shape_str(const Tensor& t) { return detail::str_cat(t.sizes()); }

/// PyTorch's masks: true (bool, or the deprecated uint8) means "do not attend", a float mask is
/// added to the scores. Returned as the float to add: -inf where the bool was true.
Tensor as_additive_mask(const Tensor& mask, DType dtype, const char* name) {
  if (!mask.defined()) return mask;
  if (mask.dtype() == kBool || mask.dtype() == kUInt8)
    return zeros(mask.sizes(), TensorOptions(dtype).with_device(mask.device()))
        .masked_fill_(mask.to(kBool), -std::numeric_limits<double>::infinity());
  EMBER_CHECK_TYPE(mask.is_floating_point(), "[multi_head_attention_forward] only bool and ",
                   "floating types of ", name, " are supported, got ", mask.dtype());
  return mask;
}

/// q, k and v: one GEMM for self-attention with the packed weight, three otherwise.
std::array<Tensor, 3> in_projection(const Tensor& query, const Tensor& key, const Tensor& value,
                                    bool self_attention, const MultiheadAttentionWeights& w) {
  std::vector<Tensor> weights;
  if (w.in_proj_weight.defined()) {
    if (self_attention) {
      std::vector<Tensor> qkv = linear(query, w.in_proj_weight, w.in_proj_bias).chunk(3, -1);
      return {qkv[0], qkv[1], qkv[2]};
    }
    weights = w.in_proj_weight.chunk(3);
  } else {
    EMBER_CHECK_VALUE(
        w.q_proj_weight.defined() && w.k_proj_weight.defined() && w.v_proj_weight.defined(),
        "[multi_head_attention_forward] without in_proj_weight, q_proj_weight, k_proj_weight and "
        "v_proj_weight must all be given");
    weights = {w.q_proj_weight, w.k_proj_weight, w.v_proj_weight};
  }
  std::vector<Tensor> biases(3);
  if (w.in_proj_bias.defined()) biases = w.in_proj_bias.chunk(3);
  return {linear(query, weights[0], biases[0]), linear(key, weights[1], biases[1]),
          linear(value, weights[2], biases[2])};
}

}  // namespace

std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query_in, const Tensor& key_in, const Tensor& value_in, int64_t embed_dim,
    int64_t num_heads, const MultiheadAttentionWeights& w, const MultiheadAttentionArgs& args) {
  EMBER_OP(multi_head_attention_forward, query_in, key_in, value_in, embed_dim, num_heads, w, args);
  const bool self_attention = query_in.is_same(key_in) && key_in.is_same(value_in);
  const bool batched = query_in.dim() == 3;
  EMBER_CHECK(batched || query_in.dim() == 2, "[multi_head_attention_forward] query should be ",
              "unbatched 2D or batched 3D, got a ", query_in.dim(), "-D tensor");
  EMBER_CHECK(key_in.dim() == query_in.dim() && value_in.dim() == query_in.dim(),
              "[multi_head_attention_forward] query, key and value must have the same number of ",
              "dims, got ", shape_str(query_in), ", ", shape_str(key_in), " and ",
              shape_str(value_in));
  Tensor query = batched ? query_in : query_in.unsqueeze(1);
  Tensor key = batched ? key_in : key_in.unsqueeze(1);
  Tensor value = batched ? value_in : value_in.unsqueeze(1);
  Tensor key_padding_mask = args.key_padding_mask;
  if (!batched && key_padding_mask.defined()) key_padding_mask = key_padding_mask.unsqueeze(0);

  const int64_t tgt_len = query.size(0), bsz = query.size(1);
  EMBER_CHECK_VALUE(query.size(2) == embed_dim, "[multi_head_attention_forward] expected ",
                    "embedding dimension ", embed_dim, ", got ", query.size(2));
  EMBER_CHECK_VALUE(num_heads > 0 && embed_dim % num_heads == 0,
                    "[multi_head_attention_forward] embed_dim ", embed_dim,
                    " is not divisible by num_heads ", num_heads);
  EMBER_CHECK(key.size(0) == value.size(0) && key.size(1) == value.size(1),
              "[multi_head_attention_forward] key shape ", shape_str(key_in),
              " does not match value shape ", shape_str(value_in));
  EMBER_CHECK(key.size(1) == bsz, "[multi_head_attention_forward] query and key have batch ", bsz,
              " and ", key.size(1));
  const int64_t head_dim = embed_dim / num_heads;
  auto [q, k, v] = in_projection(query, key, value, self_attention, w);

  const DType dtype = q.dtype();
  Tensor attn_mask = as_additive_mask(args.attn_mask, dtype, "attn_mask");
  key_padding_mask = as_additive_mask(key_padding_mask, dtype, "key_padding_mask");
  if (attn_mask.defined()) {
    if (attn_mask.dim() == 2) {
      EMBER_CHECK(attn_mask.size(0) == tgt_len && attn_mask.size(1) == key.size(0),
                  "[multi_head_attention_forward] the 2D attn_mask is ", shape_str(attn_mask),
                  " but should be [", tgt_len, ", ", key.size(0), "]");
    } else {
      EMBER_CHECK(attn_mask.dim() == 3, "[multi_head_attention_forward] attn_mask's dimension ",
                  attn_mask.dim(), " is not supported (2 or 3)");
      EMBER_CHECK(attn_mask.size(0) == bsz * num_heads && attn_mask.size(1) == tgt_len &&
                      attn_mask.size(2) == key.size(0),
                  "[multi_head_attention_forward] the 3D attn_mask is ", shape_str(attn_mask),
                  " but should be [", bsz * num_heads, ", ", tgt_len, ", ", key.size(0), "]");
      attn_mask = attn_mask.view({bsz, num_heads, tgt_len, key.size(0)});
    }
  }
  // One more key per sequence (bias_k, add_zero_attn): the masks let every query see it.
  auto pad_masks = [&] {
    if (attn_mask.defined()) attn_mask = pad(attn_mask, {0, 1});
    if (key_padding_mask.defined()) key_padding_mask = pad(key_padding_mask, {0, 1});
  };
  EMBER_CHECK(w.bias_k.defined() == w.bias_v.defined(),
              "[multi_head_attention_forward] bias_k and bias_v must both be given or both not");
  if (w.bias_k.defined()) {
    EMBER_CHECK(!args.static_k.defined() && !args.static_v.defined(),
                "[multi_head_attention_forward] bias cannot be added to static key/value");
    k = cat({k, w.bias_k.expand({1, bsz, embed_dim})});
    v = cat({v, w.bias_v.expand({1, bsz, embed_dim})});
    pad_masks();
  }

  // (len, N, E) -> (N, heads, len, head_dim): the masks then broadcast over batch and heads.
  auto heads = [&](const Tensor& x) {
    return x.reshape({x.size(0), bsz, num_heads, head_dim}).permute({1, 2, 0, 3});
  };
  q = heads(q);
  k = args.static_k.defined() ? args.static_k.view({bsz, num_heads, -1, head_dim}) : heads(k);
  v = args.static_v.defined() ? args.static_v.view({bsz, num_heads, -1, head_dim}) : heads(v);
  if (args.add_zero_attn) {
    TensorOptions zopts = TensorOptions(dtype).with_device(k.device());
    k = cat({k, zeros({bsz, num_heads, 1, head_dim}, zopts)}, 2);
    v = cat({v, zeros({bsz, num_heads, 1, head_dim}, zopts)}, 2);
    pad_masks();
  }
  const int64_t src_len = k.size(2);
  if (key_padding_mask.defined()) {
    EMBER_CHECK(key_padding_mask.dim() == 2 && key_padding_mask.size(0) == bsz &&
                    key_padding_mask.size(1) == src_len,
                "[multi_head_attention_forward] expected key_padding_mask of shape [", bsz, ", ",
                src_len, "], got ", shape_str(key_padding_mask));
    key_padding_mask = key_padding_mask.view({bsz, 1, 1, src_len});
    attn_mask = attn_mask.defined() ? attn_mask + key_padding_mask : key_padding_mask;
  }

  const double p = args.training ? args.dropout_p : 0.0;
  Tensor out, attn_weights;
  if (args.need_weights)
    std::tie(out, attn_weights) = attention_math(q, k, v, attn_mask, p);
  else
    out = scaled_dot_product_attention(q, k, v, attn_mask, p);
  out = out.permute({2, 0, 1, 3}).reshape({tgt_len, bsz, embed_dim});
  out = linear(out, w.out_proj_weight, w.out_proj_bias);
  if (attn_weights.defined() && args.average_attn_weights) attn_weights = attn_weights.mean({1});
  if (!batched) {
    out = out.squeeze(1);
    if (attn_weights.defined()) attn_weights = attn_weights.squeeze(0);
  }
  return {out, attn_weights};
}

Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options) {
  EMBER_OP(generate_square_subsequent_mask, sz, options);
  EMBER_CHECK_VALUE(sz >= 0, "[generate_square_subsequent_mask] size must be >= 0, got ", sz);
  return triu(full({sz, sz}, -std::numeric_limits<double>::infinity(), options), 1);
}

}  // namespace ember::nn::functional
