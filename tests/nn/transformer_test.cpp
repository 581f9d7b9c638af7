// nn::MultiheadAttention and the transformer modules: PyTorch's state-dict keys, batch_first and
// unbatched inputs giving the batched sequence-first results, clones and replicas, masks, and
// the errors bad arguments raise. Their numerics against libtorch are in
// tests/oracle/modules_test.cpp.
#include <gtest/gtest.h>

#include "tests/util/test_util.h"

namespace ember {
namespace {

using testing::all_close;
using testing::values;

std::vector<std::string> keys(const nn::Module& m) {
  std::vector<std::string> out;
  for (auto& [name, t] : m.state_dict()) out.push_back(name);
  return out;
}

TEST(MultiheadAttention, StateDictKeysAndShapesArePyTorchs) {
  nn::MultiheadAttention packed(8, 2);
  EXPECT_EQ(keys(packed), (std::vector<std::string>{"in_proj_weight", "in_proj_bias",
                                                    "out_proj.weight", "out_proj.bias"}));
  EXPECT_EQ(packed.in_proj_weight.sizes(), (Shape{24, 8}));
  EXPECT_EQ(values(packed.in_proj_bias), std::vector<double>(24, 0.0));
  nn::MultiheadAttention separate(nn::MultiheadAttentionOptions(8, 2)
                                      .with_kdim(3)
                                      .with_vdim(5)
                                      .with_bias(false)
                                      .with_add_bias_kv(true));
  EXPECT_EQ(keys(separate),
            (std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight", "bias_k",
                                      "bias_v", "out_proj.weight"}));
  EXPECT_EQ(separate.k_proj_weight.sizes(), (Shape{8, 3}));
  EXPECT_EQ(separate.v_proj_weight.sizes(), (Shape{8, 5}));
  EXPECT_THROW(nn::MultiheadAttention(10, 3), ValueError);
}

TEST(MultiheadAttention, BatchFirstAndUnbatchedAgreeWithSequenceFirst) {
  manual_seed(3);
  auto seq_first = nn::make<nn::MultiheadAttention>(8, 2);
  auto batch_first =
      nn::make<nn::MultiheadAttention>(nn::MultiheadAttentionOptions(8, 2).with_batch_first(true));
  batch_first->load_state_dict(seq_first->state_dict());
  Tensor x = randn({5, 3, 8});  // (L, N, E)
  auto [y, w] = seq_first->forward(x, x, x);
  Tensor xb = x.transpose(0, 1).contiguous();
  auto [yb, wb] = batch_first->forward(xb, xb, xb);
  EXPECT_TRUE(all_close(yb.transpose(0, 1), y));
  EXPECT_TRUE(all_close(wb, w));
  EXPECT_EQ(w.sizes(), (Shape{3, 5, 5}));
  // One sequence without a batch dim is sample 1 of the batch.
  Tensor x1 = x.select(1, 1);
  auto [y1, w1] = seq_first->forward(x1, x1, x1);
  EXPECT_TRUE(all_close(y1, y.select(1, 1)));
  EXPECT_TRUE(all_close(w1, w.select(0, 1)));
  // The single-tensor forward is self-attention without weights.
  EXPECT_TRUE(all_close(seq_first->forward(x), y));
}

TEST(MultiheadAttention, MasksHideKeys) {
  manual_seed(4);
  nn::MultiheadAttention attn(4, 1);
  Tensor q = randn({2, 1, 4}), k = randn({3, 1, 4});
  Tensor pad = zeros({1, 3}, kBool);
  pad.select(1, 2).fill_(true);
  auto [y, w] = attn.forward(q, k, k, pad);
  // The padded key gets no weight; the other two share all of it.
  EXPECT_TRUE(all_close(w.select(2, 2), zeros({1, 2})));
  EXPECT_TRUE(all_close(w.sum({2}), ones({1, 2})));
  // The same as an additive float mask of -inf.
  Tensor additive = zeros({2, 3});
  additive.select(1, 2).fill_(-std::numeric_limits<double>::infinity());
  auto [y2, w2] = attn.forward(q, k, k, Tensor(), true, additive);
  EXPECT_TRUE(all_close(y2, y));
  EXPECT_THROW(attn.forward(q, k, k, zeros({1, 2}, kBool)), Error);
  EXPECT_THROW(attn.forward(q, k, k, Tensor(), true, zeros({3, 3})), Error);
  EXPECT_THROW(attn.forward(q, k, k, Tensor(), true, zeros({2, 3}, kInt32)), TypeError);
}

TEST(Transformer, StateDictKeysArePyTorchs) {
  nn::TransformerOptions options(8, 2, 1, 1);
  options.dim_feedforward = 16;
  nn::Transformer model(options);
  std::vector<std::string> k = keys(model);
  auto has = [&](const std::string& name) {
    return std::find(k.begin(), k.end(), name) != k.end();
  };
  for (const char* name :
       {"encoder.layers.0.self_attn.in_proj_weight", "encoder.layers.0.self_attn.out_proj.bias",
        "encoder.layers.0.linear1.weight", "encoder.layers.0.linear2.bias",
        "encoder.layers.0.norm2.weight", "encoder.norm.weight",
        "decoder.layers.0.multihead_attn.in_proj_weight", "decoder.layers.0.norm3.bias",
        "decoder.norm.bias"})
    EXPECT_TRUE(has(name)) << name;
  // An encoder layer has 12 tensors, a decoder layer 18, each final norm 2.
  EXPECT_EQ(k.size(), 12u + 2u + 18u + 2u);
}

TEST(Transformer, EncoderLayersAreCopiesAndClonesKeepValues) {
  manual_seed(5);
  auto layer = nn::make<nn::TransformerEncoderLayer>(
      nn::TransformerLayerOptions(8, 2).with_dim_feedforward(16).with_dropout(0));
  nn::TransformerEncoder encoder(layer, 3);
  EXPECT_EQ(encoder.layers->size(), 3u);
  // Each layer starts as a copy of the prototype: equal values, separate tensors.
  EXPECT_TRUE(all_close(encoder.layer(2)->linear1->weight, layer->linear1->weight));
  EXPECT_FALSE(encoder.layer(2)->linear1->weight.is_same(layer->linear1->weight));
  EXPECT_THROW(encoder.layer(3), IndexError);
  Tensor x = randn({4, 2, 8});
  Tensor y = encoder.forward(x);
  std::shared_ptr<nn::Module> copy = encoder.clone();
  EXPECT_EQ(keys(*copy), keys(encoder));
  EXPECT_TRUE(all_close(copy->forward(x), y));
}

TEST(Transformer, NormFirstBatchFirstAndActivations) {
  manual_seed(6);
  auto options = nn::TransformerLayerOptions(8, 2).with_dim_feedforward(16).with_dropout(0);
  for (bool norm_first : {false, true}) {
    auto seq = nn::make<nn::TransformerDecoderLayer>(
        nn::TransformerLayerOptions(options).with_norm_first(norm_first));
    auto bf = nn::make<nn::TransformerDecoderLayer>(
        nn::TransformerLayerOptions(options).with_norm_first(norm_first).with_batch_first(true));
    bf->load_state_dict(seq->state_dict());
    Tensor tgt = randn({3, 2, 8}), memory = randn({5, 2, 8});
    Tensor mask = nn::Transformer::generate_square_subsequent_mask(3);
    Tensor y = seq->forward(tgt, memory, mask);
    Tensor yb = bf->forward(tgt.transpose(0, 1), memory.transpose(0, 1), mask);
    EXPECT_TRUE(all_close(yb.transpose(0, 1), y)) << "norm_first=" << norm_first;
  }
  // A function in place of the activation's name; an unknown name is refused.
  int calls = 0;
  auto custom = nn::make<nn::TransformerEncoderLayer>(
      nn::TransformerLayerOptions(options).with_activation([&](const Tensor& x) {
        ++calls;
        return x.tanh();
      }));
  custom->forward(randn({2, 1, 8}));
  EXPECT_EQ(calls, 1);
  EXPECT_THROW(nn::TransformerEncoderLayer(
                   nn::TransformerLayerOptions(options).with_activation(std::string("swish"))),
               ValueError);
}

TEST(Transformer, ChecksItsInputsAndTrains) {
  manual_seed(7);
  nn::TransformerOptions options(8, 2, 1, 1);
  options.dim_feedforward = 16;
  nn::Transformer model(options);
  EXPECT_THROW(model.forward(randn({4, 2, 8}), randn({3, 3, 8})), Error);
  EXPECT_THROW(model.forward(randn({4, 2, 6}), randn({3, 2, 6})), Error);
  Tensor mask = nn::Transformer::generate_square_subsequent_mask(3);
  EXPECT_EQ(values(mask), (std::vector<double>{0, -INFINITY, -INFINITY, 0, 0, -INFINITY, 0, 0, 0}));
  // A few SGD steps lower the loss of copying src into tgt's positions.
  model.eval();  // no dropout: the loss is a function of the weights alone
  Tensor src = randn({4, 2, 8}), tgt = randn({3, 2, 8}), target = randn({3, 2, 8});
  auto loss = [&] { return (model.forward(src, tgt, Tensor(), mask) - target).square().mean(); };
  double first = loss().item<double>();
  for (int step = 0; step < 20; ++step) {
    model.zero_grad();
    loss().backward();
    NoGradGuard no_grad;
    for (Tensor& p : model.parameters()) p.sub_(p.grad() * 0.05);
  }
  EXPECT_LT(loss().item<double>(), first);
}

}  // namespace
}  // namespace ember
