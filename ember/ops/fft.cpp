// torch.fft on three primitives with their backward formulas (PyTorch's _fft_c2c, _fft_r2c and
// _fft_c2r); every public transform is a resize of the input, a dtype promotion, maybe a
// conjugate, and one primitive.
#include "ember/ops/fft.h"

#include <algorithm>
#include <cmath>

#include "ember/backend/kernels.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/complex.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/pad.h"
#include "ember/ops/shape.h"

namespace ember::fft {
namespace {

enum class Mode { Backward, Forward, Ortho };

Mode parse_norm(const Norm& norm) {
  if (!norm || *norm == "backward") return Mode::Backward;
  if (*norm == "forward") return Mode::Forward;
  if (*norm == "ortho") return Mode::Ortho;
  EMBER_FAIL("Invalid normalization mode: \"", *norm, "\"");
}

// hfft and ihfft are irfft and rfft of the conjugate with the scaling of the other direction.
Norm swapped(const Norm& norm) {
  switch (parse_norm(norm)) {
    case Mode::Backward:
      return "forward";
    case Mode::Forward:
      return "backward";
    case Mode::Ortho:
      return "ortho";
  }
  return norm;
}

// The factor a transform of n points in direction `forward` is multiplied by.
double scale(const Norm& norm, int64_t n, bool forward) {
  switch (parse_norm(norm)) {
    case Mode::Backward:
      return forward ? 1.0 : 1.0 / static_cast<double>(n);
    case Mode::Forward:
      return forward ? 1.0 / static_cast<double>(n) : 1.0;
    case Mode::Ortho:
      return 1.0 / std::sqrt(static_cast<double>(n));
  }
  return 1.0;
}

void check_cpu(const Tensor& x, const char* op) {
  check_defined(op, x);
  EMBER_CHECK(x.is_cpu(), "[", op, "] torch.fft runs on CPU tensors in ember so far (cuFFT is to "
                          "come), got one on ", x.device());
}

// Real inputs in floating point (integers as the default float), complex ones as they are.
Tensor as_real_floating(const Tensor& x, const char* op) {
  EMBER_CHECK(!x.is_complex(), "[", op, "] ", op, " expects a real input tensor, but got ",
              x.dtype());
  return x.is_floating_point() ? x : x.to(kDefaultFloat);
}
Tensor as_complex(const Tensor& x) {
  if (x.is_complex()) return x;
  Tensor f = x.is_floating_point() ? x : x.to(kDefaultFloat);
  return f.to(to_complex_dtype(f.dtype()));
}

// PyTorch's canonicalize_fft_shape_and_dim_args: the dims (wrapped, unique) and their sizes.
struct Signal {
  Shape dims, sizes;
};
Signal signal(const Tensor& x, const Sizes& s, const Sizes& dim, const char* op) {
  Signal sig;
  if (dim) {
    for (int64_t d : *dim) sig.dims.push_back(wrap_dim(d, x.dim(), op));
    Shape sorted = sig.dims;
    std::sort(sorted.begin(), sorted.end());
    EMBER_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "[", op,
                "] FFT dims must be unique");
  }
  if (s) {
    if (dim) {
      EMBER_CHECK(s->size() == dim->size(), "[", op,
                  "] When given, dim and shape arguments must have the same length");
    } else {
      EMBER_CHECK(static_cast<int64_t>(s->size()) <= x.dim(), "[", op, "] Got shape with ",
                  s->size(), " values but input tensor only has ", x.dim(), " dimensions.");
      for (int64_t d = x.dim() - static_cast<int64_t>(s->size()); d < x.dim(); ++d)
        sig.dims.push_back(d);
    }
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t n = (*s)[i] == -1 ? x.size(sig.dims[i]) : (*s)[i];
      EMBER_CHECK(n > 0, "[", op, "] Invalid number of data points (", n, ") specified");
      sig.sizes.push_back(n);
    }
  } else {
    if (!dim)
      for (int64_t d = 0; d < x.dim(); ++d) sig.dims.push_back(d);
    for (int64_t d : sig.dims) {
      EMBER_CHECK(x.size(d) > 0, "[", op, "] Invalid number of data points (", x.size(d),
                  ") specified");
      sig.sizes.push_back(x.size(d));
    }
  }
  return sig;
}

