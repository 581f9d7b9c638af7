// Discrete Fourier transforms on the CPU through pocketfft (third_party/pocketfft, BSD; the
// library PyTorch's CPU build uses), so that ember's spectra round as PyTorch's do.
#include "ember/backend/kernels.h"
#include "ember/backend/wide_floating.h"

#define POCKETFFT_NO_MULTITHREADING  // one thread per call: ember's pool owns the cores
#define POCKETFFT_CACHE_SIZE 16      // plans (twiddle tables) kept for the last 16 lengths, as PyTorch
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
// pocketfft transforms VLEN rows at once in SIMD vectors sized by the target: under AVX-512 that
// is 16 float rows, whose working buffers no longer fit the caches (fft of 64 x 4096 complex64
// took 2.5x as long as with AVX's 8). The header is read as if AVX-512 were absent.
#pragma push_macro("__AVX512F__")
#undef __AVX512F__
#include "third_party/pocketfft/pocketfft_hdronly.h"
#pragma pop_macro("__AVX512F__")
#pragma GCC diagnostic pop

namespace ember {
namespace {

// A tensor's geometry in pocketfft's terms: sizes, byte strides, and the transformed axes.
struct Geometry {
  pocketfft::shape_t shape, axes;
  pocketfft::stride_t strides;
};

Geometry geometry(const Tensor& t, const Shape& dims) {
  Geometry g;
  for (int64_t d = 0; d < t.dim(); ++d) {
    g.shape.push_back(static_cast<size_t>(t.size(d)));
    g.strides.push_back(static_cast<ptrdiff_t>(t.stride(d) * t.element_size()));
  }
  for (int64_t d : dims) g.axes.push_back(static_cast<size_t>(d));
  return g;
}

}  // namespace

void fft_c2c_cpu(const Tensor& in, const Tensor& out, const Shape& dims, bool forward,
                 double scale) {
  dispatch_wide_floating(to_real_dtype(in.dtype()), "fft_c2c", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    Geometry i = geometry(in, dims), o = geometry(out, dims);
    pocketfft::c2c<T>(i.shape, i.strides, o.strides, i.axes, forward,
                      static_cast<const std::complex<T>*>(in.data_ptr()),
                      static_cast<std::complex<T>*>(out.data_ptr()), static_cast<T>(scale));
  });
}

void fft_r2c_cpu(const Tensor& in, const Tensor& out, const Shape& dims, double scale) {
  dispatch_wide_floating(in.dtype(), "fft_r2c", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    Geometry i = geometry(in, dims), o = geometry(out, dims);
    pocketfft::r2c<T>(i.shape, i.strides, o.strides, i.axes, /*forward=*/true,
                      static_cast<const T*>(in.data_ptr()),
                      static_cast<std::complex<T>*>(out.data_ptr()), static_cast<T>(scale));
  });
}

void fft_c2r_cpu(const Tensor& in, const Tensor& out, const Shape& dims, double scale) {
  dispatch_wide_floating(out.dtype(), "fft_c2r", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    Geometry i = geometry(in, dims), o = geometry(out, dims);
    pocketfft::c2r<T>(o.shape, i.strides, o.strides, o.axes, /*forward=*/false,
                      static_cast<const std::complex<T>*>(in.data_ptr()),
                      static_cast<T*>(out.data_ptr()), static_cast<T>(scale));
  });
}

}  // namespace ember
