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
#include "ember/ops/indexing.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/pad.h"
#include "ember/ops/reduce.h"
#include "ember/ops/shape.h"
#include "ember/ops/views.h"

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
  EMBER_OP(fftn, x, s, dim, norm);
  check_cpu(x, "fftn");
  Signal sig = signal(x, s, dim, "fftn");
  Tensor in = as_complex(resize(x, sig.dims, sig.sizes));
  return fft_c2c(in, sig.dims, true, scale(norm, product(sig.sizes), true));
}

Tensor ifftn(const Tensor& x, const Sizes& s, const Sizes& dim, const Norm& norm) {
  EMBER_OP(ifftn, x, s, dim, norm);
  check_cpu(x, "ifftn");
  Signal sig = signal(x, s, dim, "ifftn");
  Tensor in = as_complex(resize(x, sig.dims, sig.sizes));
  return fft_c2c(in, sig.dims, false, scale(norm, product(sig.sizes), false));
}

Tensor rfftn(const Tensor& x, const Sizes& s, const Sizes& dim, const Norm& norm) {
  EMBER_OP(rfftn, x, s, dim, norm);
  check_cpu(x, "rfftn");
  Tensor xf = as_real_floating(x, "rfftn");
  Signal sig = signal(xf, s, dim, "rfftn");
  EMBER_CHECK(!sig.dims.empty(), "[rfftn] rfftn must transform at least one axis");
  return fft_r2c(resize(xf, sig.dims, sig.sizes), sig.dims, scale(norm, product(sig.sizes), true));
}

Tensor irfftn(const Tensor& x, const Sizes& s, const Sizes& dim, const Norm& norm) {
  EMBER_OP(irfftn, x, s, dim, norm);
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
  EMBER_OP(fftfreq, n, d, options);
  EMBER_CHECK(n >= 0, "[fftfreq] n must be non-negative, got ", n);
  TensorOptions o = options;
  if (!o.has_dtype) o.with_dtype(kDefaultFloat);
  Tensor r = arange(0, n, 1, o);
  if (n > (n + 1) / 2) r.narrow(0, (n + 1) / 2, n - (n + 1) / 2).copy_(arange(-(n / 2), 0, 1, o));
  // A product with the reciprocal, as PyTorch's (not a division): the same roundings.
  return r.mul_(1.0 / (static_cast<double>(n) * d));
}

Tensor rfftfreq(int64_t n, double d, const TensorOptions& options) {
  EMBER_OP(rfftfreq, n, d, options);
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

Tensor fftshift(const Tensor& x, const Sizes& dim) {
  EMBER_OP(fftshift, x, dim);
  return shift(x, dim, false);
}
Tensor ifftshift(const Tensor& x, const Sizes& dim) {
  EMBER_OP(ifftshift, x, dim);
  return shift(x, dim, true);
}

}  // namespace ember::fft

