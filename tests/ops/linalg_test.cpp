#include <gtest/gtest.h>

#include <iostream>

#include "ember/backend/cpu/bf16_kernels.h"
#include "tests/util/reference.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;

// (n, m) @ (m, p) in doubles.
std::vector<double> ref_mm(const std::vector<double>& a, const std::vector<double>& b, int64_t n,
                           int64_t m, int64_t p) {
  std::vector<double> c(static_cast<size_t>(n * p), 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < m; ++k)
      for (int64_t j = 0; j < p; ++j)
        c[static_cast<size_t>(i * p + j)] +=
            a[static_cast<size_t>(i * m + k)] * b[static_cast<size_t>(k * p + j)];
  return c;
}

TEST(Linalg, MmMatchesReferenceForManyShapesAndLayouts) {
  for (auto [n, m, p] : std::vector<std::array<int64_t, 3>>{
           {1, 1, 1}, {3, 4, 5}, {64, 33, 17}, {130, 257, 129}, {0, 3, 2}, {2, 0, 3}}) {
    for (DType dt : {kFloat32, kFloat64}) {
      Tensor a = uniform({n, m}, dt), b = uniform({m, p}, dt);
      Tensor expected = make(ref_mm(values(a), values(b), n, m, p), {n, p});
      double tol = dt == kFloat32 ? 1e-4 : 1e-10;
      EXPECT_TRUE(all_close(mm(a, b), expected, tol, tol)) << n << "x" << m << "x" << p;
      // Transposed operands go to BLAS without copies; other strides are copied first.
      Tensor at = a.t().contiguous().t(), bt = b.t().contiguous().t();
      EXPECT_TRUE(all_close(mm(at, bt), expected, tol, tol)) << "transposed";
      EXPECT_TRUE(all_close(mm(noncontiguous(a), noncontiguous(b)), expected, tol, tol))
          << "strided";
    }
  }
}

TEST(Linalg, LargeProductsSplitOverThreadsCorrectly) {
  Tensor a = uniform({300, 200}), b = uniform({200, 1000});
  Tensor expected = make(ref_mm(values(a), values(b), 300, 200, 1000), {300, 1000});
  EXPECT_TRUE(all_close(mm(a, b), expected, 1e-4, 1e-4));
  Tensor tall = uniform({1000, 64}), w = uniform({64, 20});
  EXPECT_TRUE(all_close(
      mm(tall, w), make(ref_mm(values(tall), values(w), 1000, 64, 20), {1000, 20}), 1e-4, 1e-4));
}

TEST(Linalg, MatmulFollowsTorchShapes) {
  EXPECT_EQ(matmul(ones({3}), ones({3})).sizes(), Shape{});
  EXPECT_EQ(matmul(ones({2, 3}), ones({3})).sizes(), (Shape{2}));
  EXPECT_EQ(matmul(ones({3}), ones({3, 4})).sizes(), (Shape{4}));
  EXPECT_EQ(matmul(ones({5, 2, 3}), ones({3, 4})).sizes(), (Shape{5, 2, 4}));
  EXPECT_EQ(matmul(ones({5, 2, 3}), ones({3})).sizes(), (Shape{5, 2}));
  EXPECT_EQ(matmul(ones({3}), ones({5, 3, 4})).sizes(), (Shape{5, 4}));
  EXPECT_EQ(matmul(ones({2, 1, 2, 3}), ones({4, 3, 5})).sizes(), (Shape{2, 4, 2, 5}));
  EXPECT_EQ(matmul(ones({3}), ones({3})).item<double>(), 3);
  Tensor a = uniform({2, 3, 4}, kFloat64), b = uniform({2, 4, 5}, kFloat64);
  Tensor r = matmul(a, b);
  for (int64_t i = 0; i < 2; ++i) EXPECT_TRUE(all_close(r[i], mm(a[i], b[i]), 1e-12, 1e-12));
  Tensor bb = uniform({4, 5}, kFloat64);
  EXPECT_TRUE(all_close(matmul(a, bb)[1], mm(a[1], bb), 1e-12, 1e-12));
}

TEST(Linalg, AddmmLinearAndIntegers) {
  Tensor bias = tensor({1.0, 2.0});
  Tensor a = tensor({{1.0, 2.0}, {3.0, 4.0}}), b = tensor({{1.0, 0.0}, {0.0, 1.0}});
  EXPECT_TRUE(all_close(addmm(bias, a, b), tensor({{2.0, 4.0}, {4.0, 6.0}})));
  EXPECT_TRUE(all_close(addmm(bias, a, b, 0.5, 2.0), tensor({{2.5, 5.0}, {6.5, 9.0}})));
  Tensor x = uniform({4, 3}), w = uniform({2, 3}), wb = uniform({2});
  EXPECT_TRUE(all_close(linear(x, w, wb), mm(x, w.t()) + wb, 1e-6, 1e-6));
  EXPECT_TRUE(all_close(linear(x.unsqueeze(0), w, wb)[0], mm(x, w.t()) + wb, 1e-6, 1e-6));
  EXPECT_EQ(values(mm(tensor({{1, 2}, {3, 4}}), tensor({5, 6}).view({2, 1}))),
            (std::vector<double>{17, 39}));
  EXPECT_EQ(mm(tensor({1, 2}).view({1, 2}), tensor({5, 6}).view({2, 1})).dtype(), kInt64);
  EXPECT_TRUE(all_close(mm(a.to(kFloat16), b.to(kFloat16)).to(kFloat32), mm(a, b), 1e-3, 1e-3));
}

