#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "tests/util/test_util.h"

namespace ember {
namespace {

using testing::all_close;
using testing::values;

std::string str(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

TEST(Tensor, MetadataOfAFreshTensor) {
  Tensor t = empty({2, 3, 4});
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(t.device(), Device("cpu"));
  EXPECT_EQ(t.get_device(), -1);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.nbytes(), 96u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u) << "64-byte aligned";
  EXPECT_THROW_WITH(t.data_ptr<double>(), "expected a tensor of dtype float64, got float32");
  EXPECT_THROW_WITH(empty({2, -1}), "negative dimension");
}

TEST(Tensor, Factories) {
  EXPECT_EQ(values(zeros({3})), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(values(ones({2}, kInt32)), (std::vector<double>{1, 1}));
  EXPECT_EQ(values(full({2}, 2.5)), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(full({1}, 3).dtype(), kInt64);
  EXPECT_EQ(full({1}, 3.0).dtype(), kFloat32);
  EXPECT_EQ(full({1}, true).dtype(), kBool);
  EXPECT_EQ(values(arange(5)), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(5).dtype(), kInt64);
  EXPECT_EQ(arange(0.0, 1.0, 0.25).dtype(), kFloat32);
  EXPECT_EQ(values(arange(1, 10, 3)), (std::vector<double>{1, 4, 7}));
  EXPECT_EQ(values(arange(5, 0, -2)), (std::vector<double>{5, 3, 1}));
  EXPECT_EQ(values(linspace(0, 1, 5)), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(values(eye(2, 3)), (std::vector<double>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(values(tensor({{1, 2}, {3, 4}})), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(tensor({{1, 2}, {3, 4}}).dtype(), kInt64);
  EXPECT_EQ(tensor({1.5}).dtype(), kFloat32);
  EXPECT_THROW_WITH(arange(0, 5, 0), "step must be nonzero");
}

TEST(Tensor, FromNestedListsLikeTorchTensor) {
  Tensor column = tensor({{5}, {6}});
  EXPECT_EQ(column.sizes(), (Shape{2, 1}));
  EXPECT_EQ(column.dtype(), kInt64);
  EXPECT_EQ(tensor({{{1.0}, {2.0}}, {{3.0}, {4.0}}}).sizes(), (Shape{2, 2, 1}));
  Tensor scalar = tensor(2.5);
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.item<double>(), 2.5);
  EXPECT_EQ(tensor({5}).sizes(), (Shape{1}));
  // The widest kind wins (float over int over bool); a given dtype wins over all.
  EXPECT_EQ(tensor({1, 2.5}).dtype(), kFloat32);
  EXPECT_EQ(tensor({true, false}).dtype(), kBool);
  EXPECT_EQ(tensor({true, 2}).dtype(), kInt64);
  EXPECT_EQ(tensor({1, 2}, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(tensor({1, 2}, Device("cpu")).dtype(), kInt64);  // a device alone keeps the inference
  EXPECT_TRUE(tensor({1.0}, TensorOptions().with_requires_grad()).requires_grad());
  int64_t big = (int64_t{1} << 60) + 1;  // not representable as a double
  EXPECT_EQ(tensor({big}).item<int64_t>(), big);
  size_t n = 3;
  EXPECT_EQ(values(tensor({n, n + 1})), (std::vector<double>{3, 4}));
  Tensor empty_list = tensor({});
  EXPECT_EQ(empty_list.sizes(), (Shape{0}));
  EXPECT_EQ(empty_list.dtype(), kFloat32);
  EXPECT_EQ(tensor({{}, {}}).sizes(), (Shape{2, 0}));
  // Ragged data is an error naming the dim, as in PyTorch.
  EXPECT_THROW_WITH(tensor({{1, 2}, {3}}), "expected sequence of length 2 at dim 1 (got 1)");
  EXPECT_THROW_WITH(tensor({{1, 2}, 3}), "expected a sequence at dim 1");
  EXPECT_THROW_WITH(tensor({1, {2}}), "expected a number at dim 1, got a sequence");
}

TEST(Tensor, RandomIsSeededAndDistributed) {
  manual_seed(7);
  Tensor a = randn({10000});
  manual_seed(7);
  Tensor b = randn({10000});
  EXPECT_TRUE(a.equal(b));
  EXPECT_NEAR(a.mean().item<double>(), 0.0, 0.05);
  EXPECT_NEAR(a.std().item<double>(), 1.0, 0.05);
  Tensor u = rand({10000});
  EXPECT_GE(u.min().item<double>(), 0.0);
  EXPECT_LT(u.max().item<double>(), 1.0);
  EXPECT_NEAR(u.mean().item<double>(), 0.5, 0.02);
  Tensor r = randint(3, 7, {1000});
  EXPECT_EQ(r.min().item<int64_t>(), 3);
  EXPECT_EQ(r.max().item<int64_t>(), 6);
  Tensor p = randperm(100);
  std::vector<double> v = values(p);
  std::sort(v.begin(), v.end());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(v[static_cast<size_t>(i)], i);
  Generator g(42);
  Tensor g1 = rand({5}, {}, &g);
  g.manual_seed(42);
  EXPECT_TRUE(g1.equal(rand({5}, {}, &g)));
}

// A generator's state put back draws the same numbers again (what a resumed job relies on).
TEST(Tensor, GeneratorStateRoundTrips) {
  Generator g(7);
  rand({3}, {}, &g);
  std::pair<uint64_t, uint64_t> state = g.get_state();
  Tensor first = rand({5}, {}, &g);
  Generator other(99);
  other.set_state(state);
  EXPECT_TRUE(first.equal(rand({5}, {}, &other)));
  EXPECT_FALSE(first.equal(rand({5}, {}, &g))) << "the original has moved on";
}

TEST(Tensor, ItemAndToList) {
  EXPECT_EQ(tensor({3.5}).item<double>(), 3.5);
  EXPECT_EQ(scalar_tensor(7, kInt64).item<int64_t>(), 7);
  EXPECT_TRUE(scalar_tensor(true, kBool).item<bool>());
  EXPECT_THROW_WITH(zeros({2}).item(), "a Tensor with 2 elements cannot be converted to Scalar");
  EXPECT_EQ(arange(4).tolist<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(Tensor, ToConvertsDtypes) {
  Tensor f = tensor({1.7, -2.2, 0.0});
  EXPECT_EQ(values(f.to(kInt64)), (std::vector<double>{1, -2, 0}));
  EXPECT_EQ(values(f.to(kBool)), (std::vector<double>{1, 1, 0}));
  EXPECT_TRUE(all_close(f.to(kFloat16).to(kFloat32), f, 1e-3, 0));
  EXPECT_TRUE(all_close(f.to(kBFloat16).to(kFloat32), f, 1e-2, 0));
  EXPECT_TRUE(f.to(kFloat32).is_same(f)) << "no copy when nothing changes";
  EXPECT_FALSE(f.to(kFloat32, false, /*copy=*/true).is_same(f));
}

TEST(Tensor, CopyBroadcastsAndConverts) {
  Tensor dst = zeros({2, 3});
  dst.copy_(tensor({1, 2, 3}));
  EXPECT_EQ(values(dst), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  EXPECT_THROW_WITH(dst.copy_(zeros({4})), "cannot be broadcast");
  uint32_t v = dst._version();
  dst.fill_(5);
  EXPECT_GT(dst._version(), v);
}

TEST(Tensor, PrintsLikePyTorch) {
  EXPECT_EQ(str(tensor({{1.0, 2.0}, {3.0, 4.0}})), "tensor([[1., 2.],\n        [3., 4.]])");
  EXPECT_EQ(str(tensor({1.5, -2.25})), "tensor([ 1.5000, -2.2500])");
  EXPECT_EQ(str(tensor({1, 2, 3})), "tensor([1, 2, 3])");
  EXPECT_EQ(str(tensor({1, 2}, kInt32)), "tensor([1, 2], dtype=ember.int32)");
  EXPECT_EQ(str(tensor({true, false})), "tensor([ True, False])");
  EXPECT_EQ(str(scalar_tensor(2.5)), "tensor(2.5000)");
  EXPECT_EQ(str(zeros({0})), "tensor([])");
  EXPECT_EQ(str(zeros({2, 0})), "tensor([], size=(2, 0))");
  EXPECT_EQ(str(tensor({1e-5, 1.0})), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(str(ones({2}).requires_grad_()), "tensor([1., 1.], requires_grad=True)");
  EXPECT_EQ(str(ones({2}, kFloat64)), "tensor([1., 1.], dtype=ember.float64)");
  std::string big = str(arange(2000));
  EXPECT_EQ(big, "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  // Integers print exactly, beyond what a double holds.
  EXPECT_EQ(str(tensor({int64_t{9007199254740993}, int64_t{-5}})),
            "tensor([9007199254740993,               -5])");
}

TEST(Tensor, FactoryArgumentsAreCheckedLikePyTorch) {
  EXPECT_EQ(arange(5, TensorOptions(Device("cpu"))).dtype(), kInt64) << "a device alone infers";
  EXPECT_EQ(arange(0.0, 2.0, 0.5).dtype(), kFloat32);
  EXPECT_THROW_WITH(arange(0.0, INFINITY), "unsupported range");
  EXPECT_THROW_WITH(arange(0.0, 1e300, 1.0), "too many");
  EXPECT_EQ(randint(0, 5, {3}, TensorOptions(Device("cpu"))).dtype(), kInt64);
  EXPECT_THROW_WITH(randint(0, 300, {3}, kUInt8), "[0, 300) is out of bounds for uint8");
  Tensor t = empty({4});
  EXPECT_THROW_WITH(uniform_(t, 2, 1), "found from=2 > to=1");
  EXPECT_THROW_WITH(normal_(t, 0, -1), "expects std >= 0.0");
}

TEST(Tensor, RandNeverReachesOne) {
  // Drawn with each dtype's significand width, so the conversion never rounds up to 1.
  manual_seed(0);
  for (DType t : {kFloat16, kBFloat16, kFloat32}) {
    Tensor r = rand({1 << 20}, t);
    EXPECT_LT(r.max().item<double>(), 1.0) << t;
    EXPECT_GT(r.max().item<double>(), 0.99) << t;
    EXPECT_GE(r.min().item<double>(), 0.0) << t;
  }
}

}  // namespace
}  // namespace ember
