// Complex tensors: viewing them as pairs of reals and back, their parts, conjugates, magnitudes
// and angles, and building them from parts. The element type is core/complex.h; the elementwise
// math of complex64 and complex128 runs through the shared op tables.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// A complex tensor as a real one with a last dim of 2 (real, imaginary), sharing its memory.
Tensor view_as_real(const Tensor& x);
/// The inverse: a real float32/float64 tensor whose last dim is 2 (stride 1) as complex.
Tensor view_as_complex(const Tensor& x);
/// The real part (a view) of a complex tensor; a real tensor itself.
Tensor real(const Tensor& x);
/// The imaginary part (a view) of a complex tensor; an error for a real one, as PyTorch.
Tensor imag(const Tensor& x);
/// The complex conjugate (a new tensor; a real tensor is returned as is).
Tensor conj(const Tensor& x);
/// The same values in a different dtype of the same memory (PyTorch's Tensor.view(dtype)): the
/// last dim scales by the ratio of the element sizes.
Tensor view_dtype(const Tensor& x, DType dtype);
/// real + i imag from two real tensors of one floating dtype (broadcast).
Tensor complex(const Tensor& real, const Tensor& imag);
/// abs * (cos(angle) + i sin(angle)).
Tensor polar(const Tensor& abs, const Tensor& angle);
/// The argument: atan2(imag, real) for complex; pi for negative reals, else 0 (NaN stays).
Tensor angle(const Tensor& x);
/// x / |x| for complex (0 at 0), sign(x) for reals.
Tensor sgn(const Tensor& x);
/// sqrt(a^2 + b^2) without overflow or underflow in the squares.
Tensor hypot(const Tensor& a, const Tensor& b);

namespace detail {
/// |x| of a complex tensor, as a real one (no autograd: abs records its own backward).
Tensor complex_abs(const Tensor& x);
}  // namespace detail

}  // namespace ember
