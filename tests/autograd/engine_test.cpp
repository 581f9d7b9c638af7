#include <gtest/gtest.h>

#include <cmath>

#include "tests/util/test_util.h"

namespace ember {
namespace {

using testing::all_close;
using testing::values;

TEST(Autograd, LeafGradientsAccumulateAcrossBackwardCalls) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  (x * x).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 4}));
  (x * 3).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{5, 7}));
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE((x * 2).is_leaf());
  EXPECT_EQ((x * 2).grad_fn()->name(), "MulBackward1");
}

TEST(Autograd, SharedSubexpressionsSumTheirGradients) {
  Tensor x = tensor({3.0}).requires_grad_();
  Tensor y = x * x;
  Tensor z = y + y * x;  // z = x^2 + x^3, dz/dx = 2x + 3x^2 = 33
  z.backward();
  EXPECT_EQ(x.grad().item<double>(), 33);
}

// A root that the other roots lead to (y and exp(y)): autograd::grad must run both; with the
// earlier root first it used to skip exp's node, whose gradient was lost.
TEST(Autograd, GradOfRootsThatLeadToEachOther) {
  Tensor x = tensor({0.0, 1.0}).requires_grad_();
  Tensor y = x * 2;
  Tensor z = exp(y);
  for (bool y_first : {true, false}) {
    std::vector<Tensor> roots = y_first ? std::vector<Tensor>{y, z} : std::vector<Tensor>{z, y};
    Tensor g = autograd::grad(roots, {x}, {ones({2}), ones({2})}, /*retain_graph=*/true)[0];
    // d/dx (2x + e^(2x)) = 2 + 2 e^(2x)
    EXPECT_TRUE(all_close(g, tensor({4.0, 2 + 2 * std::exp(2.0)}))) << "y first: " << y_first;
  }
  auto [a, b] = std::make_pair(x.narrow(0, 0, 1), x.narrow(0, 1, 1));
  Tensor g = autograd::grad({a, b * 3}, {x}, {ones({1}), ones({1})})[0];
  EXPECT_EQ(values(g), (std::vector<double>{1, 3}));
}

TEST(Autograd, GradientOfANonScalarNeedsAGradient) {
  Tensor x = ones({2}).requires_grad_();
  EXPECT_THROW_WITH((x * 2).backward(), "grad can be implicitly created only for scalar outputs");
  (x * 2).backward(tensor({1.0, 10.0}));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 20}));
  EXPECT_THROW_WITH(ones({2}).sum().backward(), "does not require grad");
}

TEST(Autograd, SecondBackwardNeedsRetainGraph) {
  Tensor x = tensor({2.0}).requires_grad_();
  Tensor y = (x * x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  EXPECT_EQ(x.grad().item<double>(), 8);
  EXPECT_THROW_WITH(y.backward(), "backward through the graph a second time");
  // Nodes that saved no tensor stay usable, as in PyTorch.
  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor b = a + 1;
  b.sum().backward();
  b.sum().backward();
  EXPECT_EQ(values(a.grad()), (std::vector<double>{2, 2}));
}

TEST(Autograd, NoGradAndDetach) {
  Tensor x = ones({2}).requires_grad_();
  {
    NoGradGuard guard;
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
  }
  Tensor d = (x * 2).detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
  EXPECT_TRUE((x * 2).requires_grad());
  EXPECT_THROW_WITH(tensor({1, 2}).requires_grad_(), "only Tensors of floating point and complex dtype");
  EXPECT_THROW_WITH((x * 2).requires_grad_(false), "only change requires_grad of leaf tensors");
}

TEST(Autograd, InPlaceRulesAndVersionChecks) {
  Tensor leaf = ones({2}).requires_grad_();
  EXPECT_THROW_WITH(leaf.add_(1.0),
                    "a leaf tensor that requires grad is being used in an in-place operation");
  {
    NoGradGuard guard;
    leaf.add_(1.0);  // allowed (an optimizer step)
  }
  Tensor a = leaf * 1.0;
  Tensor b = a * a;  // saves a
  a.add_(1.0);       // and then changes it
  EXPECT_THROW_WITH(b.sum().backward(), "modified by an inplace operation");
  Tensor c = leaf * 1.0;
  c.mul_(2).exp_();  // in place on a non-leaf is recorded
  c.sum().backward();
  EXPECT_TRUE(all_close(leaf.grad(), exp(leaf.detach() * 2) * 2));
  Tensor e = leaf.exp();
  e.mul_(2);  // exp saved its output, which has now changed: PyTorch refuses too
  EXPECT_THROW_WITH(e.sum().backward(), "modified by an inplace operation");
}

TEST(Autograd, HooksAndRetainGrad) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  x.register_hook([](const Tensor& g) { return g * 10; });
  int post = 0;
  x.register_post_accumulate_grad_hook(
      [&](const Tensor& t) { post += static_cast<int>(t.grad().sum().item<double>()); });
  Tensor y = x * 3;
  y.retain_grad();
  std::vector<double> seen;
  y.register_hook([&](const Tensor& g) {
    seen = values(g);
    return Tensor();
  });
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{30, 30}));
  EXPECT_EQ(values(y.grad()), (std::vector<double>{1, 1}));
  EXPECT_EQ(seen, (std::vector<double>{1, 1}));
  EXPECT_EQ(post, 60);
}

