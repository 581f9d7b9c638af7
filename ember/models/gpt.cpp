#include "ember/models/gpt.h"

#include <cmath>
#include <limits>

#include "ember/core/grad_mode.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/ops/attention.h"
#include "ember/ops/factory.h"
#include "ember/ops/join.h"
#include "ember/ops/random.h"
#include "ember/ops/sort.h"

namespace ember::models {
namespace {

std::shared_ptr<nn::Linear> linear(int64_t in, int64_t out, bool bias) {
  return nn::make<nn::Linear>(in, out, bias);
}

bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

void check_config(const GPTConfig& c) {
  EMBER_CHECK_VALUE(c.block_size > 0 && c.vocab_size > 0 && c.n_layer > 0 && c.n_head > 0 &&
                        c.n_embd > 0,
                    "[GPT] expected positive block_size, vocab_size, n_layer, n_head and n_embd, "
                    "got ",
                    c.block_size, ", ", c.vocab_size, ", ", c.n_layer, ", ", c.n_head, " and ",
                    c.n_embd);
  EMBER_CHECK_VALUE(c.n_embd % c.n_head == 0, "[GPT] n_embd (", c.n_embd,
                    ") must be a multiple of n_head (", c.n_head, ")");
  EMBER_CHECK_VALUE(c.dropout >= 0 && c.dropout < 1, "[GPT] dropout must be in [0, 1), got ",
                    c.dropout);
}

}  // namespace

namespace gpt {

CausalSelfAttention::CausalSelfAttention(const GPTConfig& c) : config(c) {
  c_attn = register_module("c_attn", linear(c.n_embd, 3 * c.n_embd, c.bias));
  c_proj = register_module("c_proj", linear(c.n_embd, c.n_embd, c.bias));
  attn_dropout = register_module("attn_dropout", nn::make<nn::Dropout>(c.dropout));
  resid_dropout = register_module("resid_dropout", nn::make<nn::Dropout>(c.dropout));
}

Tensor CausalSelfAttention::forward(const Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), H = config.n_head;
  std::vector<Tensor> qkv = (*c_attn)(x).split(C, 2);
  for (Tensor& t : qkv) t = t.view({B, T, H, C / H}).transpose(1, 2);  // (B, H, T, hs)
  double p = is_training() ? attn_dropout->p : 0.0;
  Tensor y = scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], Tensor(), p, /*is_causal=*/true);
  y = y.transpose(1, 2).contiguous().view({B, T, C});
  return (*resid_dropout)((*c_proj)(y));
}

std::shared_ptr<nn::Module> CausalSelfAttention::clone_impl() const {
  return std::make_shared<CausalSelfAttention>(config);
}

MLP::MLP(const GPTConfig& c) : config(c) {
  c_fc = register_module("c_fc", linear(c.n_embd, 4 * c.n_embd, c.bias));
  gelu = register_module("gelu", nn::make<nn::GELU>());
  c_proj = register_module("c_proj", linear(4 * c.n_embd, c.n_embd, c.bias));
  dropout = register_module("dropout", nn::make<nn::Dropout>(c.dropout));
}

Tensor MLP::forward(const Tensor& x) {
  return (*dropout)((*c_proj)((*gelu)((*c_fc)(x))));
}

std::shared_ptr<nn::Module> MLP::clone_impl() const { return std::make_shared<MLP>(config); }

Block::Block(const GPTConfig& c) : config(c) {
  ln_1 = register_module("ln_1", nn::make<nn::LayerNorm>(Shape{c.n_embd}, 1e-5, true, c.bias));
  attn = register_module("attn", nn::make<CausalSelfAttention>(c));
  ln_2 = register_module("ln_2", nn::make<nn::LayerNorm>(Shape{c.n_embd}, 1e-5, true, c.bias));
  mlp = register_module("mlp", nn::make<MLP>(c));
}

Tensor Block::forward(const Tensor& x) {
  Tensor h = x + (*attn)((*ln_1)(x));
  return h + (*mlp)((*ln_2)(h));
}

std::shared_ptr<nn::Module> Block::clone_impl() const { return std::make_shared<Block>(config); }

GPTTransformer::GPTTransformer(const GPTConfig& c) : config(c) {
  wte = register_module("wte", nn::make<nn::Embedding>(c.vocab_size, c.n_embd));
  wpe = register_module("wpe", nn::make<nn::Embedding>(c.block_size, c.n_embd));
  drop = register_module("drop", nn::make<nn::Dropout>(c.dropout));
  h = register_module("h", nn::make<nn::Sequential>());
  for (int64_t i = 0; i < c.n_layer; ++i) h->push_back(nn::make<Block>(c));
  ln_f = register_module("ln_f", nn::make<nn::LayerNorm>(Shape{c.n_embd}, 1e-5, true, c.bias));
}

std::shared_ptr<nn::Module> GPTTransformer::clone_impl() const {
  return std::make_shared<GPTTransformer>(config);
}

}  // namespace gpt

