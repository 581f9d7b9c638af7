// Tensor indexing with subscripts (index, index_put_), nonzero, masked_select and scatter, checked
// against values written out by hand; gradients through index by finite differences.
#include <gtest/gtest.h>

#include "ember/autograd/gradcheck.h"
#include "ember/ops/tensor_index.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;

Tensor grid() { return arange(24).reshape({2, 3, 4}); }  // x[i][j][k] = 12i + 4j + k

TEST(TensorIndex, BasicIndicesAreViews) {
  Tensor x = grid();
  Tensor v = index(x, {1, Slice{1, std::nullopt, 1}, TensorIndex::none(), Slice{0, 4, 2}});
  EXPECT_EQ(v.sizes(), (Shape{2, 1, 2}));
  EXPECT_EQ(values(v), (std::vector<double>{16, 18, 20, 22}));
  EXPECT_TRUE(v.is_alias_of(x));
  Tensor e = index(x, {TensorIndex::ellipsis(), -1});
  EXPECT_EQ(e.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(e), (std::vector<double>{3, 7, 11, 15, 19, 23}));
  EXPECT_EQ(index(x, {TensorIndex::boolean(false)}).sizes(), (Shape{0, 2, 3, 4}));
}

TEST(TensorIndex, IntegerTensorsFollowNumPysPlacement) {
  Tensor x = grid();
  // One index tensor: its shape where its dim was.
  Tensor a = index(x, {Slice{}, from_vector<int64_t>({2, 0, 2}, {3})});
  EXPECT_EQ(a.sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(values(a.select(0, 0).select(1, 0)), (std::vector<double>{8, 0, 8}));
  // Two adjacent index tensors, broadcast together, stay in place.
  Tensor b =
      index(x, {Slice{}, from_vector<int64_t>({0, 2}, {2}), from_vector<int64_t>({1, -1}, {2})});
  EXPECT_EQ(b.sizes(), (Shape{2, 2}));
  EXPECT_EQ(values(b), (std::vector<double>{1, 11, 13, 23}));
  // Separated by a slice: the broadcast shape goes in front.
  Tensor c =
      index(x, {from_vector<int64_t>({1, 0}, {2}), Slice{}, from_vector<int64_t>({3, 0}, {2})});
  EXPECT_EQ(c.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(c), (std::vector<double>{15, 19, 23, 0, 4, 8}));
}

TEST(TensorIndex, BoolMasksSelectElements) {
  Tensor x = grid();
  Tensor m = gt(x, 20);
  EXPECT_EQ(values(index(x, {m})), (std::vector<double>{21, 22, 23}));
  EXPECT_EQ(values(masked_select(x, m)), (std::vector<double>{21, 22, 23}));
  Tensor rows = from_vector<int64_t>({1, 0, 1}, {3}).to(kBool);
  EXPECT_EQ(index(x, {0, rows}).sizes(), (Shape{2, 4}));
  EXPECT_EQ(values(nonzero(from_vector<int64_t>({0, 3, 0, 1}, {2, 2}))),
            (std::vector<double>{0, 1, 1, 1}));
}

TEST(TensorIndex, PutWritesThroughEveryKindOfIndex) {
  Tensor x = zeros({3, 4});
  index_put_(x, {1}, Scalar(5));
  index_put_(x, {Slice{}, 0}, from_vector<float>({1, 2, 3}, {3}));
  index_put_(x, {from_vector<int64_t>({0, 2}, {2}), from_vector<int64_t>({3, 3}, {2})}, Scalar(9));
  index_put_(x, {Slice{}, from_vector<int64_t>({2}, {1})}, Scalar(-1));
  EXPECT_EQ(values(x), (std::vector<double>{1, 0, -1, 9, 2, 5, -1, 5, 3, 0, -1, 9}));
  Tensor y = arange(6.0).reshape({2, 3});
  index_put_(y, {gt(y, 3.0)}, Scalar(0));
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 2, 3, 0, 0}));
  index_put_(y, {ge(y, 1.0)}, from_vector<float>({7, 8, 9}, {3}));
  EXPECT_EQ(values(y), (std::vector<double>{0, 7, 8, 9, 0, 0}));
}

TEST(TensorIndex, BadIndicesAreIndexErrors) {
  Tensor x = grid();
  EXPECT_THROW(index(x, {0, 0, 0, 0}), IndexError);
  EXPECT_THROW(index(x, {5}), IndexError);
  EXPECT_THROW(index(x, {TensorIndex::ellipsis(), TensorIndex::ellipsis()}), IndexError);
  EXPECT_THROW(index(x, {from_vector<int64_t>({2}, {1})}), IndexError);
  EXPECT_THROW(index(x, {from_vector<float>({0}, {1})}), IndexError);
  EXPECT_THROW(index(x, {Slice{std::nullopt, std::nullopt, -1}}), ValueError);
  Tensor before = x.clone();
  EXPECT_THROW(index_put_(x, {Slice{}, from_vector<int64_t>({0, 7}, {2})}, Scalar(1)), IndexError);
  EXPECT_TRUE(equal(x, before));  // nothing was written
}

TEST(TensorIndex, GradientsFlowThroughIndexAndScatter) {
  Tensor x = uniform({3, 4}, kFloat64).requires_grad_();
  Tensor idx = from_vector<int64_t>({2, 0, 2}, {3});
  EXPECT_EQ(autograd::gradcheck(
                [&](const std::vector<Tensor>& in) {
                  return index(in[0], {idx, Slice{1, 3, 1}}).square().sum();
                },
                {x}),
            "");
  Tensor src = uniform({1, 4}, kFloat64).requires_grad_();
  Tensor where = from_vector<int64_t>({1, 0, 2, 1}, {1, 4});
  EXPECT_EQ(autograd::gradcheck(
                [&](const std::vector<Tensor>& in) {
                  return in[0].scatter(0, where, in[1]).square().sum();
                },
                {x, src}),
            "");
}

TEST(Scatter, WritesSrcAtTheIndexAlongDim) {
  Tensor x = zeros({2, 3});
  x.scatter_(1, from_vector<int64_t>({2, 0, 1, 1}, {2, 2}),
             from_vector<float>({5, 6, 7, 8}, {2, 2}));
  EXPECT_EQ(values(x), (std::vector<double>{6, 0, 5, 0, 8, 0}));  // a repeated index: one wins
  Tensor b = zeros({3}, kBool).scatter(0, from_vector<int64_t>({1}, {1}), ones({1}, kBool));
  EXPECT_EQ(values(b), (std::vector<double>{0, 1, 0}));
}

}  // namespace
}  // namespace ember
