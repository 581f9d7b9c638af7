#include "ember/nn/modules/transformer.h"

#include "ember/nn/init.h"
#include "ember/ops/activation.h"
#include "ember/ops/elementwise.h"

namespace ember::nn {
namespace {

MultiheadAttentionOptions attention_options(const TransformerLayerOptions& o) {
  return MultiheadAttentionOptions(o.d_model, o.nhead)
      .with_dropout(o.dropout)
      .with_batch_first(o.batch_first);
}

void check_activation(const TransformerLayerOptions& o, const char* layer) {
  EMBER_CHECK_VALUE(o.activation_fn || o.activation == "relu" || o.activation == "gelu", "[", layer,
                    "] activation should be relu or gelu, not ", o.activation);
}

Tensor activate(const TransformerLayerOptions& o, const Tensor& x) {
  if (o.activation_fn) return o.activation_fn(x);
  return o.activation == "gelu" ? gelu(x) : relu(x);
}

/// The feed-forward block both layers end with.
Tensor feed_forward(const TransformerLayerOptions& o, Linear& linear1, Dropout& dropout,
                    Linear& linear2, Dropout& out_dropout, const Tensor& x) {
  return out_dropout.forward(linear2.forward(dropout.forward(activate(o, linear1.forward(x)))));
}

/// attention(x, kv, kv) without the weights, then dropout.
Tensor attention_block(MultiheadAttention& attn, Dropout& dropout, const Tensor& x,
                       const Tensor& kv, const Tensor& mask, const Tensor& key_padding_mask) {
  return dropout.forward(
      std::get<0>(attn.forward(x, kv, kv, key_padding_mask, /*need_weights=*/false, mask)));
}

std::shared_ptr<LayerNorm> layer_norm(const TransformerLayerOptions& o) {
  return std::make_shared<LayerNorm>(Shape{o.d_model}, o.layer_norm_eps);
}

/// num_layers copies of `layer` under "0", "1", ...: its values while building, its structure
/// alone while cloning (the caller fills the tensors).
template <typename Layer>
std::shared_ptr<Sequential> clones(const Layer& layer, int64_t num_layers, bool copy_values) {
  EMBER_CHECK_VALUE(num_layers >= 0, "[", layer.name(), "] num_layers must be >= 0, got ",
                    num_layers);
  auto list = std::make_shared<Sequential>();
  for (int64_t i = 0; i < num_layers; ++i)
    list->push_back(copy_values ? layer.clone() : layer.clone_structure());
  return list;
}

template <typename Layer>
std::shared_ptr<Layer> layer_at(const Sequential& layers, int64_t i, const char* stack) {
  EMBER_CHECK_INDEX(i >= 0 && i < static_cast<int64_t>(layers.size()), "[", stack, "] layer ", i,
                    " out of range for ", layers.size(), " layers");
  auto layer = std::dynamic_pointer_cast<Layer>(layers[static_cast<size_t>(i)]);
  EMBER_CHECK_TYPE(layer != nullptr, "[", stack, "] layers.", i, " is a ",
                   layers[static_cast<size_t>(i)]->name(), ", not a transformer layer");
  return layer;
}

}  // namespace

TransformerEncoderLayer::TransformerEncoderLayer(TransformerLayerOptions o)
    : options(std::move(o)) {
  check_activation(options, "TransformerEncoderLayer");
  const TransformerLayerOptions& c = options;
  self_attn =
      register_module("self_attn", std::make_shared<MultiheadAttention>(attention_options(c)));
  linear1 = register_module("linear1", std::make_shared<Linear>(c.d_model, c.dim_feedforward));
  dropout = register_module("dropout", std::make_shared<Dropout>(c.dropout));
  linear2 = register_module("linear2", std::make_shared<Linear>(c.dim_feedforward, c.d_model));
  norm1 = register_module("norm1", layer_norm(c));
  norm2 = register_module("norm2", layer_norm(c));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(c.dropout));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(c.dropout));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, const Tensor& src_mask,
                                        const Tensor& src_key_padding_mask) {
  auto sa = [&](const Tensor& x) {
    return attention_block(*self_attn, *dropout1, x, x, src_mask, src_key_padding_mask);
  };
  auto ff = [&](const Tensor& x) {
    return feed_forward(options, *linear1, *dropout, *linear2, *dropout2, x);
  };
  Tensor x = src;
  if (options.norm_first) {
    x = x + sa((*norm1)(x));
    return x + ff((*norm2)(x));
  }
  x = (*norm1)(x + sa(x));
  return (*norm2)(x + ff(x));
}

std::shared_ptr<Module> TransformerEncoderLayer::clone_impl() const {
  return std::make_shared<TransformerEncoderLayer>(options);
}

TransformerDecoderLayer::TransformerDecoderLayer(TransformerLayerOptions o)
    : options(std::move(o)) {
  check_activation(options, "TransformerDecoderLayer");
  const TransformerLayerOptions& c = options;
  self_attn =
      register_module("self_attn", std::make_shared<MultiheadAttention>(attention_options(c)));
  multihead_attn =
      register_module("multihead_attn", std::make_shared<MultiheadAttention>(attention_options(c)));
  linear1 = register_module("linear1", std::make_shared<Linear>(c.d_model, c.dim_feedforward));
  dropout = register_module("dropout", std::make_shared<Dropout>(c.dropout));
  linear2 = register_module("linear2", std::make_shared<Linear>(c.dim_feedforward, c.d_model));
  norm1 = register_module("norm1", layer_norm(c));
  norm2 = register_module("norm2", layer_norm(c));
  norm3 = register_module("norm3", layer_norm(c));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(c.dropout));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(c.dropout));
  dropout3 = register_module("dropout3", std::make_shared<Dropout>(c.dropout));
}

