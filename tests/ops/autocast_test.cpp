// Autocast at the op entry (ops/autocast.h) on the CPU: which ops cast to what, nesting and
// enabled=false, autograd through the casts, and the weight cache. The comparison with libtorch's
// own autocast is in tests/oracle (family "autocast").
#include <gtest/gtest.h>

#include <thread>

#include "ember/ops/autocast.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;
namespace F = nn::functional;

TEST(Autocast, MatmulFamilyAndConvRunInBFloat16OnTheCpu) {
  Tensor a = uniform({4, 6}), b = uniform({6, 3}), bias = uniform({3});
  Tensor x = uniform({2, 3, 8, 8}), w = uniform({4, 3, 3, 3});
  amp::autocast guard(kCPU);
  for (const Tensor& out : {mm(a, b), matmul(a, b), bmm(a.unsqueeze(0), b.unsqueeze(0)),
                            addmm(bias, a, b), F::linear(a, b.t(), bias), conv2d(x, w)})
    EXPECT_EQ(out.dtype(), kBFloat16);
  // The product of the bfloat16-rounded operands, rounded once more to bfloat16.
  Tensor expected = mm(a.to(kBFloat16).to(kFloat64), b.to(kBFloat16).to(kFloat64));
  EXPECT_TRUE(all_close(mm(a, b).to(kFloat64), expected, 1e-2, 1e-2));
}

TEST(Autocast, Float64AndIntegersAreNeverCast) {
  Tensor a = uniform({3, 3}, kFloat64);
  Tensor i = arange(9, TensorOptions(kInt64)).reshape({3, 3});
  amp::autocast guard(kCPU);
  EXPECT_EQ(mm(a, a).dtype(), kFloat64);
  EXPECT_EQ(mm(i, i).dtype(), kInt64);
}

TEST(Autocast, LossesAndProdRunInFloat32) {
  Tensor logits = uniform({4, 5}, kBFloat16), target = tensor({0, 1, 4, 2});
  amp::autocast guard(kCPU);
  EXPECT_EQ(F::cross_entropy(logits, target).dtype(), kFloat32);
  EXPECT_EQ(F::nll_loss(log_softmax(logits, 1), target).dtype(), kFloat32);
  EXPECT_EQ(F::mse_loss(logits, logits * 2).dtype(), kFloat32);
  EXPECT_EQ(prod(logits).dtype(), kFloat32);
  // Not on PyTorch 1.13's CPU lists: the input dtype stays (CUDA's lists are longer).
  EXPECT_EQ(softmax(logits, 1).dtype(), kBFloat16);
  EXPECT_EQ(logits.exp().dtype(), kBFloat16);
  EXPECT_EQ(logits.sum().dtype(), kBFloat16);
  // An unlisted op on mixed dtypes promotes as usual.
  EXPECT_EQ((logits + uniform({4, 5})).dtype(), kFloat32);
}

TEST(Autocast, NestsAndRestoresAndEnabledFalseSwitchesItOff) {
  Tensor a = uniform({2, 2});
  EXPECT_FALSE(amp::is_autocast_enabled(kCPU));
  {
    amp::autocast outer(kCPU);
    EXPECT_TRUE(amp::is_autocast_enabled(kCPU));
    EXPECT_EQ(amp::get_autocast_dtype(kCPU), kBFloat16);
    {
      amp::autocast off(kCPU, std::nullopt, /*enabled=*/false);
      EXPECT_EQ(mm(a, a).dtype(), kFloat32);
      {
        amp::autocast inner(kCPU, kFloat16);
        EXPECT_EQ(mm(a, a).dtype(), kFloat16);
      }
      EXPECT_EQ(mm(a, a).dtype(), kFloat32);
    }
    EXPECT_EQ(mm(a, a).dtype(), kBFloat16);
    // CUDA autocast does not reach CPU tensors.
    amp::autocast cuda("cuda", kFloat16);
    EXPECT_EQ(mm(a, a).dtype(), kBFloat16);
  }
  EXPECT_FALSE(amp::is_autocast_enabled(kCPU));
  EXPECT_EQ(mm(a, a).dtype(), kFloat32);
}

TEST(Autocast, RejectsUnsupportedDtypesAndDeviceTypes) {
  EXPECT_THROW_WITH(amp::autocast(kCPU, kFloat32), "expected dtype bfloat16 or float16");
  EXPECT_THROW_WITH(amp::autocast("tpu"), "expected device_type 'cpu' or 'cuda', got 'tpu'");
  EXPECT_FALSE(amp::is_autocast_enabled(kCPU));  // a failed guard changed nothing
}

