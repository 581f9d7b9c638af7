// Complex tensors, torch.fft and complex linear algebra from C++: promotion, the element type's
// arithmetic, views as real, transforms against the defining sums, decompositions against the
// products they factor (the Python tests compare with PyTorch itself).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "tests/util/test_util.h"

namespace ember {
namespace {

using C = Complex<double>;

C at(const Tensor& t, int64_t i) { return static_cast<const C*>(t.contiguous().data_ptr())[i]; }

TEST(Complex, PromotionFollowsPyTorch) {
  EXPECT_EQ(promote_types(kComplex64, kFloat64), kComplex128);
  EXPECT_EQ(promote_types(kComplex64, kInt64), kComplex64);
  EXPECT_EQ(promote_types(kFloat16, kComplex64), kComplex64);
  EXPECT_FALSE(can_cast(kComplex64, kFloat64));
  EXPECT_TRUE(can_cast(kFloat64, kComplex64));
  Tensor x = ones({3}, TensorOptions(kFloat64));
  EXPECT_EQ(add(x, Scalar(C(0, 1))).dtype(), kComplex128);  // float64 + 1j
  EXPECT_EQ(mul(ones({3}), Scalar(C(0, 1))).dtype(), kComplex64);
}

TEST(Complex, ArithmeticMatchesStdComplex) {
  const C a(1.5, -2), b(-0.25, 3);
  std::complex<double> sa(1.5, -2), sb(-0.25, 3);
  EXPECT_EQ((a * b).std(), sa * sb);
  EXPECT_NEAR(std::abs((a / b).std() - sa / sb), 0, 1e-15);
  EXPECT_TRUE(std::isinf((C(1, 1) / C(0, 0)).re) || std::isnan((C(1, 1) / C(0, 0)).re));
  Tensor t = view_as_complex(arange(0, 4, 1, TensorOptions(kFloat64)).reshape({2, 2}));
  Tensor p = mul(t, t);  // (0 + 1i)^2 = -1, (2 + 3i)^2 = -5 + 12i
  EXPECT_EQ(at(p, 0), C(-1, 0));
  EXPECT_EQ(at(p, 1), C(-5, 12));
  EXPECT_EQ(sum(t).item().imag(), 4.0);
  EXPECT_EQ(abs(t).dtype(), kFloat64);
  EXPECT_DOUBLE_EQ(abs(t).tolist<double>()[1], std::sqrt(13.0));
}

TEST(Complex, ViewsShareMemory) {
  Tensor z = zeros({2, 3}, TensorOptions(kComplex64));
  Tensor r = view_as_real(z);
  EXPECT_EQ(r.sizes(), (Shape{2, 3, 2}));
  EXPECT_EQ(r.data_ptr(), z.data_ptr());
  imag(z).fill_(2.0);
  EXPECT_EQ(at(z.to(kComplex128), 4), C(0, 2));
  EXPECT_THROW(imag(ones({2})), Error);
  EXPECT_THROW(view_as_complex(ones({3, 3})), Error);
}

TEST(Fft, MatchesTheDefiningSum) {
  const int64_t n = 7;
  Tensor x = sin(mul(arange(0, n, 1, TensorOptions(kFloat64)), Scalar(0.3)));
  Tensor X = fft::fft(x);
  std::vector<double> xs = x.tolist<double>();
  for (int64_t k = 0; k < n; ++k) {
    std::complex<double> s = 0;
    for (int64_t j = 0; j < n; ++j)
      s += xs[static_cast<size_t>(j)] * std::polar(1.0, -2 * M_PI * double(j * k) / double(n));
    EXPECT_NEAR(std::abs(at(X, k).std() - s), 0, 1e-12) << k;
  }
  Tensor back = fft::irfft(fft::rfft(x), n);
  EXPECT_TRUE(allclose(back, x, 1e-12, 1e-12));
  EXPECT_EQ(fft::rfft(x).size(0), n / 2 + 1);
  EXPECT_THROW(fft::fft(x, 0), Error);
}

Tensor adjoint(const Tensor& t) { return conj(t.transpose(-2, -1)); }

TEST(ComplexLinalg, DecompositionsRebuildTheirMatrix) {
  manual_seed(3);
  Tensor a = randn({2, 4, 4}, TensorOptions(kComplex128));
  Tensor h = add(matmul(a, adjoint(a)), eye(4, 4, TensorOptions(kComplex128)));
  Tensor l = linalg::cholesky(h);
  EXPECT_TRUE(allclose(matmul(l, adjoint(l)), h, 1e-10, 1e-10));
  auto [w, v] = linalg::eigh(h);
  EXPECT_EQ(w.dtype(), kFloat64);  // a Hermitian matrix's eigenvalues are real
  EXPECT_TRUE(allclose(matmul(v * w.unsqueeze(-2), adjoint(v)), h, 1e-10, 1e-10));
  auto [u, s, vh] = linalg::svd(a, /*full_matrices=*/false);
  EXPECT_EQ(s.dtype(), kFloat64);
  EXPECT_TRUE(allclose(matmul(u * s.unsqueeze(-2), vh), a, 1e-10, 1e-10));
  auto [q, r] = linalg::qr(a);
  EXPECT_TRUE(allclose(matmul(q, r), a, 1e-10, 1e-10));
  auto [ew, ev] = linalg::eig(a);
  EXPECT_TRUE(allclose(matmul(a, ev), ev * ew.unsqueeze(-2), 1e-10, 1e-10));
  // det = the product of the eigenvalues; slogdet's sign has modulus 1.
  EXPECT_TRUE(allclose(linalg::det(a), prod(ew, -1), 1e-10, 1e-10));
  auto [sign, logabs] = linalg::slogdet(a);
  EXPECT_TRUE(allclose(abs(sign), ones({2}, TensorOptions(kFloat64)), 1e-12, 1e-12));
  EXPECT_EQ(logabs.dtype(), kFloat64);
}

}  // namespace
}  // namespace ember