TEST(Autograd, RemovedHooksNoLongerRun) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  int leaf_calls = 0, post_calls = 0, inner_calls = 0;
  RemovableHandle leaf = x.register_hook([&](const Tensor& g) {
    ++leaf_calls;
    return g * 10;
  });
  RemovableHandle post = x.register_post_accumulate_grad_hook([&](const Tensor&) { ++post_calls; });
  Tensor y = x * 3;
  RemovableHandle inner = y.register_hook([&](const Tensor&) {
    ++inner_calls;
    return Tensor();
  });
  y.sum().backward(Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{30, 30}));
  EXPECT_EQ(leaf_calls + post_calls + inner_calls, 3);
  leaf.remove();
  post.remove();
  inner.remove();
  inner.remove();  // twice: nothing more happens
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{33, 33}));
  EXPECT_EQ(leaf_calls + post_calls + inner_calls, 3);
}

TEST(Autograd, HookHandleOutlivesItsTensor) {
  RemovableHandle handle;
  {
    Tensor x = ones({2}).requires_grad_();
    handle = x.register_post_accumulate_grad_hook([](const Tensor&) {});
  }
  handle.remove();  // the hook list is gone: nothing to do, nothing dangling
}

TEST(Autograd, HookMayRemoveItselfWhileRunning) {
  Tensor x = ones({2}).requires_grad_();
  int calls = 0;
  RemovableHandle self;
  self = x.register_post_accumulate_grad_hook([&](const Tensor&) {
    ++calls;
    self.remove();
  });
  (x * 2).sum().backward();
  (x * 2).sum().backward();
  EXPECT_EQ(calls, 1);
}

TEST(Autograd, QueuedCallbacksRunAfterEveryNode) {
  Tensor a = tensor({1.0}).requires_grad_();
  Tensor b = tensor({2.0}).requires_grad_();
  std::vector<std::string> order;
  bool queued = false;
  auto hook = [&](const char* name) {
    return [&, name](const Tensor&) {
      order.push_back(name);
      if (queued) return;
      queued = true;
      autograd::queue_callback([&] {
        order.push_back("callback");
        autograd::queue_callback([&] { order.push_back("nested callback"); });
      });
    };
  };
  a.register_post_accumulate_grad_hook(hook("a"));
  b.register_post_accumulate_grad_hook(hook("b"));
  (a * 2 + (b * a) * 3).sum().backward();
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order[2], "callback");  // after both leaves, whichever ran first
  EXPECT_EQ(order[3], "nested callback");
  order.clear();
  queued = false;
  (a * 2).sum().backward();  // callbacks do not carry over to the next backward
  EXPECT_EQ(order, (std::vector<std::string>{"a", "callback", "nested callback"}));
}

TEST(Autograd, QueueCallbackOutsideBackwardIsAnError) {
  EXPECT_THROW_WITH(autograd::queue_callback([] {}), "no backward is running");
}

TEST(Autograd, CallbackOfAnInnerBackwardRunsWithIt) {
  Tensor x = tensor({1.0}).requires_grad_();
  Tensor w = tensor({2.0}).requires_grad_();
  std::vector<std::string> order;
  x.register_post_accumulate_grad_hook([&](const Tensor&) {
    autograd::queue_callback([&] { order.push_back("outer"); });
    AutoGradMode grad_on(true);  // backward runs its hooks without grad mode
    Tensor inner = (w * 5).sum();
    autograd::backward({inner});
    order.push_back("inner done");
  });
  w.register_post_accumulate_grad_hook(
      [&](const Tensor&) { autograd::queue_callback([&] { order.push_back("inner"); }); });
  (x * 2).sum().backward();
  EXPECT_EQ(order, (std::vector<std::string>{"inner", "inner done", "outer"}));
}

