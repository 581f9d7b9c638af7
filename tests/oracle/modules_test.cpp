// ember's sequence-model modules against libtorch 1.13's C++ modules of the same configuration:
// the same parameter names (each of ember's is copied into torch's by name, and the two name sets
// must be equal), then the outputs and the gradients of inputs and parameters compared in float64,
// with masks, padding, several layers and both directions.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "tests/oracle/differential_internal.h"

namespace ember::oracle {
namespace {

TTensor to_torch(const ETensor& e) {
  ETensor c = e.detach().to(kFloat64).contiguous();
  V sizes(c.sizes().begin(), c.sizes().end());
  return torch::from_blob(c.data_ptr(), sizes, at::kDouble).clone();
}

ETensor to_ember(const TTensor& t) {
  TTensor c = t.detach().to(at::kDouble).contiguous();
  ETensor e = ember::empty(Shape(c.sizes().begin(), c.sizes().end()), kFloat64);
  if (c.numel() > 0)
    std::memcpy(e.data_ptr(), c.data_ptr<double>(),
                sizeof(double) * static_cast<size_t>(c.numel()));
  return e;
}

/// The same random values on both sides; a leaf requiring grad.
std::pair<ETensor, TTensor> leaf(const V& shape, uint64_t seed) {
  torch::manual_seed(seed);
  TTensor t = torch::randn(shape, at::kDouble);
  ETensor e = to_ember(t).requires_grad_();
  return {e, t.requires_grad_()};
}

void expect_close(const ETensor& e, const TTensor& t, const std::string& what) {
  ASSERT_EQ(e.defined(), t.defined()) << what;
  if (!e.defined()) return;
  ASSERT_EQ(V(e.sizes().begin(), e.sizes().end()), t.sizes().vec()) << what;
  TTensor d = (to_torch(e) - t.detach().to(at::kDouble)).abs();
  double scale = 1 + t.detach().abs().max().item<double>();
  double err = d.numel() ? d.max().item<double>() : 0;
  EXPECT_LE(err, 1e-9 * scale) << what << ": max |ember - torch| = " << err;
}

/// Copies ember's parameters into torch's module by name; both must have the same names.
void copy_parameters(nn::Module& em, torch::nn::Module& tm) {
  std::set<std::string> ember_names, torch_names;
  torch::NoGradGuard no_grad;
  auto tparams = tm.named_parameters();
  for (const auto& [name, p] : em.named_parameters()) {
    ember_names.insert(name);
    ASSERT_TRUE(tparams.contains(name)) << "torch has no parameter " << name;
    tparams[name].copy_(to_torch(p));
  }
  for (const auto& item : tparams) torch_names.insert(item.key());
  EXPECT_EQ(ember_names, torch_names);
}

/// sum(out * w) with a fixed distinct weight per element, so every output element's gradient
/// differs; then backward on both sides and the parameters' gradients compared.
void compare_backward(const ETensor& eo, const TTensor& to, nn::Module& em, torch::nn::Module& tm) {
  ETensor ew = to_ember(torch::arange(to.numel(), at::kDouble).reshape(to.sizes()) * 0.01 - 0.3);
  TTensor tw = to_torch(ew);
  (eo * ew).sum().backward();
  (to * tw).sum().backward();
  auto tparams = tm.named_parameters();
  for (const auto& [name, p] : em.named_parameters())
    expect_close(p.grad(), tparams[name].grad(), "grad of " + name);
}

TEST(ModulesAgainstLibtorch, MultiheadAttentionSelfWithMasksAndWeights) {
  const int64_t L = 5, N = 3, E = 8, H = 2;
  auto em = nn::make<nn::MultiheadAttention>(E, H);
  torch::nn::MultiheadAttention tm(torch::nn::MultiheadAttentionOptions(E, H));
  em->to(kFloat64);
  tm->to(at::kDouble);
  copy_parameters(*em, *tm);
  auto [ex, tx] = leaf({L, N, E}, 1);
  // Key padding: the last key of sample 1 is ignored; a float mask is added to the scores.
  TTensor tpad = torch::zeros({N, L}, at::kBool);
  tpad.index_put_({1, L - 1}, true);
  TTensor tmask = torch::randn({L, L}, at::kDouble);
  ETensor epad = to_ember(tpad).to(kBool), emask = to_ember(tmask);
  auto [eo, ew] = em->forward(ex, ex, ex, epad, /*need_weights=*/true, emask);
  auto [to, tw] = tm->forward(tx, tx, tx, tpad, /*need_weights=*/true, tmask);
  expect_close(eo, to, "output");
  expect_close(ew, tw, "averaged weights");
  compare_backward(eo, to, *em, *tm);
  expect_close(ex.grad(), tx.grad(), "grad of the input");

  // Per-head weights, and the fused path (no weights) giving the same output.
  auto [eo2, ew2] = em->forward(ex, ex, ex, epad, true, emask, /*average_attn_weights=*/false);
  auto [to2, tw2] = tm->forward(tx, tx, tx, tpad, true, tmask, false);
  expect_close(ew2, tw2, "per-head weights");
  auto [eo3, ew3] = em->forward(ex, ex, ex, epad, /*need_weights=*/false, emask);
  EXPECT_FALSE(ew3.defined());
  expect_close(eo3, to, "output of the fused path");
}

// libtorch's C++ module needs keys and values of one width (its forward asserts equal sizes).
TEST(ModulesAgainstLibtorch, MultiheadAttentionCrossWithKdimBiasKvZeroAttn) {
  const int64_t L = 4, S = 6, N = 2, E = 6, H = 3;
  auto em = nn::make<nn::MultiheadAttention>(nn::MultiheadAttentionOptions(E, H)
                                                 .with_kdim(5)
                                                 .with_vdim(5)
                                                 .with_add_bias_kv(true)
                                                 .with_add_zero_attn(true));
  torch::nn::MultiheadAttention tm(
      torch::nn::MultiheadAttentionOptions(E, H).kdim(5).vdim(5).add_bias_kv(true).add_zero_attn(
          true));
  em->to(kFloat64);
  tm->to(at::kDouble);
  copy_parameters(*em, *tm);
  auto [eq, tq] = leaf({L, N, E}, 2);
  auto [ek, tk] = leaf({S, N, 5}, 3);
  auto [ev, tv] = leaf({S, N, 5}, 4);
  // libtorch's C++ module adds a bool mask to the scores (true adds 1) where Python's masks the
  // pair out; an additive float mask means the same to both. Bool masks are checked against
  // Python's PyTorch in tests/python/test_sequence.py.
  TTensor tmask = (torch::rand({L, S}, at::kDouble) > 0.7).to(at::kDouble) * -1e9;
  ETensor emask = to_ember(tmask);
  auto [eo, ew] = em->forward(eq, ek, ev, Tensor(), true, emask);
  auto [to, tw] = tm->forward(tq, tk, tv, {}, true, tmask);
  expect_close(eo, to, "output");
  expect_close(ew, tw, "weights");
  compare_backward(eo, to, *em, *tm);
  expect_close(eq.grad(), tq.grad(), "grad of the query");
  expect_close(ek.grad(), tk.grad(), "grad of the key");
  expect_close(ev.grad(), tv.grad(), "grad of the value");
}

nn::TransformerLayerOptions layer_options(const std::string& activation) {
  return nn::TransformerLayerOptions(8, 2).with_dim_feedforward(16).with_dropout(0).with_activation(
      activation);
}

TEST(ModulesAgainstLibtorch, TransformerEncoderStackWithGeluAndPadding) {
  const int64_t L = 5, N = 2;
  auto layer = nn::make<nn::TransformerEncoderLayer>(layer_options("gelu"));
  auto em = nn::make<nn::TransformerEncoder>(layer, 2, nn::make<nn::LayerNorm>(Shape{8}));
  torch::nn::TransformerEncoder tm(
      torch::nn::TransformerEncoderOptions(
          torch::nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0).activation(
              torch::kGELU),
          2)
          .norm(torch::nn::AnyModule(torch::nn::LayerNorm(torch::nn::LayerNormOptions({8})))));
  em->to(kFloat64);
  tm->to(at::kDouble);
  copy_parameters(*em, *tm);
  auto [ex, tx] = leaf({L, N, 8}, 5);
  TTensor tpad = torch::zeros({N, L}, at::kBool);
  tpad.index_put_({0, L - 1}, true);
  TTensor tmask = torch::triu(torch::full({L, L}, -1e9, at::kDouble), 1);
  ETensor eo = em->forward(ex, to_ember(tmask), to_ember(tpad).to(kBool));
  TTensor to = tm->forward(tx, tmask, tpad);
  expect_close(eo, to, "output");
  compare_backward(eo, to, *em, *tm);
  expect_close(ex.grad(), tx.grad(), "grad of the input");
}

TEST(ModulesAgainstLibtorch, TransformerEncoderDecoder) {
  const int64_t S = 6, T = 4, N = 2;
  nn::TransformerOptions options(8, 2, 2, 2);
  options.dim_feedforward = 16;
  options.dropout = 0;
  auto em = nn::make<nn::Transformer>(options);
  torch::nn::Transformer tm(
      torch::nn::TransformerOptions(8, 2, 2, 2).dim_feedforward(16).dropout(0));
  em->to(kFloat64);
  tm->to(at::kDouble);
  copy_parameters(*em, *tm);
  auto [es, ts] = leaf({S, N, 8}, 6);
  auto [et, tt] = leaf({T, N, 8}, 7);
  ETensor emask = nn::Transformer::generate_square_subsequent_mask(T, kFloat64);
  TTensor tmask = torch::nn::TransformerImpl::generate_square_subsequent_mask(T).to(at::kDouble);
  EXPECT_TRUE(torch::equal(to_torch(emask), tmask)) << "square subsequent mask";
  ETensor eo = em->forward(es, et, Tensor(), emask);
  TTensor to = tm->forward(ts, tt, {}, tmask);
  expect_close(eo, to, "output");
  compare_backward(eo, to, *em, *tm);
  expect_close(es.grad(), ts.grad(), "grad of src");
  expect_close(et.grad(), tt.grad(), "grad of tgt");
}

TEST(ModulesAgainstLibtorch, LstmAndGruTwoLayersBidirectionalWithInitialStates) {
  const int64_t T = 5, N = 3, I = 4, Hd = 6, layers = 2;
  for (bool lstm : {true, false}) {
    SCOPED_TRACE(lstm ? "LSTM" : "GRU");
    nn::RNNOptions eopt = nn::RNNOptions(I, Hd).with_num_layers(layers).with_bidirectional(true);
    std::shared_ptr<nn::RNNBase> em;
    if (lstm)
      em = nn::make<nn::LSTM>(eopt);
    else
      em = nn::make<nn::GRU>(eopt);
    em->to(kFloat64);
    auto [ex, tx] = leaf({T, N, I}, 8);
    auto [eh, th] = leaf({2 * layers, N, Hd}, 9);
    auto [ec, tc] = leaf({2 * layers, N, Hd}, 10);
    auto [eo, ehn, ecn] = em->forward_with_state(ex, eh, lstm ? ec : Tensor());
    TTensor to, thn, tcn;
    std::shared_ptr<torch::nn::Module> tm;
    if (lstm) {
      torch::nn::LSTM m(torch::nn::LSTMOptions(I, Hd).num_layers(layers).bidirectional(true));
      m->to(at::kDouble);
      copy_parameters(*em, *m);
      auto out = m->forward(tx, std::make_tuple(th, tc));
      to = std::get<0>(out);
      std::tie(thn, tcn) = std::get<1>(out);
      tm = m.ptr();
    } else {
      torch::nn::GRU m(torch::nn::GRUOptions(I, Hd).num_layers(layers).bidirectional(true));
      m->to(at::kDouble);
      copy_parameters(*em, *m);
      std::tie(to, thn) = m->forward(tx, th);
      tm = m.ptr();
    }
    expect_close(eo, to, "output");
    expect_close(ehn, thn, "h_n");
    if (lstm) expect_close(ecn, tcn, "c_n");
    compare_backward(eo, to, *em, *tm);
    expect_close(ex.grad(), tx.grad(), "grad of the input");
    expect_close(eh.grad(), th.grad(), "grad of h0");
  }
}

// proj_size: libtorch's parameters include weight_hr_l*, h0 has proj_size features, c0 hidden's.
TEST(ModulesAgainstLibtorch, LstmWithProjectionsTwoLayersBidirectional) {
  const int64_t T = 5, N = 3, I = 4, Hd = 6, P = 2, layers = 2;
  auto em = nn::make<nn::LSTM>(
      nn::RNNOptions(I, Hd).with_num_layers(layers).with_bidirectional(true).with_proj_size(P));
  em->to(kFloat64);
  torch::nn::LSTM tm(
      torch::nn::LSTMOptions(I, Hd).num_layers(layers).bidirectional(true).proj_size(P));
  tm->to(at::kDouble);
  copy_parameters(*em, *tm);
  auto [ex, tx] = leaf({T, N, I}, 11);
  auto [eh, th] = leaf({2 * layers, N, P}, 12);
  auto [ec, tc] = leaf({2 * layers, N, Hd}, 13);
  auto [eo, ehn, ecn] = em->forward_with_state(ex, eh, ec);
  auto out = tm->forward(tx, std::make_tuple(th, tc));
  TTensor to = std::get<0>(out), thn, tcn;
  std::tie(thn, tcn) = std::get<1>(out);
  expect_close(eo, to, "output");
  expect_close(ehn, thn, "h_n");
  expect_close(ecn, tcn, "c_n");
  compare_backward(eo, to, *em, *tm);
  expect_close(ex.grad(), tx.grad(), "grad of the input");
  expect_close(eh.grad(), th.grad(), "grad of h0");
  expect_close(ec.grad(), tc.grad(), "grad of c0");
}

}  // namespace
}  // namespace ember::oracle
