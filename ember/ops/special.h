// torch.special and the special functions at the top level (lgamma, digamma, polygamma, erfinv,
// i0, igamma, xlogy's relative xlog1py, nextafter, frexp): elementwise, with PyTorch's backward
// formulas where PyTorch has them. The math is backend/functors/special_math.h.
#pragma once

#include <cstdint>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

Tensor lgamma(const Tensor& x);
Tensor& lgamma_(Tensor& x);  // in place: x.lgamma_()
Tensor digamma(const Tensor& x);
Tensor& digamma_(Tensor& x);  // in place: x.digamma_()
/// psi^(n)(x); n >= 0.
Tensor polygamma(int64_t n, const Tensor& x);
Tensor erfinv(const Tensor& x);
Tensor& erfinv_(Tensor& x);  // in place: x.erfinv_()
Tensor i0(const Tensor& x);
Tensor& i0_(Tensor& x);  // in place: x.i0_()
/// The regularized lower (igamma) and upper (igammac) incomplete gamma functions of (a, x).
Tensor igamma(const Tensor& a, const Tensor& x);
Tensor igammac(const Tensor& a, const Tensor& x);
/// The next representable value after a in the direction of b.
Tensor nextafter(const Tensor& a, const Tensor& b);
/// x = mantissa * 2^exponent with |mantissa| in [0.5, 1): (mantissa, exponent as int32).
std::tuple<Tensor, Tensor> frexp(const Tensor& x);

namespace special {

Tensor i0e(const Tensor& x);
Tensor i1(const Tensor& x);
Tensor i1e(const Tensor& x);
/// The standard normal CDF, its logarithm and its inverse.
Tensor ndtr(const Tensor& x);
Tensor log_ndtr(const Tensor& x);
Tensor ndtri(const Tensor& x);
/// exp(x^2) erfc(x).
Tensor erfcx(const Tensor& x);
/// -x log x.
Tensor entr(const Tensor& x);
/// x log1p(y), 0 where x is 0.
Tensor xlog1py(const Tensor& x, const Tensor& y);
/// The Hurwitz zeta function sum_k (k + q)^-x.
Tensor zeta(const Tensor& x, const Tensor& q);
Tensor bessel_j0(const Tensor& x);
Tensor bessel_j1(const Tensor& x);
Tensor bessel_y0(const Tensor& x);
Tensor bessel_y1(const Tensor& x);
Tensor modified_bessel_i0(const Tensor& x);
Tensor modified_bessel_i1(const Tensor& x);
Tensor modified_bessel_k0(const Tensor& x);
Tensor modified_bessel_k1(const Tensor& x);
/// e^x K0(x), e^x K1(x).
Tensor scaled_modified_bessel_k0(const Tensor& x);
Tensor scaled_modified_bessel_k1(const Tensor& x);
Tensor spherical_bessel_j0(const Tensor& x);
Tensor airy_ai(const Tensor& x);
/// The orthogonal polynomials of degree n at x (n a tensor of whole numbers, broadcast).
Tensor chebyshev_polynomial_t(const Tensor& x, const Tensor& n);
Tensor chebyshev_polynomial_u(const Tensor& x, const Tensor& n);
Tensor chebyshev_polynomial_v(const Tensor& x, const Tensor& n);
Tensor chebyshev_polynomial_w(const Tensor& x, const Tensor& n);
Tensor shifted_chebyshev_polynomial_t(const Tensor& x, const Tensor& n);
Tensor shifted_chebyshev_polynomial_u(const Tensor& x, const Tensor& n);
Tensor shifted_chebyshev_polynomial_v(const Tensor& x, const Tensor& n);
Tensor shifted_chebyshev_polynomial_w(const Tensor& x, const Tensor& n);
Tensor hermite_polynomial_h(const Tensor& x, const Tensor& n);
Tensor hermite_polynomial_he(const Tensor& x, const Tensor& n);
Tensor laguerre_polynomial_l(const Tensor& x, const Tensor& n);
Tensor legendre_polynomial_p(const Tensor& x, const Tensor& n);

}  // namespace special
}  // namespace ember