TEST(Autograd, GradFunctionLeavesDotGradAlone) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor w = tensor({3.0, 4.0}).requires_grad_();
  std::vector<Tensor> g = autograd::grad({(x * w).sum()}, {x});
  EXPECT_EQ(values(g[0]), (std::vector<double>{3, 4}));
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
  Tensor unused = ones({1}).requires_grad_();
  EXPECT_THROW_WITH(autograd::grad({(x * 2).sum()}, {unused}), "not have been used in the graph");
}

TEST(Autograd, DoubleBackward) {
  Tensor x = tensor({2.0}).requires_grad_();
  Tensor y = x * x * x;  // dy/dx = 3x^2 = 12, d2y/dx2 = 6x = 12
  Tensor dy = autograd::grad({y}, {x}, {}, true, /*create_graph=*/true)[0];
  EXPECT_EQ(dy.item<double>(), 12);
  Tensor d2 = autograd::grad({dy}, {x})[0];
  EXPECT_EQ(d2.item<double>(), 12);
}

TEST(Autograd, GradientsKeepTheInputDtype) {
  Tensor x = ones({2}, kFloat32).requires_grad_();
  Tensor y = (x * ones({2}, kFloat64)).sum();
  EXPECT_EQ(y.dtype(), kFloat64);
  y.backward();
  EXPECT_EQ(x.grad().dtype(), kFloat32);
}

TEST(Autograd, AccumulatedGradIsNotAliased) {
  Tensor a = ones({2}).requires_grad_(), b = ones({2}).requires_grad_();
  (a + b).sum().backward();
  a.mutable_grad().add_(5.0);
  EXPECT_EQ(values(b.grad()), (std::vector<double>{1, 1}))
      << "a.grad and b.grad must not share memory";
}

TEST(Autograd, ProdGradientIsTheProductOfTheOthersEvenWithZeros) {
  Tensor x = tensor({{2.0, 0.0, 3.0}, {0.0, 0.0, 5.0}, {1.0, 2.0, 3.0}}).requires_grad_();
  x.prod(1).sum().backward();
  // One zero: only it gets a gradient; two zeros: none; no zero: prod / x.
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 6, 0, 0, 0, 0, 6, 3, 2}));
  Tensor y = tensor({4.0, 0.0, 5.0}).requires_grad_();
  y.prod().backward();
  EXPECT_EQ(values(y.grad()), (std::vector<double>{0, 20, 0}));
}

TEST(Autograd, AGradientFromAnExpandedViewAccumulatesOncePerElement) {
  // sum's gradient is an expanded (stride 0) tensor: kept as .grad, adding into it would add
  // into one memory location several times.
  Tensor x = ones({3}).requires_grad_();
  x.sum().backward();
  x.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 2, 2}));
}

TEST(Autograd, GradRunsOnlyThePartOfTheGraphItNeeds) {
  // As torch.autograd.grad: the nodes below the requested input are not run, nor freed.
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = x * x;
  Tensor z = (y * 3).sum();
  EXPECT_EQ(values(autograd::grad({z}, {y})[0]), (std::vector<double>{3, 3}));
  (y * 4).sum().backward();  // y's node still has its saved tensors
  EXPECT_EQ(values(x.grad()), (std::vector<double>{8, 16}));
  // Both a tensor and one computed from it: the path between them runs.
  Tensor w = tensor({3.0}).requires_grad_();
  Tensor v = w * w;
  std::vector<Tensor> g = autograd::grad({(v * w).sum()}, {w, v});
  EXPECT_EQ(g[0].item<double>(), 27);  // d(w^3)/dw
  EXPECT_EQ(g[1].item<double>(), 3);   // d(v w)/dv
}

TEST(Autograd, InPlaceOnAnExpandedTensorIsAnError) {
  Tensor a = zeros({3}).expand({2, 3});
  EXPECT_THROW_WITH(a.add_(1.0), "more than one element of the written-to tensor");
  EXPECT_THROW_WITH(a.relu_(), "more than one element of the written-to tensor");
  EXPECT_THROW_WITH(a.copy_(ones({2, 3})), "more than one element of the written-to tensor");
  EXPECT_THROW_WITH(a.mul_(ones({2, 3})), "more than one element of the written-to tensor");
  a.fill_(1.0);  // allowed, as in PyTorch: every write stores the same value
  EXPECT_EQ(values(a), (std::vector<double>{1, 1, 1, 1, 1, 1}));
}

}  // namespace
}  // namespace ember
