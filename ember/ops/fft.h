// torch.fft: discrete Fourier transforms of real and complex tensors, over one dim, two or n,
// with PyTorch's arguments (n or s: the signal sizes, zero-padded or trimmed; dim; norm:
// "backward" (the default: the inverse divides by n), "forward" or "ortho"), their gradients,
// and the sample frequencies and shifts. CPU tensors (pocketfft); CUDA's cuFFT is to come.
#pragma once

#include <optional>
#include <string>

#include "ember/core/tensor.h"

namespace ember::fft {

using Norm = std::optional<std::string>;
using Sizes = std::optional<Shape>;

/// Complex-to-complex over `dim` (ifft: the inverse); real inputs are taken as complex.
Tensor fft(const Tensor& x, std::optional<int64_t> n = {}, int64_t dim = -1, const Norm& norm = {});
Tensor ifft(const Tensor& x, std::optional<int64_t> n = {}, int64_t dim = -1,
            const Norm& norm = {});
/// Real input, the n / 2 + 1 non-redundant outputs (irfft: back to n real values).
Tensor rfft(const Tensor& x, std::optional<int64_t> n = {}, int64_t dim = -1,
            const Norm& norm = {});
Tensor irfft(const Tensor& x, std::optional<int64_t> n = {}, int64_t dim = -1,
             const Norm& norm = {});
/// The FFT of a Hermitian-symmetric signal given by its first half (real output); ihfft the
/// inverse, of a real signal.
Tensor hfft(const Tensor& x, std::optional<int64_t> n = {}, int64_t dim = -1,
            const Norm& norm = {});
Tensor ihfft(const Tensor& x, std::optional<int64_t> n = {}, int64_t dim = -1,
             const Norm& norm = {});

/// Over several dims: `dim` the dims (default: the last len(s), or all), `s` their sizes (-1:
/// the input's). fft2 and friends are these with dim (-2, -1).
Tensor fftn(const Tensor& x, const Sizes& s = {}, const Sizes& dim = {}, const Norm& norm = {});
Tensor ifftn(const Tensor& x, const Sizes& s = {}, const Sizes& dim = {}, const Norm& norm = {});
Tensor rfftn(const Tensor& x, const Sizes& s = {}, const Sizes& dim = {}, const Norm& norm = {});
Tensor irfftn(const Tensor& x, const Sizes& s = {}, const Sizes& dim = {}, const Norm& norm = {});
Tensor hfftn(const Tensor& x, const Sizes& s = {}, const Sizes& dim = {}, const Norm& norm = {});
Tensor ihfftn(const Tensor& x, const Sizes& s = {}, const Sizes& dim = {}, const Norm& norm = {});

/// The sample frequencies of an n-point transform with sample spacing d: [0, 1, ..., -1] / (d n)
/// (rfftfreq: the n / 2 + 1 non-negative ones). Default dtype float32.
Tensor fftfreq(int64_t n, double d = 1.0, const TensorOptions& options = {});
Tensor rfftfreq(int64_t n, double d = 1.0, const TensorOptions& options = {});
/// The zero frequency moved to the middle of `dim` (default all dims); ifftshift undoes it.
Tensor fftshift(const Tensor& x, const Sizes& dim = {});
Tensor ifftshift(const Tensor& x, const Sizes& dim = {});

}  // namespace ember::fft

namespace ember {

/// The short-time Fourier transform (torch.stft) of a 1-D or (B, L) signal: frames of n_fft
/// every hop_length (default n_fft / 4), each times the window (win_length long, zero-padded to
/// n_fft in the middle; default rectangular), transformed: (B?, n_fft / 2 + 1 or n_fft, frames).
/// center pads the signal by n_fft / 2 on both sides (pad_mode). return_complex false (the default
/// for real inputs, as PyTorch 1.13's) gives view_as_real of the result.
Tensor stft(const Tensor& x, int64_t n_fft, std::optional<int64_t> hop_length = {},
            std::optional<int64_t> win_length = {}, const Tensor& window = {}, bool center = true,
            const std::string& pad_mode = "reflect", bool normalized = false,
            std::optional<bool> onesided = {}, std::optional<bool> return_complex = {});
/// The inverse: each frame transformed back and windowed, overlapped and added, divided by the
/// windows' summed squares; `length` trims or zero-pads the signal. A real input is taken as
/// view_as_complex of it (PyTorch 1.13's old format).
Tensor istft(const Tensor& x, int64_t n_fft, std::optional<int64_t> hop_length = {},
             std::optional<int64_t> win_length = {}, const Tensor& window = {},
             bool center = true, bool normalized = false, std::optional<bool> onesided = {},
             std::optional<int64_t> length = {}, bool return_complex = false);

}  // namespace ember
