#include "ember/nn/modules/attention.h"

#include "ember/nn/init.h"

namespace ember::nn {

MultiheadAttention::MultiheadAttention(MultiheadAttentionOptions o)
    : options(o),
      head_dim(o.num_heads > 0 ? o.embed_dim / o.num_heads : 0),
      in_proj_weight(register_parameter(
          "in_proj_weight",
          same_embed_dim() ? uninitialized({3 * o.embed_dim, o.embed_dim}) : Tensor())),
      q_proj_weight(register_parameter(
          "q_proj_weight",
          same_embed_dim() ? Tensor() : uninitialized({o.embed_dim, o.embed_dim}))),
      k_proj_weight(register_parameter(
          "k_proj_weight", same_embed_dim()
                               ? Tensor()
                               : uninitialized({o.embed_dim, o.kdim.value_or(o.embed_dim)}))),
      v_proj_weight(register_parameter(
          "v_proj_weight", same_embed_dim()
                               ? Tensor()
                               : uninitialized({o.embed_dim, o.vdim.value_or(o.embed_dim)}))),
      in_proj_bias(
          register_parameter("in_proj_bias", o.bias ? uninitialized({3 * o.embed_dim}) : Tensor())),
      bias_k(register_parameter("bias_k",
                                o.add_bias_kv ? uninitialized({1, 1, o.embed_dim}) : Tensor())),
      bias_v(register_parameter("bias_v",
                                o.add_bias_kv ? uninitialized({1, 1, o.embed_dim}) : Tensor())) {
  EMBER_CHECK_VALUE(o.embed_dim > 0 && o.num_heads > 0 && head_dim * o.num_heads == o.embed_dim,
                    "[MultiheadAttention] embed_dim must be divisible by num_heads, got ",
                    o.embed_dim, " and ", o.num_heads);
  EMBER_CHECK_VALUE(o.dropout >= 0 && o.dropout <= 1,
                    "[MultiheadAttention] dropout must be in [0, 1], got ", o.dropout);
  out_proj =
      register_module("out_proj", std::make_shared<Linear>(o.embed_dim, o.embed_dim, o.bias));
  if (should_initialize()) reset_parameters();
}

bool MultiheadAttention::same_embed_dim() const {
  return options.kdim.value_or(options.embed_dim) == options.embed_dim &&
         options.vdim.value_or(options.embed_dim) == options.embed_dim;
}

void MultiheadAttention::reset_parameters() {
  for (Tensor* w : {&in_proj_weight, &q_proj_weight, &k_proj_weight, &v_proj_weight})
    if (w->defined()) init::xavier_uniform_(*w);
  // PyTorch's order and values: the projection biases start at zero, out_proj's weight keeps
  // Linear's initialisation.
  if (in_proj_bias.defined()) {
    init::constant_(in_proj_bias, 0.0);
    init::constant_(out_proj->bias, 0.0);
  }
  if (bias_k.defined()) init::xavier_normal_(bias_k);
  if (bias_v.defined()) init::xavier_normal_(bias_v);
}

functional::MultiheadAttentionWeights MultiheadAttention::weights() const {
  functional::MultiheadAttentionWeights w;
  w.in_proj_weight = in_proj_weight;
  w.in_proj_bias = in_proj_bias;
  w.q_proj_weight = q_proj_weight;
  w.k_proj_weight = k_proj_weight;
  w.v_proj_weight = v_proj_weight;
  w.bias_k = bias_k;
  w.bias_v = bias_v;
  w.out_proj_weight = out_proj->weight;
  w.out_proj_bias = out_proj->bias;
  return w;
}

std::tuple<Tensor, Tensor> MultiheadAttention::forward(const Tensor& query, const Tensor& key,
                                                       const Tensor& value,
                                                       const Tensor& key_padding_mask,
                                                       bool need_weights, const Tensor& attn_mask,
                                                       bool average_attn_weights) {
  functional::MultiheadAttentionArgs args;
  args.key_padding_mask = key_padding_mask;
  args.attn_mask = attn_mask;
  args.need_weights = need_weights;
  args.average_attn_weights = average_attn_weights;
  args.add_zero_attn = options.add_zero_attn;
  args.dropout_p = options.dropout;
  args.training = is_training();
  const bool transpose = options.batch_first && query.dim() == 3;
  if (!transpose)
    return functional::multi_head_attention_forward(query, key, value, options.embed_dim,
                                                    options.num_heads, weights(), args);
  // (N, L, E) -> (L, N, E), keeping one tensor one tensor so self-attention stays one GEMM.
  Tensor q = query.transpose(0, 1);
  Tensor k = key.is_same(query) ? q : key.transpose(0, 1);
  Tensor v = value.is_same(key) ? k : value.transpose(0, 1);
  auto [out, attn] = functional::multi_head_attention_forward(q, k, v, options.embed_dim,
                                                              options.num_heads, weights(), args);
  return {out.transpose(0, 1), attn};
}

Tensor MultiheadAttention::forward(const Tensor& x) {
  return std::get<0>(forward(x, x, x, Tensor(), /*need_weights=*/false));
}

std::string MultiheadAttention::extra_repr() const {
  // PyTorch prints the out_proj child only; the configuration here tells a replaced module from
  // the constructor's (Module::replaced_modules compares reprs).
  std::string s = "embed_dim=" + std::to_string(options.embed_dim) +
                  ", num_heads=" + std::to_string(options.num_heads);
  if (options.dropout != 0) s += ", dropout=" + std::to_string(options.dropout);
  if (!same_embed_dim())
    s += ", kdim=" + std::to_string(k_proj_weight.size(1)) +
         ", vdim=" + std::to_string(v_proj_weight.size(1));
  if (options.add_bias_kv) s += ", add_bias_kv=True";
  if (options.add_zero_attn) s += ", add_zero_attn=True";
  if (options.batch_first) s += ", batch_first=True";
  return s;
}

std::shared_ptr<Module> MultiheadAttention::clone_impl() const {
  return std::make_shared<MultiheadAttention>(options);
}

}  // namespace ember::nn
