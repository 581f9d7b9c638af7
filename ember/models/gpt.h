// A GPT (decoder-only transformer) as nanoGPT builds it: its configuration (GPTConfig), module
// names and state-dict keys (transformer.wte, transformer.h.0.attn.c_attn, lm_head, ...), pre-norm
// blocks, GELU MLPs, causal attention through the fused kernel, the token embedding tied to the
// output layer, and nanoGPT's initialisation. A state dict saved from nanoGPT's model.py loads
// into it and gives the same logits, and the other way round.
#pragma once

#include <optional>
#include <utility>

#include "ember/core/generator.h"
#include "ember/nn/modules/embedding.h"
#include "ember/nn/modules/layers.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/normalization.h"
#include "ember/nn/modules/sequential.h"

namespace ember::models {

struct GPTConfig {
  int64_t block_size = 1024;  // the longest context
  int64_t vocab_size = 50304;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  int64_t n_embd = 768;
  double dropout = 0.0;
  bool bias = true;  // biases in the linear layers and layer norms
};

// GPT's parts, named as nanoGPT's classes (models::MLP is another model).
namespace gpt {

/// Causal self-attention over n_head heads: c_attn (q, k, v in one GEMM), the fused attention
/// kernel (never the T x T weights), c_proj, dropout on the weights and on the output.
class CausalSelfAttention : public nn::Module {
 public:
  explicit CausalSelfAttention(const GPTConfig& config);
  Tensor forward(const Tensor& x) override;  // (B, T, C) -> (B, T, C)
  std::string name() const override { return "CausalSelfAttention"; }

  const GPTConfig config;
  std::shared_ptr<nn::Linear> c_attn, c_proj;
  std::shared_ptr<nn::Dropout> attn_dropout, resid_dropout;

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override;
};

/// c_fc (C -> 4C), exact GELU, c_proj (4C -> C), dropout.
class MLP : public nn::Module {
 public:
  explicit MLP(const GPTConfig& config);
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "MLP"; }

  const GPTConfig config;
  std::shared_ptr<nn::Linear> c_fc, c_proj;
  std::shared_ptr<nn::GELU> gelu;
  std::shared_ptr<nn::Dropout> dropout;

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override;
};

/// x + attn(ln_1(x)), then + mlp(ln_2(x)).
class Block : public nn::Module {
 public:
  explicit Block(const GPTConfig& config);
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "Block"; }

  const GPTConfig config;
  std::shared_ptr<nn::LayerNorm> ln_1, ln_2;
  std::shared_ptr<CausalSelfAttention> attn;
  std::shared_ptr<MLP> mlp;

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override;
};

/// nanoGPT's `transformer` ModuleDict: wte, wpe, drop, h (the blocks), ln_f.
class GPTTransformer : public nn::Module {
 public:
  explicit GPTTransformer(const GPTConfig& config);
  std::string name() const override { return "ModuleDict"; }

  const GPTConfig config;
  std::shared_ptr<nn::Embedding> wte, wpe;
  std::shared_ptr<nn::Dropout> drop;
  std::shared_ptr<nn::Sequential> h;
  std::shared_ptr<nn::LayerNorm> ln_f;

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override;
};

}  // namespace gpt

class GPT : public nn::Module {
 public:
  explicit GPT(GPTConfig config = {});
  /// idx (B, T) int64 token ids, T <= block_size -> logits (B, T, vocab_size).
  Tensor forward(const Tensor& idx) override;
  /// With targets (B, T) (-1: ignored): (logits, mean cross-entropy).
  std::pair<Tensor, Tensor> forward(const Tensor& idx, const Tensor& targets);
  /// The two forwards through the module's hooks (Note [Module calls] in nn/module.cpp).
  using nn::Module::operator();
  std::pair<Tensor, Tensor> operator()(const Tensor& idx, const Tensor& targets);
  std::string name() const override { return "GPT"; }

  /// Appends max_new_tokens tokens to idx (B, T), each sampled from the softmax of the last
  /// position's logits / temperature, kept to the top_k most likely when given; the context is
  /// the last block_size tokens. Runs in eval mode without gradients; the module's mode is kept.
  Tensor generate(Tensor idx, int64_t max_new_tokens, double temperature = 1.0,
                  std::optional<int64_t> top_k = std::nullopt, Generator* gen = nullptr);

  /// Parameters (not counting the position embedding with non_embedding, as nanoGPT reports).
  int64_t num_parameters(bool non_embedding = true) const;

  /// A state dict from nanoGPT's model.py under PyTorch < 2 holds each block's causal mask as a
  /// buffer (h.N.attn.bias); this model needs none, and drops those keys before loading.
  void load_nanogpt_state_dict(nn::NamedTensors state, bool strict = true);

  const GPTConfig config;
  std::shared_ptr<gpt::GPTTransformer> transformer;
  std::shared_ptr<nn::Linear> lm_head;  // its weight is transformer->wte->weight

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override;

 private:
  Tensor hidden(const Tensor& idx);  // the blocks and ln_f: (B, T, C)
};

/// nanoGPT's configure_optimizers split: parameters of 2 or more dims (matrices, embeddings)
/// decay, the others (biases, layer-norm weights) do not.
std::pair<std::vector<Tensor>, std::vector<Tensor>> decay_groups(const nn::Module& model);

}  // namespace ember::models
