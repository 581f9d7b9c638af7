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

}  // namespace
}  // namespace ember