// Integer products wrap around in the dtype's width, as PyTorch's CPU matmul does: the expected
// values are torch 1.13's on this machine. Through float64 they would round above 2^53 and
// saturate when cast back.
TEST(Linalg, IntegerProductsWrapAsInTorch) {
  int64_t two20 = int64_t{1} << 20, two12 = int64_t{1} << 12, two62 = int64_t{1} << 62;
  EXPECT_EQ(
      mm(tensor({{two20, two20}}, kInt32), tensor({{two12}, {two12 + 3}}, kInt32)).item<int64_t>(),
      3145728);  // (2^33 + 3 * 2^20) mod 2^32
  EXPECT_EQ(mm(tensor({{200, 100}}, kUInt8), tensor({{3}, {7}}, kUInt8)).item<int64_t>(),
            20);                                                                   // 1300 mod 256
  EXPECT_EQ(mm(tensor({{two62, 3}}), tensor({{5}, {two62}})).item<int64_t>(), 0);  // 2^64 * 2
  Tensor c = addmm(tensor({{2147483647}}, kInt32), tensor({{int64_t{1} << 30}}, kInt32),
                   tensor({{3}}, kInt32), /*beta=*/3, /*alpha=*/5);
  EXPECT_EQ(c.item<int64_t>(), 1073741821);  // (3 * (2^31 - 1) + 15 * 2^30) mod 2^32
  for (auto [dt, lo, hi] : std::vector<std::tuple<DType, int64_t, int64_t>>{
           {kUInt8, 0, 256}, {kInt32, -(two20 << 11), two20 << 11}, {kInt64, -two62, two62}}) {
    Tensor a = randint(lo, hi, {37, 70}, dt), b = randint(lo, hi, {70, 45}, dt);
    Tensor expected = ref_mm_wrapping(a, b);
    EXPECT_TRUE(mm(a, b).equal(expected)) << dt;
    EXPECT_TRUE(mm(a.t().contiguous().t(), noncontiguous(b)).equal(expected)) << dt << " strided";
  }
}

TEST(Linalg, ErrorsNameShapes) {
  EXPECT_THROW_WITH(mm(ones({2, 3}), ones({4, 2})),
                    "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)");
  EXPECT_THROW_WITH(matmul(ones({2, 3}), ones({2, 3})), "cannot be multiplied");
  EXPECT_THROW_WITH(mm(ones({2, 2}), ones({2, 2}, kFloat64)), "same dtype");
  EXPECT_THROW_WITH(bmm(ones({2, 2}), ones({2, 2})), "expected 3-D");
  EXPECT_THROW_WITH(matmul(scalar_tensor(1.0), ones({2})), "at least 1 dimension");
}

TEST(Linalg, AnEmptyInnerDimensionGivesZeros) {
  // BLAS's beta = 0 means "do not read out": an uninitialised output must not leak through.
  { Tensor garbage = full({2, 3}, NAN); }
  EXPECT_EQ(values(mm(ones({2, 0}), ones({0, 3}))), std::vector<double>(6, 0.0));
  EXPECT_EQ(values(bmm(ones({2, 2, 0}), ones({2, 0, 2}))), std::vector<double>(8, 0.0));
  EXPECT_EQ(values(addmm(ones({3}), ones({2, 0}), ones({0, 3}))), std::vector<double>(6, 1.0));
  EXPECT_EQ(values(nn::Linear(0, 2).forward(ones({3, 0}))).size(), 6u);
}

}  // namespace
}  // namespace ember

namespace ember {
namespace {

using namespace ember::testing;

// bfloat16 products take oneDNN's bfloat16 kernels where the CPU has them (bf16_kernels.h) and go
// through float32 otherwise: both round the float32-accumulated product once, so both are within
// one bfloat16 rounding of the exact product of the (bfloat16) operands.
TEST(Linalg, BFloat16ProductsAgreeWithAndWithoutTheBFloat16Kernels) {
  std::cout << "bfloat16 kernels on this CPU: " << (cpu::have_bf16_kernels() ? "yes" : "no") << "\n";
  bool had = cpu::have_bf16_kernels();
  for (auto [n, m, p] : std::vector<std::array<int64_t, 3>>{
           {1, 1, 1}, {3, 4, 5}, {64, 33, 17}, {130, 257, 129}, {2, 0, 3}}) {
    Tensor a = uniform({n, m}, kBFloat16), b = uniform({m, p}, kBFloat16);
    Tensor bias = uniform({p}, kBFloat16);
    Tensor exact = make(ref_mm(values(a), values(b), n, m, p), {n, p});
    Tensor exact_addmm = exact * 0.5 + bias.to(kFloat64) * 2.0;
    for (bool kernels : {true, false}) {
      cpu::set_bf16_kernels_enabled(kernels);
      // Plain, transposed operands (the weight of linear), batched, and alpha/beta (addmm).
      Tensor at = a.t().contiguous().t(), bt = b.t().contiguous().t();
      for (const Tensor& r : {mm(a, b), mm(at, bt), bmm(a.unsqueeze(0), b.unsqueeze(0)).squeeze(0),
                              mm(noncontiguous(a), b)}) {
        ASSERT_EQ(r.dtype(), kBFloat16);
        EXPECT_TRUE(all_close(r, exact, 1.0 / 128, 1e-2)) << n << "x" << m << "x" << p;
      }
      Tensor r = addmm(bias, a, b, /*beta=*/2.0, /*alpha=*/0.5);
      EXPECT_TRUE(all_close(r, exact_addmm, 1.0 / 128, 2e-2)) << "addmm " << kernels;
    }
  }
  cpu::set_bf16_kernels_enabled(true);
  EXPECT_EQ(cpu::have_bf16_kernels(), had);
}

}  // namespace
}  // namespace ember