TEST(Autocast, GradientsFlowBackThroughTheCastsInTheInputsDtypes) {
  Tensor x = uniform({5, 4}).requires_grad_(), w = uniform({3, 4}).requires_grad_();
  Tensor b = uniform({3}).requires_grad_();
  Tensor loss;
  {
    amp::autocast guard(kCPU);
    Tensor y = F::linear(x, w, b);
    ASSERT_EQ(y.dtype(), kBFloat16);
    loss = (y.relu() * y).sum();
  }
  loss.backward();
  ASSERT_EQ(w.grad().dtype(), kFloat32);
  ASSERT_EQ(x.grad().dtype(), kFloat32);
  // The same computation with the casts written out.
  Tensor x2 = x.detach().requires_grad_(), w2 = w.detach().requires_grad_(),
         b2 = b.detach().requires_grad_();
  Tensor y2 = F::linear(x2.to(kBFloat16), w2.to(kBFloat16), b2.to(kBFloat16));
  (y2.relu() * y2).sum().backward();
  EXPECT_TRUE(all_close(w.grad(), w2.grad(), 0, 0));
  EXPECT_TRUE(all_close(x.grad(), x2.grad(), 0, 0));
  EXPECT_TRUE(all_close(b.grad(), b2.grad(), 0, 0));
}

TEST(Autocast, AWeightUsedTwiceIsCastOnceAndItsGradientSumsBoth) {
  Tensor w = uniform({3, 3}).requires_grad_();
  Tensor x = uniform({2, 3});
  Tensor loss;
  {
    amp::autocast guard(kCPU);
    Tensor h1 = F::linear(x, w), h2 = F::linear(h1, w);
    // Both products take the same cast of w: one ToCopyBackward node in the graph.
    auto cast_node = [](const Tensor& out) {
      // linear without bias is matmul(x, w.t()) -> mm; follow the w operand to its cast.
      std::shared_ptr<Node> n = out.grad_fn();
      while (n && std::string(n->name()) != "ToCopyBackward0") n = n->next_edges.back().node;
      return n;
    };
    ASSERT_NE(cast_node(h1), nullptr);
    EXPECT_EQ(cast_node(h1), cast_node(h2));
    loss = h2.sum();
  }
  loss.backward();
  Tensor w2 = w.detach().requires_grad_();
  Tensor wb = w2.to(kBFloat16);
  F::linear(F::linear(x.to(kBFloat16), wb), wb).sum().backward();
  EXPECT_TRUE(all_close(w.grad(), w2.grad(), 0, 0));
}

TEST(Autocast, TheCacheNeverServesAStaleOrGraphlessCast) {
  Tensor w = ones({2, 2}).requires_grad_();
  Tensor x = ones({1, 2});
  amp::autocast guard(kCPU);
  {
    NoGradGuard no_grad;
    EXPECT_EQ(F::linear(x, w).sum().item<double>(), 4);
    w.mul_(2);  // an optimizer step inside the region: the cached copy is stale
    EXPECT_EQ(F::linear(x, w).sum().item<double>(), 8);
  }
  // The copy cached under no_grad has no graph: recording forward must cast again.
  Tensor y = F::linear(x, w).sum();
  y.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().sum().item<double>(), 4);
}

TEST(Autocast, TheCacheIsEmptiedWhenTheOutermostRegionEnds) {
  Tensor w = uniform({2, 2}).requires_grad_();
  std::weak_ptr<TensorImpl> cast;
  {
    amp::autocast guard(kCPU);
    Tensor y = F::linear(uniform({1, 2}), w);
    std::shared_ptr<Node> n = y.grad_fn();
    while (n && std::string(n->name()) != "ToCopyBackward0") n = n->next_edges.back().node;
    ASSERT_NE(n, nullptr);
    cast = amp::detail::cached_cast(w, kBFloat16).impl();
    EXPECT_FALSE(cast.expired());
  }
  EXPECT_TRUE(cast.expired());  // nothing holds the bfloat16 copy any more
}

TEST(Autocast, AppliesInThreadsThatCarryTheState) {
  Tensor a = uniform({2, 2});
  amp::autocast guard(kCPU);
  ThreadLocalState state = ThreadLocalState::capture();
  DType in_thread = kBool, bare = kBool;
  std::thread([&] {
    bare = mm(a, a).dtype();
    ThreadLocalStateGuard g(state);
    in_thread = mm(a, a).dtype();
  }).join();
  EXPECT_EQ(bare, kFloat32);  // a new thread starts with autocast off, as in PyTorch
  EXPECT_EQ(in_thread, kBFloat16);
}

}  // namespace
}  // namespace ember