GPT::GPT(GPTConfig c) : config(c) {
  check_config(c);
  transformer = register_module("transformer", nn::make<gpt::GPTTransformer>(c));
  lm_head = register_module("lm_head", linear(c.n_embd, c.vocab_size, false));
  // Weight tying: one tensor under both names (parameters() lists it once; the state dict has
  // both keys, as PyTorch's).
  lm_head->weight = transformer->wte->weight;
  if (!should_initialize()) return;
  NoGradGuard no_grad;
  apply([](nn::Module& m) {
    if (auto* l = dynamic_cast<nn::Linear*>(&m)) {
      nn::init::normal_(l->weight, 0.0, 0.02);
      if (l->bias.defined()) nn::init::zeros_(l->bias);
    } else if (auto* e = dynamic_cast<nn::Embedding*>(&m)) {
      nn::init::normal_(e->weight, 0.0, 0.02);
    }
  });
  // GPT-2's scaled initialisation of the projections into the residual stream.
  double std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.n_layer));
  for (auto& [name, p] : named_parameters())
    if (ends_with(name, "c_proj.weight")) nn::init::normal_(p, 0.0, std);
}

Tensor GPT::hidden(const Tensor& idx) {
  EMBER_CHECK_VALUE(idx.dim() == 2, "[GPT] expected token ids of shape (B, T), got ",
                    idx.sizes());
  const int64_t T = idx.size(1);
  EMBER_CHECK_VALUE(T <= config.block_size, "[GPT] cannot forward a sequence of length ", T,
                    ": the block size is only ", config.block_size);
  Tensor pos = arange(0, T, 1, TensorOptions(kInt64).with_device(idx.device()));
  Tensor x = (*transformer->drop)((*transformer->wte)(idx) +
                                        (*transformer->wpe)(pos));
  for (size_t i = 0; i < transformer->h->size(); ++i) x = (*(*transformer->h)[i])(x);
  return (*transformer->ln_f)(x);
}

Tensor GPT::forward(const Tensor& idx) { return (*lm_head)(hidden(idx)); }

std::pair<Tensor, Tensor> GPT::operator()(const Tensor& idx, const Tensor& targets) {
  std::vector<Tensor> out = call({idx, targets}, [this](const std::vector<Tensor>& in) {
    auto [logits, loss] = forward(in.at(0), in.at(1));
    return std::vector<Tensor>{logits, loss};
  });
  EMBER_CHECK(out.size() == 2, "[GPT] a forward hook left ", out.size(),
              " outputs where (logits, loss) were");
  return {out[0], out[1]};
}

std::pair<Tensor, Tensor> GPT::forward(const Tensor& idx, const Tensor& targets) {
  Tensor logits = forward(idx);
  EMBER_CHECK_VALUE(targets.sizes() == idx.sizes(), "[GPT] expected targets of shape ",
                    idx.sizes(), ", got ", targets.sizes());
  Tensor loss = nn::functional::cross_entropy(logits.view({-1, logits.size(-1)}),
                                              targets.reshape({-1}), Tensor(),
                                              /*ignore_index=*/-1);
  return {logits, loss};
}

Tensor GPT::generate(Tensor idx, int64_t max_new_tokens, double temperature,
                     std::optional<int64_t> top_k, Generator* gen) {
  EMBER_CHECK_VALUE(max_new_tokens >= 0, "[GPT::generate] expected max_new_tokens >= 0, got ",
                    max_new_tokens);
  EMBER_CHECK_VALUE(temperature > 0, "[GPT::generate] expected a temperature > 0, got ",
                    temperature);
  EMBER_CHECK_VALUE(!top_k || *top_k > 0, "[GPT::generate] expected top_k > 0, got ",
                    top_k.value_or(0));
  NoGradGuard no_grad;
  bool was_training = is_training();
  eval();
  for (int64_t i = 0; i < max_new_tokens; ++i) {
    int64_t T = idx.size(1);
    Tensor context = T <= config.block_size ? idx : idx.narrow(1, T - config.block_size,
                                                              config.block_size);
    Tensor h = hidden(context);
    Tensor logits = (*lm_head)(h.narrow(1, h.size(1) - 1, 1)).squeeze(1) / temperature;
    if (top_k) {
      int64_t k = std::min(*top_k, logits.size(-1));
      Tensor kth = std::get<0>(topk(logits, k)).narrow(1, k - 1, 1);
      logits = logits.masked_fill(lt(logits, kth), -std::numeric_limits<double>::infinity());
    }
    Tensor next = multinomial(softmax(logits, -1), 1, false, gen);
    idx = cat({idx, next}, 1);
  }
  train(was_training);
  return idx;
}

int64_t GPT::num_parameters(bool non_embedding) const {
  int64_t n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  if (non_embedding) n -= transformer->wpe->weight.numel();
  return n;
}

void GPT::load_nanogpt_state_dict(nn::NamedTensors state, bool strict) {
  nn::NamedTensors kept;
  for (auto& [k, t] : state)
    if (!ends_with(k, ".attn.bias") && !ends_with(k, ".attn.masked_bias")) kept.emplace_back(k, t);
  load_state_dict(kept, strict);
}

std::shared_ptr<nn::Module> GPT::clone_impl() const { return std::make_shared<GPT>(config); }

std::pair<std::vector<Tensor>, std::vector<Tensor>> decay_groups(const nn::Module& model) {
  std::vector<Tensor> decay, no_decay;
  for (const Tensor& p : model.parameters())
    (p.dim() >= 2 ? decay : no_decay).push_back(p);
  return {decay, no_decay};
}

}  // namespace ember::models
