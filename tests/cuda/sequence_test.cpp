// The sequence-model ops on CUDA against the CPU, values and gradients: recurrent layers through
// cuDNN and through ember's own CUDA kernels, fused attention, the normalisations and activations
// transformers use, and sort/topk/cumsum.
#include "ember/backend/cudnn.h"
#include "ember/nn/modules/rnn.h"
#include "ember/nn/normalization.h"
#include "ember/ops/activation.h"
#include "ember/ops/attention.h"
#include "ember/ops/layer_norm.h"
#include "ember/ops/sort.h"
#include "tests/cuda/cuda_test_util.h"

namespace ember {
namespace {

using namespace ember::testing;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// A stack's output, final states and every weight's gradient, on the CPU and on CUDA.
void expect_stack_matches(RecurrentOptions::Kind kind, nn::RNNOptions options, DType dtype,
                          bool packed, double tol) {
  SCOPED_TRACE(::testing::Message()
               << "kind " << static_cast<int>(kind) << ", layers " << options.num_layers
               << ", bidirectional " << options.bidirectional << ", bias " << options.bias
               << ", proj_size " << options.proj_size << ", dtype " << dtype << ", packed "
               << packed);
  manual_seed(11);
  nn::RNNBase model(kind, options);
  model.to(dtype);
  const int64_t T = 6, B = 4, D = options.bidirectional ? 2 : 1;
  Tensor x = uniform({T, B, options.input_size}, dtype);
  const int64_t P = options.proj_size > 0 ? options.proj_size : options.hidden_size;
  Tensor h0 = uniform({options.num_layers * D, B, P}, dtype);
  Tensor c0 = uniform({options.num_layers * D, B, options.hidden_size}, dtype);
  Tensor lengths = packed ? tensor({6, 3, 5, 1}, kInt64) : Tensor();
  std::vector<Tensor> weights = model.flat_weights();
  std::vector<Tensor> inputs{x, h0, kind == RecurrentOptions::Kind::Lstm ? c0 : Tensor()};
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  RecurrentOptions o;
  o.kind = kind;
  o.num_layers = options.num_layers;
  o.bidirectional = options.bidirectional;
  o.proj_size = options.proj_size;
  // Every result at once: output, h_n and (LSTM) c_n flattened into one tensor.
  Fn f = [&](const std::vector<Tensor>& v) {
    std::vector<Tensor> w(v.begin() + 3, v.end());
    auto [out, hn, cn] = recurrent(v[0], v[1], v[2], w, o, lengths);
    std::vector<Tensor> parts{out.reshape({-1}), hn.reshape({-1})};
    if (cn.defined()) parts.push_back(cn.reshape({-1}));
    return cat(parts);
  };
  EXPECT_TRUE(same_with_gradients(f, inputs, tol));
}

void expect_recurrent_layers_match() {
  using Kind = RecurrentOptions::Kind;
  for (Kind kind : {Kind::Lstm, Kind::Gru, Kind::RnnTanh, Kind::RnnRelu})
    for (bool bidirectional : {false, true})
      for (bool packed : {false, true})
        expect_stack_matches(
            kind, nn::RNNOptions(5, 7).with_num_layers(2).with_bidirectional(bidirectional),
            kFloat32, packed, 1e-4);
  expect_stack_matches(Kind::Lstm, nn::RNNOptions(3, 4).with_bias(false), kFloat32, false, 1e-4);
  expect_stack_matches(
      Kind::Lstm,
      nn::RNNOptions(5, 7).with_num_layers(2).with_bidirectional(true).with_proj_size(3), kFloat32,
      true, 1e-4);
  expect_stack_matches(Kind::Gru, nn::RNNOptions(3, 4).with_num_layers(3), kFloat64, true, 1e-10);
}

TEST(CudaSequence, RecurrentLayersThroughCudnnMatchTheCpu) {
  EMBER_REQUIRE_CUDA();
  if (!cudnn::built()) GTEST_SKIP() << "ember was built without cuDNN";
  CudnnSwitch on(cudnn::set_enabled, cudnn::enabled, true);
  expect_recurrent_layers_match();  // TF32 off: see main.cpp
}

TEST(CudaSequence, RecurrentLayersOnEmbersOwnKernelsMatchTheCpu) {
  EMBER_REQUIRE_CUDA();
  CudnnSwitch off(cudnn::set_enabled, cudnn::enabled, false);
  expect_recurrent_layers_match();
}

// The modules on CUDA: dropout between layers in training (one cuDNN call per layer), the
// same model in eval mode as the CPU's, the cells, and an LSTM language-model step that learns.
TEST(CudaSequence, RecurrentModulesTrainOnCuda) {
  EMBER_REQUIRE_CUDA();
  manual_seed(3);
  auto lstm = nn::make<nn::LSTM>(nn::RNNOptions(8, 16).with_num_layers(2).with_dropout(0.5));
  auto cpu_copy = std::dynamic_pointer_cast<nn::RNNBase>(lstm->clone());
  ASSERT_TRUE(cpu_copy);
  lstm->to(gpu());
  Tensor x = uniform({10, 3, 8});
  lstm->eval();
  cpu_copy->eval();
  EXPECT_TRUE(all_close(lstm->forward(x.to(gpu())).cpu(), cpu_copy->forward(x), 1e-4, 1e-5));
  lstm->train();
  Tensor y = lstm->forward(x.to(gpu()));
  y.sum().backward();
  for (const Tensor& p : lstm->parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_TRUE(isfinite(p.grad()).all().item<bool>());
  }
  // A state left on the CPU beside an input on the GPU is an error naming both devices.
  EXPECT_THROW_WITH(lstm->forward_with_state(x.to(gpu()), zeros({2, 3, 16})),
                    "found at least two devices, cuda:0 and cpu");
  // The cells run one step of the same layers.
  Tensor w_ih = uniform({12, 5}), w_hh = uniform({12, 4}), b_ih = uniform({12}),
         b_hh = uniform({12});
  EXPECT_TRUE(
      same_with_gradients([](auto& v) { return gru_cell(v[0], v[1], v[2], v[3], v[4], v[5]); },
                          {uniform({3, 5}), uniform({3, 4}), w_ih, w_hh, b_ih, b_hh}, 1e-4));
}

TEST(CudaSequence, FusedAttentionMatchesTheCpu) {
  EMBER_REQUIRE_CUDA();
  for (bool causal : {false, true})
    for (int64_t L : {1, 37, 128}) {
      SCOPED_TRACE(::testing::Message() << "L " << L << ", causal " << causal);
      Tensor q = uniform({2, 3, L, 16}), k = uniform({2, 3, L + 5, 16}),
             v = uniform({2, 3, L + 5, 24});
      EXPECT_TRUE(same_with_gradients(
          [causal](auto& t) {
            return scaled_dot_product_attention(t[0], t[1], t[2], Tensor(), 0, causal);
          },
          {q, k, v}, 1e-4));
    }
  // A boolean padding mask broadcast over heads and queries.
  Tensor mask = tensor({1, 1, 1, 0, 0, 1, 1, 1, 1, 1}, kBool).reshape({2, 1, 1, 5});
  EXPECT_TRUE(same_with_gradients(
      [mask](auto& t) {
        return scaled_dot_product_attention(t[0], t[1], t[2], mask.to(t[0].device()));
      },
      {uniform({2, 2, 4, 8}), uniform({2, 2, 5, 8}), uniform({2, 2, 5, 8})}, 1e-4));
}

TEST(CudaSequence, NormalisationsAndActivationsMatchTheCpu) {
  EMBER_REQUIRE_CUDA();
  Tensor x = uniform({4, 9, 32}, kFloat32, -3, 3), w = uniform({32}), b = uniform({32});
  EXPECT_TRUE(same_with_gradients([](auto& v) { return layer_norm(v[0], 1, v[1], v[2]); },
                                  {x, w, b}, 1e-4));
  EXPECT_TRUE(same_with_gradients(
      [](auto& v) { return nn::functional::rms_norm(v[0], {32}, v[1]); }, {x, w}, 1e-4));
  EXPECT_TRUE(
      same_with_gradients([](auto& v) { return nn::functional::group_norm(v[0], 3, v[1], v[2]); },
                          {uniform({2, 6, 5, 5}), uniform({6}), uniform({6})}, 1e-4));
  for (const char* approximate : {"none", "tanh"})
    EXPECT_TRUE(
        same_with_gradients([approximate](auto& v) { return gelu(v[0], approximate); }, {x}, 1e-5));
  EXPECT_TRUE(same_with_gradients([](auto& v) { return silu(v[0]); }, {x}, 1e-5));
  EXPECT_TRUE(same_with_gradients([](auto& v) { return mish(v[0]); }, {x}, 1e-5));
}

TEST(CudaSequence, SortTopkAndScansMatchTheCpu) {
  EMBER_REQUIRE_CUDA();
  // Distinct values, so that the order (and so the indices) is the same on both devices.
  Tensor x = randperm(6 * 1000).to(kFloat32).reshape({6, 1000}) * 0.01;
  for (bool descending : {false, true}) {
    EXPECT_TRUE(same_on_cuda(
        [descending](auto& v) { return std::get<0>(sort(v[0], 1, descending)); }, {x}, 0));
    EXPECT_TRUE(same_on_cuda(
        [descending](auto& v) { return std::get<1>(sort(v[0], 1, descending)); }, {x}, 0));
  }
  EXPECT_TRUE(same_on_cuda([](auto& v) { return std::get<1>(topk(v[0], 17, 1)); }, {x}, 0));
  EXPECT_TRUE(same_on_cuda([](auto& v) { return std::get<0>(topk(v[0], 5, 0, false)); }, {x}, 0));
  EXPECT_TRUE(
      same_with_gradients([](auto& v) { return cumsum(v[0], 1); }, {uniform({5, 300})}, 1e-4));
  EXPECT_TRUE(same_with_gradients([](auto& v) { return cumprod(v[0], 0); },
                                  {uniform({7, 30}, kFloat32, 0.5, 1.5)}, 1e-4));
}

// Every dtype, with ties (a stable sort keeps them in order on both devices) and NaN (last when
// ascending), and scans into each output dtype. Small integers keep every partial sum exact, so
// the order of the GPU's additions cannot change a result.
TEST(CudaSequence, SortAndScansOfEveryDtypeMatchTheCpu) {
  EMBER_REQUIRE_CUDA();
  Tensor small = randint(0, 4, {4, 301});
  for (DType dtype : {kBool, kUInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64}) {
    SCOPED_TRACE(::testing::Message() << dtype);
    Tensor x = small.to(dtype);
    if (is_floating_point(dtype)) x.select(0, 1).narrow(0, 7, 3).fill_(std::nan(""));
    for (bool descending : {false, true}) {
      EXPECT_TRUE(same_on_cuda(
          [descending](auto& v) { return std::get<0>(sort(v[0], 1, descending)); }, {x}, 0));
      EXPECT_TRUE(same_on_cuda(
          [descending](auto& v) { return std::get<1>(sort(v[0], 1, descending)); }, {x}, 0));
    }
    Tensor y = small.to(dtype);
    EXPECT_TRUE(same_on_cuda([](auto& v) { return cumsum(v[0], 1); }, {y}, 0));
    EXPECT_TRUE(same_on_cuda([](auto& v) { return cumsum(v[0], 0, kFloat64); }, {y}, 0));
    EXPECT_TRUE(same_on_cuda([](auto& v) { return cumprod(v[0], 0, kInt32); }, {y}, 0));
    EXPECT_TRUE(same_on_cuda([](auto& v) { return cumsum(v[0], 1, kBool); }, {y}, 0));
  }
}

}  // namespace
}  // namespace ember