// x zero-padded or trimmed at the end of each dim to its size.
Tensor resize(const Tensor& x, const Shape& dims, const Shape& sizes) {
  Shape pads(static_cast<size_t>(2 * x.dim()), 0);
  bool any = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t grow = sizes[i] - x.size(dims[i]);
    pads[static_cast<size_t>(2 * (x.dim() - 1 - dims[i]) + 1)] = grow;
    any = any || grow != 0;
  }
  return any ? pad(x, pads) : x;
}

int64_t product(const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

Shape sorted(Shape dims) {
  std::sort(dims.begin(), dims.end());
  return dims;
}

// --- the primitives ----------------------------------------------------------------------------

Tensor fft_c2c(const Tensor& x, const Shape& dims, bool forward, double scale) {
  EMBER_OP(fft_c2c, x, dims, forward, scale);
  Tensor out = empty(x.sizes(), x.options());
  if (out.numel() > 0) fft_c2c_cpu(x, out, sorted(dims), forward, scale);
  if (any_requires_grad({&x}))
    record("FftC2CBackward0", {&out}, {&x}, [dims, forward, scale](const Tensor& g) -> TensorList {
      return {fft_c2c(g, dims, !forward, scale)};
    });
  return out;
}

Tensor fft_r2c(const Tensor& x, const Shape& dims, double scale) {
  EMBER_OP(fft_r2c, x, dims, scale);
  Shape out_sizes = x.sizes();
  int64_t last = dims.back(), n = x.size(last);
  out_sizes[static_cast<size_t>(last)] = n / 2 + 1;
  Tensor out = empty(out_sizes, x.options().with_dtype(to_complex_dtype(x.dtype())));
  if (out.numel() > 0) fft_r2c_cpu(x, out, dims, scale);
  if (any_requires_grad({&x}))
    record("FftR2CBackward0", {&out}, {&x}, [dims, scale, n, last](const Tensor& g) -> TensorList {
      // The missing half of the spectrum got no gradient: zeros, then the inverse transform.
      return {real(fft_c2c(resize(g, {last}, {n}), dims, false, scale))};
    });
  return out;
}

Tensor fft_c2r(const Tensor& x, const Shape& dims, int64_t n, double scale) {
  EMBER_OP(fft_c2r, x, dims, n, scale);
  Shape out_sizes = x.sizes();
  int64_t last = dims.back();
  out_sizes[static_cast<size_t>(last)] = n;
  Tensor out = empty(out_sizes, x.options().with_dtype(to_real_dtype(x.dtype())));
  if (out.numel() > 0) fft_c2r_cpu(x, out, dims, scale);
  if (any_requires_grad({&x}))
    record("FftC2RBackward0", {&out}, {&x}, [dims, scale, last](const Tensor& g) -> TensorList {
      // Every output but the first (and, for even n, the last) stands for itself and its
      // conjugate partner: their gradients count twice.
      Tensor gi = fft_r2c(g, dims, scale);
      int64_t half = gi.size(last), twice = g.size(last) - half;
      if (twice <= 0) return {gi};
      Tensor w = full({half}, 1.0, TensorOptions(to_real_dtype(gi.dtype())));
      w.narrow(0, 1, twice).fill_(2.0);
      Shape shape(static_cast<size_t>(gi.dim()), 1);
      shape[static_cast<size_t>(last)] = half;
      return {gi * w.view(shape)};
    });
  return out;
}

Sizes one(std::optional<int64_t> n) { return n ? Sizes(Shape{*n}) : std::nullopt; }

}  // namespace

// --- n-dimensional -----------------------------------------------------------------------------

Tensor fftn(const Tensor& x, const Sizes& s, const Sizes& dim, const Norm& norm) {
  check_cpu(x, "fftn");
  Signal sig = signal(x, s, dim, "fftn");
  Tensor in = as_complex(resize(x, sig.dims, sig.sizes));
  return fft_c2c(in, sig.dims, true, scale(norm, product(sig.sizes), true));
}

Tensor ifftn(const Tensor& x, const Sizes& s, const Sizes& dim, const Norm& norm) {
  check_cpu(x, "ifftn");
  Signal sig = signal(x, s, dim, "ifftn");
  Tensor in = as_complex(resize(x, sig.dims, sig.sizes));
  return fft_c2c(in, sig.dims, false, scale(norm, product(sig.sizes), false));
}

