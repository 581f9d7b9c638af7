#include <gtest/gtest.h>

#include "ember/core/shape.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

TEST(Shape, BroadcastTable) {
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {
      {{}, {}, {}},
      {{3}, {}, {3}},
      {{2, 3}, {3}, {2, 3}},
      {{2, 1}, {1, 3}, {2, 3}},
      {{5, 1, 4}, {3, 1}, {5, 3, 4}},
      {{1}, {0}, {0}},
      {{2, 0}, {1}, {2, 0}},
      {{8, 1, 6, 1}, {7, 1, 5}, {8, 7, 6, 5}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(broadcast_shapes(c.a, c.b, "t"), c.out) << c.a << " with " << c.b;
    EXPECT_EQ(broadcast_shapes(c.b, c.a, "t"), c.out) << c.b << " with " << c.a;
  }
  EXPECT_THROW_WITH(broadcast_shapes({2, 3}, {4}, "add"), "[add] shapes [2, 3] and [4]");
}

TEST(Shape, InferSize) {
  EXPECT_EQ(infer_size({-1, 4}, 12, "view"), (Shape{3, 4}));
  EXPECT_EQ(infer_size({2, -1, 2}, 12, "view"), (Shape{2, 3, 2}));
  EXPECT_THROW_WITH(infer_size({-1, -1}, 12, "view"), "only one dimension can be inferred");
  EXPECT_THROW_WITH(infer_size({5, -1}, 12, "view"), "invalid for input of size 12");
  EXPECT_THROW_WITH(infer_size({3, 5}, 12, "view"), "invalid for input of size 12");
}

TEST(Shape, Contiguity) {
  EXPECT_TRUE(is_contiguous_layout({2, 3}, {3, 1}));
  EXPECT_FALSE(is_contiguous_layout({2, 3}, {1, 2}));
  EXPECT_TRUE(is_contiguous_layout({2, 1, 3}, {3, 100, 1}));  // size-1 dims may have any stride
  EXPECT_TRUE(is_contiguous_layout({0, 3}, {7, 7}));
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
}

TEST(Shape, WrapDim) {
  EXPECT_EQ(wrap_dim(-1, 3, "op"), 2);
  EXPECT_EQ(wrap_dim(0, 0, "op"), 0);
  EXPECT_THROW_WITH(wrap_dim(3, 3, "sum"),
                    "[sum] dimension out of range (expected to be in range of [-3, 2], but got 3)");
}

TEST(Shape, OverflowIsAnError) {
  EXPECT_THROW_WITH(numel_of({int64_t{1} << 40, int64_t{1} << 40}), "too many elements");
}

}  // namespace
}  // namespace ember
