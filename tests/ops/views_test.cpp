#include <gtest/gtest.h>

#include "tests/util/reference.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;

TEST(Views, ShareStorageAndTrackStrides) {
  Tensor x = arange(24, kFloat32).reshape({2, 3, 4});
  Tensor t = x.transpose(0, 2);
  EXPECT_EQ(t.sizes(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.strides(), (Shape{1, 4, 12}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_TRUE(t.is_alias_of(x));
  t.fill_(1);  // writes through the view
  EXPECT_EQ(x.sum().item<double>(), 24);
  Tensor y = arange(6).view({2, 3});
  EXPECT_EQ(values(y.permute({1, 0})), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(values(y.t().contiguous()), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(values(y.select(1, 2)), (std::vector<double>{2, 5}));
  EXPECT_EQ(values(y[1]), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(values(y.select(0, -1)), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(values(y.narrow(1, 1, 2)), (std::vector<double>{1, 2, 4, 5}));
  EXPECT_EQ(values(arange(10).slice(0, 1, 8, 3)), (std::vector<double>{1, 4, 7}));
  EXPECT_EQ(values(arange(10).slice(0, -3, 100)), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(y.unsqueeze(0).sizes(), (Shape{1, 2, 3}));
  EXPECT_EQ(y.unsqueeze(-1).sizes(), (Shape{2, 3, 1}));
  EXPECT_EQ(ones({1, 3, 1}).squeeze().sizes(), (Shape{3}));
  EXPECT_EQ(ones({1, 3, 1}).squeeze(2).sizes(), (Shape{1, 3}));
  EXPECT_EQ(ones({2, 3, 4}).flatten(1).sizes(), (Shape{2, 12}));
  EXPECT_EQ(ones({2, 12}).unflatten(1, {3, -1}).sizes(), (Shape{2, 3, 4}));
}

// Transposed copies take the tiled path (backend/cpu/copy.cpp) for every element size, batched
// or not, with edges that are not multiples of its tile.
TEST(Views, TransposedCopiesMatchTheElementLoop) {
  for (DType t : {kInt8, kFloat16, kFloat32, kFloat64, kComplex128}) {
    for (const Shape& shape : {Shape{37, 53}, Shape{3, 16, 9}, Shape{2, 64, 64}}) {
      Tensor x =
          remainder(arange(0, static_cast<double>(numel_of(shape)), 1, TensorOptions(kFloat64)),
                    101)
              .reshape(shape)
              .to(t);
      Tensor y = x.transpose(-2, -1).contiguous();
      ASSERT_TRUE(y.is_contiguous());
      for (int64_t i = 0; i < x.size(-2); i += 5)
        for (int64_t j = 0; j < x.size(-1); j += 3)
          EXPECT_EQ(y.select(-1, i).select(-1, j).to(kFloat64).sum().item<double>(),
                    x.select(-2, i).select(-1, j).to(kFloat64).sum().item<double>())
              << t << " " << shape;
    }
  }
}

TEST(Views, ExpandUsesZeroStrides) {
  Tensor x = tensor({1.0, 2.0, 3.0});
  Tensor e = x.expand({4, 3});
  EXPECT_EQ(e.strides(), (Shape{0, 1}));
  EXPECT_EQ(e.sum().item<double>(), 24);
  EXPECT_EQ(ones({3, 1}).expand({-1, 5}).sizes(), (Shape{3, 5}));
  EXPECT_THROW_WITH(ones({3}).expand({2, 4}), "must match the existing size (3)");
}

TEST(Views, ViewVersusReshape) {
  Tensor x = arange(12).view({3, 4});
  Tensor t = x.t();
  EXPECT_THROW_WITH(t.view({12}), "use .reshape(...) instead");
  Tensor r = t.reshape({12});
  EXPECT_FALSE(r.is_alias_of(x)) << "a copy was needed";
  EXPECT_EQ(values(r), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_TRUE(x.reshape({2, 6}).is_alias_of(x)) << "no copy when a view works";
  EXPECT_TRUE(x.view({-1}).is_alias_of(x));
  // Views across a transposed pair of dims that stay together.
  Tensor y = arange(24).view({2, 3, 4}).permute({1, 0, 2});
  EXPECT_TRUE(y.reshape({3, 2, 2, 2}).is_alias_of(y));
  EXPECT_THROW_WITH(x.view({5, -1}), "invalid for input of size 12");
}

TEST(Views, SplitChunkUnbind) {
  Tensor x = arange(10);
  std::vector<Tensor> parts = x.split(4);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(values(parts[2]), (std::vector<double>{8, 9}));
  std::vector<Tensor> sizes = x.split(Shape{3, 7});
  EXPECT_EQ(sizes[1].numel(), 7);
  EXPECT_THROW_WITH(x.split(Shape{3, 3}), "must sum to the size");
  EXPECT_EQ(x.chunk(3).size(), 3u);
  EXPECT_EQ(x.chunk(3)[0].numel(), 4);
  EXPECT_EQ(arange(6).view({2, 3}).unbind(1).size(), 3u);
}

// split's and unbind's pieces share one backward node that joins their gradients (zeros for the
// pieces unused), as PyTorch's SplitBackward0/UnbindBackward0; in-place changes to a piece and
// double backward go through it.
TEST(Views, SplitAndUnbindPiecesShareOneBackwardNode) {
  Tensor x = arange(12, kFloat64).view({3, 4}).requires_grad_();
  std::vector<Tensor> p = x.split(Shape{1, 3}, 1);
  ASSERT_EQ(p[0].grad_fn(), p[1].grad_fn());
  EXPECT_EQ(p[0].grad_fn()->name(), "SplitBackward0");
  EXPECT_TRUE(p[1].is_alias_of(x));
  (p[1] * 2.0).sum().backward();  // piece 0 unused: its part of the gradient is zero
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 2, 2, 2, 0, 2, 2, 2, 0, 2, 2, 2}));

  Tensor y = arange(6, kFloat64).view({2, 3}).requires_grad_();
  std::vector<Tensor> rows = y.unbind(0);
  EXPECT_EQ(rows[0].grad_fn()->name(), "UnbindBackward0");
  (rows[0] * 3.0 + rows[1] * rows[1]).sum().backward();
  EXPECT_EQ(values(y.grad()), (std::vector<double>{3, 3, 3, 6, 8, 10}));

  // An in-place change of a piece of a non-leaf: the base's gradient sees it (CopySlices).
  Tensor z = arange(6, kFloat64).requires_grad_();
  Tensor h = z * 1.0;
  std::vector<Tensor> halves = h.split(3);
  halves[1].mul_(5.0);
  h.sum().backward();
  EXPECT_EQ(values(z.grad()), (std::vector<double>{1, 1, 1, 5, 5, 5}));

  // Double backward through the join.
  Tensor w = arange(4, kFloat64).requires_grad_();
  std::vector<Tensor> q = (w * w).split(2);
  Tensor g = autograd::grad({(q[0] * q[0]).sum()}, {w}, {}, true, true)[0];  // 4 w^3
  EXPECT_EQ(values(g), (std::vector<double>{0, 4, 0, 0}));
  Tensor gg = autograd::grad({g.sum()}, {w})[0];  // 12 w^2 on the first half
  EXPECT_EQ(values(gg), (std::vector<double>{0, 12, 0, 0}));
}

TEST(Views, LayoutsAreCheckedForBoundsAndOverflow) {
  // Every one of these would read or write outside the storage if accepted.
  EXPECT_THROW_WITH(empty_strided({2}, {int64_t{1} << 62}), "overflows");
  EXPECT_THROW_WITH(empty_strided({2}, {-1}), "must be non-negative");
  EXPECT_THROW_WITH(as_strided(ones({3}), {10}, {1}, 0), "out of bounds for a storage of 12 bytes");
  EXPECT_THROW_WITH(as_strided(ones({3}), {1}, {1}, -1), "negative storage offset");
  EXPECT_THROW_WITH(empty({0}).view({int64_t{1} << 32, int64_t{1} << 32}), "too many elements");
  EXPECT_THROW_WITH(ones({1}).expand({-2}), "[expand] invalid size -2");
  EXPECT_THROW_WITH(ones({4}).narrow(0, 2, INT64_MAX), "exceeds dimension size");
  EXPECT_EQ(arange(10).slice(0, 1, 10, INT64_MAX).sizes(), (Shape{1}));
  EXPECT_THROW_WITH(scalar_tensor(1.0).size(0), "the tensor has no dimensions");
  EXPECT_THROW_WITH(scalar_tensor(1.0).stride(-1), "the tensor has no dimensions");
}

TEST(Views, AsStridedIsDifferentiable) {
  Tensor x = arange(6, kFloat64).requires_grad_();
  Tensor y = as_strided(x, {2, 2}, {1, 2}, 1);  // [[1, 3], [2, 4]]
  EXPECT_EQ(values(y), (std::vector<double>{1, 3, 2, 4}));
  (y * tensor({{1.0, 2.0}, {3.0, 4.0}}, kFloat64)).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 1, 3, 2, 4, 0}));
}

TEST(Views, EmptyEdgeCasesAsPyTorch) {
  EXPECT_EQ(empty({0}).chunk(3).size(), 3u);
  EXPECT_EQ(matmul(empty({2, 3, 0}), empty({0, 4})).sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(values(matmul(ones({2, 3, 0}), ones({0, 4})).sum()), std::vector<double>{0});
  EXPECT_THROW_WITH(eye(3, -5), "n and m must be non-negative");
  Tensor b = tensor({true, false});
  EXPECT_THROW_WITH(b.add_(1), "can't be cast to the desired output type bool");
}

TEST(Views, UnfoldRot90AndTakeAlongDimAreCppOps) {
  // Once written in the Python binding; now C++ ops with their entry lines.
  Tensor x = arange(6).reshape({2, 3});
  Tensor w = unfold(x, 1, 2, 1);  // windows of 2 along dim 1: (2, 2, 2), sharing x's storage
  EXPECT_EQ(w.sizes(), (Shape{2, 2, 2}));
  EXPECT_EQ(w.data_ptr(), x.data_ptr());
  EXPECT_EQ(w.select(0, 1).select(0, 1).select(0, 1).item<int64_t>(), 5);
  EXPECT_THROW_WITH(unfold(x, 1, 4, 1), "maximum size for tensor at dimension 1 is 3");
  Tensor r = rot90(x);  // [[2, 5], [1, 4], [0, 3]]
  EXPECT_EQ(r.sizes(), (Shape{3, 2}));
  EXPECT_EQ(r.select(0, 0).select(0, 1).item<int64_t>(), 5);
  EXPECT_TRUE(rot90(x, 4).equal(x));
  Tensor idx = full({2, 1}, 2, TensorOptions(kInt64));
  EXPECT_EQ(take_along_dim(x, idx, 1).reshape({-1}).sum().item<int64_t>(), 2 + 5);
  EXPECT_EQ(take(x, full({1}, 4, TensorOptions(kInt64))).item<int64_t>(), 4);
}

}  // namespace
}  // namespace ember