Tensor rfftn(const Tensor& x, const Sizes& s, const Sizes& dim, const Norm& norm) {
  check_cpu(x, "rfftn");
  Tensor xf = as_real_floating(x, "rfftn");
  Signal sig = signal(xf, s, dim, "rfftn");
  EMBER_CHECK(!sig.dims.empty(), "[rfftn] rfftn must transform at least one axis");
  return fft_r2c(resize(xf, sig.dims, sig.sizes), sig.dims, scale(norm, product(sig.sizes), true));
}

Tensor irfftn(const Tensor& x, const Sizes& s, const Sizes& dim, const Norm& norm) {
  check_cpu(x, "irfftn");
  Signal sig = signal(x, s, dim, "irfftn");
  EMBER_CHECK(!sig.dims.empty(), "[irfftn] irfftn must transform at least one axis");
  // The last dim's output size: given, or from the n / 2 + 1 inputs of an even signal.
  int64_t n = s && s->back() != -1 ? sig.sizes.back() : 2 * (x.size(sig.dims.back()) - 1);
  EMBER_CHECK(n >= 1, "[irfftn] Invalid number of data points (", n, ") specified");
  Shape in_sizes = sig.sizes;
  in_sizes.back() = n / 2 + 1;
  sig.sizes.back() = n;
  Tensor in = as_complex(resize(x, sig.dims, in_sizes));
  return fft_c2r(in, sig.dims, n, scale(norm, product(sig.sizes), false));
}

Tensor hfftn(const Tensor& x, const Sizes& s, const Sizes& dim, const Norm& norm) {
  return irfftn(conj(x), s, dim, swapped(norm));
}

Tensor ihfftn(const Tensor& x, const Sizes& s, const Sizes& dim, const Norm& norm) {
  return conj(rfftn(x, s, dim, swapped(norm)));
}

// --- one dimension ------------------------------------------------------------------------------

Tensor fft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const Norm& norm) {
  return fftn(x, one(n), Shape{dim}, norm);
}
Tensor ifft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const Norm& norm) {
  return ifftn(x, one(n), Shape{dim}, norm);
}
Tensor rfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const Norm& norm) {
  return rfftn(x, one(n), Shape{dim}, norm);
}
Tensor irfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const Norm& norm) {
  return irfftn(x, one(n), Shape{dim}, norm);
}
Tensor hfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const Norm& norm) {
  return hfftn(x, one(n), Shape{dim}, norm);
}
Tensor ihfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const Norm& norm) {
  return ihfftn(x, one(n), Shape{dim}, norm);
}

// --- frequencies and shifts ----------------------------------------------------------------------

Tensor fftfreq(int64_t n, double d, const TensorOptions& options) {
  EMBER_CHECK(n >= 0, "[fftfreq] n must be non-negative, got ", n);
  TensorOptions o = options;
  if (!o.has_dtype) o.with_dtype(kDefaultFloat);
  Tensor r = arange(0, n, 1, o);
  if (n > (n + 1) / 2) r.narrow(0, (n + 1) / 2, n - (n + 1) / 2).copy_(arange(-(n / 2), 0, 1, o));
  // A product with the reciprocal, as PyTorch's (not a division): the same roundings.
  return r.mul_(1.0 / (static_cast<double>(n) * d));
}

Tensor rfftfreq(int64_t n, double d, const TensorOptions& options) {
  EMBER_CHECK(n >= 0, "[rfftfreq] n must be non-negative, got ", n);
  TensorOptions o = options;
  if (!o.has_dtype) o.with_dtype(kDefaultFloat);
  return arange(0, n / 2 + 1, 1, o).mul_(1.0 / (static_cast<double>(n) * d));
}

namespace {
Tensor shift(const Tensor& x, const Sizes& dim, bool inverse) {
  Shape dims, shifts;
  if (dim) {
    for (int64_t d : *dim) dims.push_back(wrap_dim(d, x.dim(), "fftshift"));
  } else {
    for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  }
  for (int64_t d : dims) shifts.push_back(inverse ? (x.size(d) + 1) / 2 : x.size(d) / 2);
  return dims.empty() ? x : roll(x, shifts, dims);
}
}  // namespace

Tensor fftshift(const Tensor& x, const Sizes& dim) { return shift(x, dim, false); }
Tensor ifftshift(const Tensor& x, const Sizes& dim) { return shift(x, dim, true); }

}  // namespace ember::fft
