// The transformer layers as PyTorch builds them: TransformerEncoderLayer and
// TransformerDecoderLayer (post-norm, or pre-norm with norm_first; relu, gelu or any function), the
// TransformerEncoder and TransformerDecoder stacks, and the encoder-decoder Transformer, with
// torch.nn's defaults, state-dict keys (layers.0.self_attn.in_proj_weight, ...) and initialisation.
#pragma once

#include <functional>
#include <string>

#include "ember/nn/modules/attention.h"
#include "ember/nn/modules/layers.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/normalization.h"
#include "ember/nn/modules/sequential.h"

namespace ember::nn {

struct TransformerLayerOptions {
  TransformerLayerOptions(int64_t d_model, int64_t nhead) : d_model(d_model), nhead(nhead) {}
  int64_t d_model, nhead;
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;
  std::string activation = "relu";                     // "relu" or "gelu"
  std::function<Tensor(const Tensor&)> activation_fn;  // any function, in place of `activation`
  double layer_norm_eps = 1e-5;
  bool batch_first = false;  // (N, L, E) instead of (L, N, E)
  bool norm_first = false;   // LayerNorm before each block (pre-norm) instead of after the sum
  TransformerLayerOptions& with_dim_feedforward(int64_t d) {
    dim_feedforward = d;
    return *this;
  }
  TransformerLayerOptions& with_dropout(double p) {
    dropout = p;
    return *this;
  }
  TransformerLayerOptions& with_activation(std::string a) {
    activation = std::move(a);
    return *this;
  }
  TransformerLayerOptions& with_activation(std::function<Tensor(const Tensor&)> f) {
    activation_fn = std::move(f);
    return *this;
  }
  TransformerLayerOptions& with_layer_norm_eps(double eps) {
    layer_norm_eps = eps;
    return *this;
  }
  TransformerLayerOptions& with_batch_first(bool b) {
    batch_first = b;
    return *this;
  }
  TransformerLayerOptions& with_norm_first(bool b) {
    norm_first = b;
    return *this;
  }
};

/// Self-attention and a feed-forward block, each with a residual connection and a LayerNorm.
class TransformerEncoderLayer : public Module {
 public:
  explicit TransformerEncoderLayer(TransformerLayerOptions options);
  /// src (L, N, E), or (N, L, E) with batch_first, or (L, E); masks as MultiheadAttention's.
  Tensor forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask);
  Tensor forward(const Tensor& src) override { return forward(src, Tensor(), Tensor()); }
  std::string name() const override { return "TransformerEncoderLayer"; }

  const TransformerLayerOptions options;
  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;
  std::shared_ptr<LayerNorm> norm1, norm2;

 protected:
  std::shared_ptr<Module> clone_impl() const override;
};

/// Self-attention over the target, attention over the encoder's output (memory), and a
/// feed-forward block, each with a residual connection and a LayerNorm.
class TransformerDecoderLayer : public Module {
 public:
  explicit TransformerDecoderLayer(TransformerLayerOptions options);
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor());
  std::string name() const override { return "TransformerDecoderLayer"; }

  const TransformerLayerOptions options;
  std::shared_ptr<MultiheadAttention> self_attn, multihead_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2, dropout3;
  std::shared_ptr<LayerNorm> norm1, norm2, norm3;

 protected:
  std::shared_ptr<Module> clone_impl() const override;
};

/// num_layers copies of encoder_layer (its values copied into each), then norm if given.
class TransformerEncoder : public Module {
 public:
  TransformerEncoder(const std::shared_ptr<TransformerEncoderLayer>& encoder_layer,
                     int64_t num_layers, std::shared_ptr<LayerNorm> norm = nullptr);
  Tensor forward(const Tensor& src, const Tensor& mask, const Tensor& src_key_padding_mask);
  Tensor forward(const Tensor& src) override { return forward(src, Tensor(), Tensor()); }
  std::string name() const override { return "TransformerEncoder"; }
  /// The i-th layer.
  std::shared_ptr<TransformerEncoderLayer> layer(int64_t i) const;

  const int64_t num_layers;
  std::shared_ptr<Sequential> layers;  // "0", "1", ...: PyTorch's ModuleList keys
  std::shared_ptr<LayerNorm> norm;     // or null

 protected:
  std::shared_ptr<Module> clone_impl() const override;

 private:
  TransformerLayerOptions layer_options_;
};

/// num_layers copies of decoder_layer, then norm if given.
class TransformerDecoder : public Module {
 public:
  TransformerDecoder(const std::shared_ptr<TransformerDecoderLayer>& decoder_layer,
                     int64_t num_layers, std::shared_ptr<LayerNorm> norm = nullptr);
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor());
  std::string name() const override { return "TransformerDecoder"; }
  std::shared_ptr<TransformerDecoderLayer> layer(int64_t i) const;

  const int64_t num_layers;
  std::shared_ptr<Sequential> layers;
  std::shared_ptr<LayerNorm> norm;

 protected:
  std::shared_ptr<Module> clone_impl() const override;

 private:
  TransformerLayerOptions layer_options_;
};

struct TransformerOptions : TransformerLayerOptions {
  /// PyTorch's defaults: "Attention Is All You Need"'s base model.
  TransformerOptions(int64_t d_model = 512, int64_t nhead = 8, int64_t num_encoder_layers = 6,
                     int64_t num_decoder_layers = 6)
      : TransformerLayerOptions(d_model, nhead),
        num_encoder_layers(num_encoder_layers),
        num_decoder_layers(num_decoder_layers) {}
  int64_t num_encoder_layers, num_decoder_layers;
};

/// The encoder-decoder: encoder (layers and a final LayerNorm), decoder (likewise); every weight
/// matrix re-initialised with xavier_uniform_, as PyTorch's.
class Transformer : public Module {
 public:
  explicit Transformer(TransformerOptions options = TransformerOptions());
  /// src (S, N, E), tgt (T, N, E) (batch first with batch_first) -> (T, N, E).
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = Tensor(),
                 const Tensor& tgt_mask = Tensor(), const Tensor& memory_mask = Tensor(),
                 const Tensor& src_key_padding_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor());
  std::string name() const override { return "Transformer"; }
  /// (sz, sz): -inf above the diagonal, 0 elsewhere.
  static Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options = {});

  const TransformerOptions options;
  std::shared_ptr<TransformerEncoder> encoder;
  std::shared_ptr<TransformerDecoder> decoder;

 protected:
  std::shared_ptr<Module> clone_impl() const override;
};

}  // namespace ember::nn
