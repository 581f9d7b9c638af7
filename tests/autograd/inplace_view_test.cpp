// In-place ops on views under autograd: the base's history is rewritten (CopySlices), other views
// of the same memory see the change, and what PyTorch forbids is an error here too.
#include <gtest/gtest.h>

#include "ember/autograd/gradcheck.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using testing::values;

using V = std::vector<double>;

TEST(InplaceOnViews, TheBaseSeesTheModifiedRegion) {
  Tensor x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor y = x * 1.0;
  y.narrow(0, 1, 1).mul_(2.0);
  EXPECT_EQ(y.grad_fn()->name(), "CopySlices");
  EXPECT_EQ(values(y), (V{1, 4, 3}));
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (V{1, 2, 1}));
}

TEST(InplaceOnViews, AViewOfAViewRewritesTheRoot) {
  Tensor x = arange(6.0).to(kFloat64).reshape({2, 3}).requires_grad_();
  Tensor y = x * 1.0;
  Tensor row = y.select(0, 1);
  row.narrow(0, 0, 2).mul_(10.0);
  EXPECT_TRUE(row.narrow(0, 0, 2)._base().is_same(y));
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (V{1, 1, 1, 10, 10, 1}));
}

TEST(InplaceOnViews, AnOlderViewOfTheSameMemorySeesTheChange) {
  Tensor x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor y = x * 1.0;
  Tensor a = y.narrow(0, 0, 2);  // made before the in-place op; overlaps its region
  y.narrow(0, 1, 2).mul_(3.0);
  EXPECT_EQ(values(a), (V{1, 6}));
  a.sum().backward();
  EXPECT_EQ(values(x.grad()), (V{1, 3, 0}));
}

TEST(InplaceOnViews, AViewSeesAnInplaceOpOnItsBase) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = x * 1.0;
  Tensor v = y.view({2, 1});
  y.mul_(5.0);
  (v * v).sum().backward();  // v = 5x, d/dx sum(25 x^2) = 50 x
  EXPECT_EQ(values(x.grad()), (V{50, 100}));
}

TEST(InplaceOnViews, AnExpandedViewSumsItsGradientsIntoTheBase) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = x * 1.0;
  Tensor e = y.narrow(0, 0, 1).expand({4});
  y.mul_(2.0);
  e.sum().backward();  // e = 4 copies of 2 x0
  EXPECT_EQ(values(x.grad()), (V{8, 0}));
}

TEST(InplaceOnViews, CopyIntoAViewMakesTheBaseRequireGrad) {
  Tensor src = tensor({1.0, 2.0}).requires_grad_();
  Tensor b = zeros({4}, kFloat64);
  Tensor before = b.narrow(0, 0, 2);  // a view made while b needed no gradient
  b.narrow(0, 1, 2).copy_(src);
  EXPECT_TRUE(b.requires_grad());
  Tensor w = tensor({10.0, 20.0, 30.0, 40.0});
  (b * w).sum().backward(Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(values(src.grad()), (V{20, 30}));
  src.mutable_grad() = Tensor();
  (before * 7.0).sum().backward();  // before = [0, src0]
  EXPECT_EQ(values(src.grad()), (V{7, 0}));
}

TEST(InplaceOnViews, FillCutsTheOverwrittenValuesOff) {
  Tensor x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor y = x * 1.0;
  y.narrow(0, 0, 1).fill_(5.0);
  (y * y).sum().backward();
  EXPECT_EQ(values(x.grad()), (V{0, 4, 6}));
  Tensor z = x * 1.0;
  z.zero_();
  (z + x).sum().backward();
  EXPECT_EQ(values(x.grad()), (V{1, 5, 7}));
}

TEST(InplaceOnViews, WhatPyTorchForbidsIsAnError) {
  Tensor leaf = tensor({1.0, 2.0}).requires_grad_();
  EXPECT_THROW_WITH(leaf.narrow(0, 0, 1).mul_(2.0),
                    "a view of a leaf tensor that requires grad is being used in an in-place");
  Tensor y = leaf * 1.0;
  EXPECT_THROW_WITH(y.narrow(0, 0, 1).expand({3}).add_(1.0),
                    "more than one element of the written-to tensor refers to a single memory");
  EXPECT_EQ(values(leaf), (V{1, 2}));  // the rejected ops changed nothing
  NoGradGuard no_grad;
  leaf.narrow(0, 0, 1).mul_(2.0);  // allowed without autograd
  EXPECT_EQ(values(leaf), (V{2, 2}));
}

TEST(InplaceOnViews, GradcheckThroughInplaceViewOps) {
  Tensor a = randn({3, 4}, kFloat64).requires_grad_();
  Tensor b = randn({4}, kFloat64).requires_grad_();
  auto fn = [](const std::vector<Tensor>& v) {
    Tensor y = v[0] * 1.0;
    Tensor older = y.select(0, 2);
    y.select(0, 1).mul_(v[1]);  // a row scaled by b
    y.narrow(1, 2, 2).add_(v[0].narrow(1, 0, 2).exp());
    y.t().select(0, 0).copy_(v[1].narrow(0, 0, 3));  // the first column replaced
    return y * older.sum();
  };
  EXPECT_EQ(autograd::gradcheck(fn, {a, b}), "");
}

}  // namespace
}  // namespace ember
