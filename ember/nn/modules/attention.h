// nn::MultiheadAttention: PyTorch's parameter names (in_proj_weight, in_proj_bias, out_proj.weight,
// or q/k/v_proj_weight when keys and values are narrower or wider), initialisation and forward,
// over nn::functional::multi_head_attention_forward.
#pragma once

#include <optional>
#include <tuple>

#include "ember/nn/attention.h"
#include "ember/nn/module.h"
#include "ember/nn/modules/linear.h"

namespace ember::nn {

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim(embed_dim), num_heads(num_heads) {}
  int64_t embed_dim, num_heads;
  double dropout = 0;  // on the attention weights, in training
  bool bias = true;
  bool add_bias_kv = false;
  bool add_zero_attn = false;
  std::optional<int64_t> kdim, vdim;  // default embed_dim
  bool batch_first = false;           // (N, L, E) instead of (L, N, E)
  MultiheadAttentionOptions& with_dropout(double p) {
    dropout = p;
    return *this;
  }
  MultiheadAttentionOptions& with_bias(bool b) {
    bias = b;
    return *this;
  }
  MultiheadAttentionOptions& with_add_bias_kv(bool b) {
    add_bias_kv = b;
    return *this;
  }
  MultiheadAttentionOptions& with_add_zero_attn(bool b) {
    add_zero_attn = b;
    return *this;
  }
  MultiheadAttentionOptions& with_kdim(int64_t d) {
    kdim = d;
    return *this;
  }
  MultiheadAttentionOptions& with_vdim(int64_t d) {
    vdim = d;
    return *this;
  }
  MultiheadAttentionOptions& with_batch_first(bool b) {
    batch_first = b;
    return *this;
  }
};

class MultiheadAttention : public Module {
 public:
  explicit MultiheadAttention(MultiheadAttentionOptions options);
  MultiheadAttention(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttention(MultiheadAttentionOptions(embed_dim, num_heads)) {}

  /// (output, weights): see functional::multi_head_attention_forward; with batch_first the
  /// inputs and the output are (N, L, E). The weights are undefined without need_weights.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = Tensor(),
                                     bool need_weights = true, const Tensor& attn_mask = Tensor(),
                                     bool average_attn_weights = true);
  /// Self-attention's output alone (need_weights = false), for Sequential.
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "MultiheadAttention"; }
  std::string extra_repr() const override;
  void reset_parameters();

  const MultiheadAttentionOptions options;
  const int64_t head_dim;
  Tensor& in_proj_weight;  // (3E, E), or undefined when kdim or vdim differs from E
  Tensor& q_proj_weight;   // (E, E), (E, kdim), (E, vdim) in that case, else undefined
  Tensor& k_proj_weight;
  Tensor& v_proj_weight;
  Tensor& in_proj_bias;  // (3E) or undefined
  std::shared_ptr<Linear> out_proj;
  Tensor& bias_k;  // (1, 1, E) with add_bias_kv, else undefined
  Tensor& bias_v;

 protected:
  std::shared_ptr<Module> clone_impl() const override;

 private:
  bool same_embed_dim() const;
  functional::MultiheadAttentionWeights weights() const;
};

}  // namespace ember::nn