Tensor TransformerDecoderLayer::forward(const Tensor& tgt, const Tensor& memory,
                                        const Tensor& tgt_mask, const Tensor& memory_mask,
                                        const Tensor& tgt_key_padding_mask,
                                        const Tensor& memory_key_padding_mask) {
  auto sa = [&](const Tensor& x) {
    return attention_block(*self_attn, *dropout1, x, x, tgt_mask, tgt_key_padding_mask);
  };
  auto mha = [&](const Tensor& x) {
    return attention_block(*multihead_attn, *dropout2, x, memory, memory_mask,
                           memory_key_padding_mask);
  };
  auto ff = [&](const Tensor& x) {
    return feed_forward(options, *linear1, *dropout, *linear2, *dropout3, x);
  };
  Tensor x = tgt;
  if (options.norm_first) {
    x = x + sa((*norm1)(x));
    x = x + mha((*norm2)(x));
    return x + ff((*norm3)(x));
  }
  x = (*norm1)(x + sa(x));
  x = (*norm2)(x + mha(x));
  return (*norm3)(x + ff(x));
}

std::shared_ptr<Module> TransformerDecoderLayer::clone_impl() const {
  return std::make_shared<TransformerDecoderLayer>(options);
}

TransformerEncoder::TransformerEncoder(
    const std::shared_ptr<TransformerEncoderLayer>& encoder_layer, int64_t n,
    std::shared_ptr<LayerNorm> final_norm)
    : num_layers(n), layer_options_(encoder_layer->options) {
  layers = register_module("layers", clones(*encoder_layer, n, should_initialize()));
  if (final_norm) norm = register_module("norm", std::move(final_norm));
}

std::shared_ptr<TransformerEncoderLayer> TransformerEncoder::layer(int64_t i) const {
  return layer_at<TransformerEncoderLayer>(*layers, i, "TransformerEncoder");
}

Tensor TransformerEncoder::forward(const Tensor& src, const Tensor& mask,
                                   const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (int64_t i = 0; i < static_cast<int64_t>(layers->size()); ++i)
    x = layer(i)->forward(x, mask, src_key_padding_mask);
  return norm ? (*norm)(x) : x;
}

std::shared_ptr<Module> TransformerEncoder::clone_impl() const {
  return std::make_shared<TransformerEncoder>(
      std::make_shared<TransformerEncoderLayer>(layer_options_), num_layers,
      norm ? std::static_pointer_cast<LayerNorm>(norm->clone_structure()) : nullptr);
}

TransformerDecoder::TransformerDecoder(
    const std::shared_ptr<TransformerDecoderLayer>& decoder_layer, int64_t n,
    std::shared_ptr<LayerNorm> final_norm)
    : num_layers(n), layer_options_(decoder_layer->options) {
  layers = register_module("layers", clones(*decoder_layer, n, should_initialize()));
  if (final_norm) norm = register_module("norm", std::move(final_norm));
}

std::shared_ptr<TransformerDecoderLayer> TransformerDecoder::layer(int64_t i) const {
  return layer_at<TransformerDecoderLayer>(*layers, i, "TransformerDecoder");
}

Tensor TransformerDecoder::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                   const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                   const Tensor& memory_key_padding_mask) {
  Tensor x = tgt;
  for (int64_t i = 0; i < static_cast<int64_t>(layers->size()); ++i)
    x = layer(i)->forward(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                          memory_key_padding_mask);
  return norm ? (*norm)(x) : x;
}

std::shared_ptr<Module> TransformerDecoder::clone_impl() const {
  return std::make_shared<TransformerDecoder>(
      std::make_shared<TransformerDecoderLayer>(layer_options_), num_layers,
      norm ? std::static_pointer_cast<LayerNorm>(norm->clone_structure()) : nullptr);
}

Transformer::Transformer(TransformerOptions o) : options(std::move(o)) {
  encoder = register_module("encoder", std::make_shared<TransformerEncoder>(
                                           std::make_shared<TransformerEncoderLayer>(options),
                                           options.num_encoder_layers, layer_norm(options)));
  decoder = register_module("decoder", std::make_shared<TransformerDecoder>(
                                           std::make_shared<TransformerDecoderLayer>(options),
                                           options.num_decoder_layers, layer_norm(options)));
  if (should_initialize())
    for (Tensor& p : parameters())
      if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor Transformer::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask,
                            const Tensor& tgt_mask, const Tensor& memory_mask,
                            const Tensor& src_key_padding_mask, const Tensor& tgt_key_padding_mask,
                            const Tensor& memory_key_padding_mask) {
  const int64_t batch_dim = options.batch_first ? 0 : 1;
  if (src.dim() == 3)
    EMBER_CHECK(tgt.dim() == 3 && src.size(batch_dim) == tgt.size(batch_dim),
                "[Transformer] the batch sizes of src and tgt must be equal, got ",
                detail::str_cat(src.sizes()), " and ", detail::str_cat(tgt.sizes()));
  EMBER_CHECK(src.size(-1) == options.d_model && tgt.size(-1) == options.d_model,
              "[Transformer] the feature number of src and tgt must equal d_model (",
              options.d_model, "), got ", src.size(-1), " and ", tgt.size(-1));
  Tensor memory = encoder->forward(src, src_mask, src_key_padding_mask);
  return decoder->forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                          memory_key_padding_mask);
}

Tensor Transformer::generate_square_subsequent_mask(int64_t sz, const TensorOptions& options) {
  return functional::generate_square_subsequent_mask(sz, options);
}

std::shared_ptr<Module> Transformer::clone_impl() const {
  return std::make_shared<Transformer>(options);
}

}  // namespace ember::nn