namespace ember {
namespace {

// The window of a short-time transform: win_length values zero-padded to n_fft in the middle
// (ones when none is given).
Tensor frame_window(const Tensor& window, int64_t n_fft, int64_t win, const TensorOptions& o,
                    const char* op) {
  EMBER_CHECK(win > 0 && win <= n_fft, "[", op, "] expected 0 < win_length <= n_fft, but got "
              "win_length=", win);
  if (window.defined())
    EMBER_CHECK(window.dim() == 1 && window.size(0) == win, "[", op, "] expected a 1D window "
                "tensor of size equal to win_length=", win, ", but got window with size ",
                window.sizes());
  Tensor w = window.defined() ? window : ones({win}, o);
  int64_t left = (n_fft - win) / 2;
  return win < n_fft ? pad(w, {left, n_fft - win - left}) : w;
}

}  // namespace

Tensor stft(const Tensor& x, int64_t n_fft, std::optional<int64_t> hop_length,
            std::optional<int64_t> win_length, const Tensor& window, bool center,
            const std::string& pad_mode, bool normalized, std::optional<bool> onesided,
            std::optional<bool> return_complex) {
  EMBER_OP(stft, x, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
           onesided, return_complex);
  const char* op = "stft";
  fft::check_cpu(x, op);
  bool complex_in = x.is_complex() || (window.defined() && window.is_complex());
  EMBER_CHECK(x.dim() == 1 || x.dim() == 2, "[stft] expected a 1D or 2D tensor, got ", x.dim(),
              "D");
  int64_t hop = hop_length.value_or(n_fft / 4), win = win_length.value_or(n_fft);
  Tensor in = x.dim() == 1 ? x.unsqueeze(0) : x;
  if (center) {
    int64_t p = n_fft / 2;
    in = pad(in.unsqueeze(1), {p, p}, pad_mode).squeeze(1);
  }
  int64_t len = in.size(1);
  EMBER_CHECK(n_fft > 0 && n_fft <= len, "[stft] expected 0 < n_fft < ", len,
              ", but got n_fft=", n_fft);
  EMBER_CHECK(hop > 0, "[stft] expected hop_length > 0, but got hop_length=", hop);
  Tensor w = frame_window(window, n_fft, win, in.options(), op);
  bool one = onesided.value_or(!complex_in);
  EMBER_CHECK(!one || !complex_in,
              "[stft] Cannot have onesided output if window or input is complex");
  // The frames, a view: (B, frames, n_fft), one every hop samples.
  Tensor c = in.contiguous();
  int64_t frames = 1 + (len - n_fft) / hop;
  Tensor f = as_strided(c, {c.size(0), frames, n_fft}, {c.stride(0), hop, 1}, c.storage_offset());
  f = f * w;
  fft::Norm norm = normalized ? fft::Norm("ortho") : std::nullopt;
  Tensor out = (one ? fft::rfft(f, {}, -1, norm) : fft::fft(f, {}, -1, norm)).transpose(1, 2);
  if (x.dim() == 1) out = out.squeeze(0);
  // Unspecified for a real input, the old real format (PyTorch 1.13 warns; 2.x requires it).
  return return_complex.value_or(complex_in) ? out : view_as_real(out);
}

Tensor istft(const Tensor& x, int64_t n_fft, std::optional<int64_t> hop_length,
             std::optional<int64_t> win_length, const Tensor& window, bool center,
             bool normalized, std::optional<bool> onesided, std::optional<int64_t> length,
             bool return_complex) {
  EMBER_OP(istft, x, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
           return_complex);
  const char* op = "istft";
  fft::check_cpu(x, op);
  // A real input is the old format, the complex values as a last dim of 2 (PyTorch 1.13).
  Tensor z = x.is_complex() ? x : view_as_complex(x.stride(-1) == 1 ? x : x.contiguous());
  EMBER_CHECK(z.dim() == 2 || z.dim() == 3, "[istft] Expected a tensor of 2 or 3 dimensions, "
              "but got ", z.dim());
  Tensor in = z.dim() == 2 ? z.unsqueeze(0) : z;  // (B, freq, frames)
  int64_t hop = hop_length.value_or(n_fft / 4), win = win_length.value_or(n_fft);
  EMBER_CHECK(hop > 0, "[istft] expected hop_length > 0, but got hop_length=", hop);
  Tensor w = frame_window(window, n_fft, win, in.options().with_dtype(to_real_dtype(z.dtype())),
                          op);
  bool one = onesided.value_or(in.size(1) != n_fft);
  EMBER_CHECK(in.size(1) == (one ? n_fft / 2 + 1 : n_fft), "[istft] expected the frequency "
              "dimension (3rd to the last) of the input tensor to match ",
              one ? "n_fft / 2 + 1 when onesided=True" : "n_fft when onesided=False",
              ", but got ", in.size(1));
  fft::Norm norm = normalized ? fft::Norm("ortho") : std::nullopt;
  Tensor spec = in.transpose(1, 2);  // (B, frames, freq)
  Tensor frames;
  if (return_complex) {
    EMBER_CHECK(!one, "[istft] cannot have onesided output if window or input is complex");
    frames = fft::ifft(spec, n_fft, -1, norm);
  } else {
    EMBER_CHECK(!w.is_complex(), "[istft] Complex windows are incompatible with "
                                 "return_complex=False");
    // A two-sided spectrum of a real signal: its first half holds it all.
    if (!one) spec = spec.narrow(-1, 0, n_fft / 2 + 1);
    frames = fft::irfft(spec, n_fft, -1, norm);
  }
  frames = frames * w;
  // Overlap-add: frame t lands on samples [t hop, t hop + n_fft).
  int64_t batch = frames.size(0), count = frames.size(1), total = n_fft + hop * (count - 1);
  TensorOptions ints(kInt64);
  Tensor place = (arange(0, count, 1, ints) * hop).unsqueeze(1) + arange(0, n_fft, 1, ints);
  place = place.reshape({1, -1});
  Tensor y = scatter_add(zeros({batch, total}, frames.options()), 1,
                         place.expand({batch, count * n_fft}), frames.reshape({batch, -1}));
  Tensor squares = (w * w).expand({count, n_fft}).reshape({1, -1});
  Tensor envelope = scatter_add(zeros({1, total}, squares.options()), 1, place, squares);
  int64_t start = center ? n_fft / 2 : 0;
  int64_t end = length ? start + *length : (center ? total - n_fft / 2 : total);
  int64_t kept = std::min(end, total) - start;
  y = y.narrow(1, start, kept);
  envelope = envelope.narrow(1, start, kept);
  double least = amin(abs(envelope)).item<double>();
  EMBER_CHECK(least > 1e-11, "[istft] window overlap add min: ", least);
  y = y / envelope;
  if (end > total) y = pad(y, {0, end - total});
  return z.dim() == 2 ? y.squeeze(0) : y;
}

}  // namespace ember
