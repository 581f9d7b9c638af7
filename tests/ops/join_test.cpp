#include <gtest/gtest.h>

#include "tests/util/reference.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;

TEST(Join, CatAndStack) {
  Tensor a = arange(6).view({2, 3}), b = arange(3).view({1, 3});
  EXPECT_EQ(values(cat({a, b})), (std::vector<double>{0, 1, 2, 3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(cat({a, a}, 1).sizes(), (Shape{2, 6}));
  EXPECT_EQ(cat({a, zeros({0}, kInt64)}).sizes(), (Shape{2, 3})) << "legacy empty 1-D is skipped";
  EXPECT_EQ(cat({a, a.to(kFloat64)}).dtype(), kFloat64);
  EXPECT_EQ(stack({b, b}).sizes(), (Shape{2, 1, 3}));
  EXPECT_EQ(stack({b, b}, 2).sizes(), (Shape{1, 3, 2}));
  EXPECT_THROW_WITH(cat({a, ones({2, 2}, kInt64)}),
                    "sizes of tensors must match except in dimension 0");
  EXPECT_THROW_WITH(stack({a, b}), "stack expects each tensor to be equal size");
}

TEST(Join, ContiguousPartsLandInPlaceAlongAnyDim) {
  Tensor a = arange(6).view({2, 3}), b = arange(10, 14).view({2, 2});
  EXPECT_EQ(values(cat({a, b}, 1)), (std::vector<double>{0, 1, 2, 10, 11, 3, 4, 5, 12, 13}));
  EXPECT_EQ(values(cat({a, zeros({2, 0}, kInt64), a.t().contiguous().t()}, 1)),
            (std::vector<double>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}))
      << "an empty part, and a non-contiguous one";
  EXPECT_EQ(values(stack({a, a + 6}, 1)),
            (std::vector<double>{0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11}));
  Tensor big = arange(1 << 21, kFloat32);  // 8 MiB: the copy kernels' path
  EXPECT_TRUE(cat({big, big}).narrow(0, 1 << 21, 1 << 21).equal(big));
  EXPECT_EQ(values(cat({a.narrow(0, 1, 1), a.narrow(0, 0, 1)})),
            (std::vector<double>{3, 4, 5, 0, 1, 2}))
      << "contiguous views read from their offset";
  EXPECT_EQ(values(cat({a.narrow(1, 1, 2), b}, 1)),
            (std::vector<double>{1, 2, 10, 11, 4, 5, 12, 13}));
}

TEST(Join, RepeatAndTileCopyAlongEachDimAndSumGradients) {
  Tensor a = arange(6).view({2, 3});
  // torch.arange(6).view(2, 3).repeat(2, 1, 2)
  Tensor r = a.repeat({2, 1, 2});
  EXPECT_EQ(r.sizes(), (Shape{2, 2, 6}));
  EXPECT_EQ(values(r[1]), (std::vector<double>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_TRUE(r[0].equal(r[1]));
  EXPECT_EQ(values(a.t().repeat({1, 2})), (std::vector<double>{0, 3, 0, 3, 1, 4, 1, 4, 2, 5, 2, 5}))
      << "a non-contiguous input is read in its logical order";
  EXPECT_EQ(a.repeat({0, 2}).sizes(), (Shape{0, 6}));
  EXPECT_EQ(tile(a, {2}).sizes(), (Shape{2, 6})) << "tile pads the repeats with leading 1s";
  EXPECT_TRUE(tile(a, {2, 1}).equal(a.repeat({2, 1})));
  EXPECT_THROW_WITH(a.repeat({2}), "can not be smaller than number of dimensions of tensor");
  EXPECT_THROW_WITH(a.repeat({1, -1}), "negative dimension");

  Tensor x = randn({2, 3}).requires_grad_(true);
  (x.repeat({3, 2}) * arange(36, kFloat32).view({6, 6})).sum().backward();
  // Each element of x appears 6 times; its gradient is the sum of the weights at those places.
  Tensor w = arange(36, kFloat32).view({3, 2, 2, 3});
  EXPECT_TRUE(all_close(x.grad(), w.sum({0, 2}), 0, 0));
}

}  // namespace
}  // namespace ember
