#include "ember/ops/interpolate.h"

#include <algorithm>
#include <cmath>

#include "ember/ops/dispatch.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/reduce.h"
#include "ember/ops/linalg.h"
#include "ember/ops/op_entry.h"

namespace ember {
namespace {

// Which spatial rank each mode takes (0: any of 1 to 3).
int64_t mode_rank(const std::string& mode) {
  if (mode == "linear") return 1;
  if (mode == "bilinear" || mode == "bicubic") return 2;
  if (mode == "trilinear") return 3;
  return 0;
}

// PyTorch's area_pixel_compute_scale: in / out, or (in - 1) / (out - 1) with align_corners, or
// 1 / scale when the caller gave one.
double coordinate_scale(int64_t in, int64_t out, bool align_corners, double given) {
  if (align_corners) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  if (given > 0) return 1.0 / given;
  return static_cast<double>(in) / static_cast<double>(out);
}

// Keys' cubic convolution with A = -0.75 (PyTorch's upsample_bicubic2d): the weights of the
// samples at -1, 0, 1, 2 around a point t in [0, 1).
void cubic_weights(double t, double w[4]) {
  constexpr double A = -0.75;
  auto near = [](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };      // |x| <= 1
  auto far = [](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };  // 1 < |x| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

// The (out, in) matrix of one axis.
Tensor axis_matrix(int64_t in, int64_t out, const std::string& mode, bool align_corners,
                   double given_scale) {
  std::vector<double> m(static_cast<size_t>(out * in), 0.0);
  auto at = [&](int64_t o, int64_t i) -> double& {
    return m[static_cast<size_t>(o * in + std::clamp<int64_t>(i, 0, in - 1))];
  };
  double s = coordinate_scale(in, out, align_corners, given_scale);
  for (int64_t o = 0; o < out; ++o) {
    if (mode == "nearest" || mode == "nearest-exact") {
      // In float, as PyTorch's kernels: the boundaries fall where theirs do.
      float fs = static_cast<float>(s), fo = static_cast<float>(o);
      float src = mode == "nearest" ? fo * fs : (fo + 0.5f) * fs;
      at(o, std::min(in - 1, static_cast<int64_t>(std::floor(src)))) = 1;
    } else if (mode == "area") {  // adaptive average pooling
      int64_t start = (o * in) / out;
      int64_t end = ((o + 1) * in + out - 1) / out;
      for (int64_t i = start; i < end; ++i) at(o, i) += 1.0 / static_cast<double>(end - start);
    } else if (mode == "bicubic") {
      double src = align_corners ? o * s : (o + 0.5) * s - 0.5;  // not clamped: cubic reads out
      double fl = std::floor(src);
      double w[4];
      cubic_weights(src - fl, w);
      for (int k = 0; k < 4; ++k) at(o, static_cast<int64_t>(fl) - 1 + k) += w[k];
    } else {  // linear
      double src = align_corners ? o * s : std::max(0.0, (o + 0.5) * s - 0.5);
      int64_t i0 = std::min(in - 1, static_cast<int64_t>(src));
      int64_t i1 = std::min(in - 1, i0 + 1);
      double frac = src - static_cast<double>(i0);
      at(o, i0) += 1 - frac;
      at(o, i1) += frac;
    }
  }
  return from_vector(m, {out, in});
}

}  // namespace

Shape interpolate_size(const Tensor& x, const std::vector<double>& scale_factors) {
  int64_t spatial = x.dim() - 2;
  EMBER_CHECK_VALUE(static_cast<int64_t>(scale_factors.size()) == spatial,
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    "got input with spatial dimensions of ", spatial, " and scale_factor of shape ",
                    scale_factors.size());
  Shape out;
  for (int64_t d = 0; d < spatial; ++d)
    out.push_back(static_cast<int64_t>(
        std::floor(static_cast<double>(x.size(d + 2)) * scale_factors[static_cast<size_t>(d)])));
  return out;
}

Tensor interpolate(const Tensor& x, const Shape& size, const std::string& mode,
                   std::optional<bool> align_corners, const std::vector<double>& scales) {
  EMBER_OP(interpolate, x, size, mode, align_corners, scales);
  check_defined("interpolate", x);
  const std::vector<std::string> modes = {"nearest", "nearest-exact", "linear", "bilinear",
                                          "bicubic", "trilinear", "area"};
  EMBER_CHECK_VALUE(std::find(modes.begin(), modes.end(), mode) != modes.end(),
                    "interpolate: mode must be one of nearest, nearest-exact, linear, bilinear, "
                    "bicubic, trilinear or area, got '", mode, "'");
  int64_t spatial = x.dim() - 2;
  EMBER_CHECK(spatial >= 1 && spatial <= 3, "interpolate: expected a 3-D, 4-D or 5-D input "
              "(N, C, spatial...), got ", x.dim(), "-D");
  int64_t need = mode_rank(mode);
  EMBER_CHECK(need == 0 || need == spatial, "Got ", x.dim(), "D input, but ", mode,
              " mode needs ", need + 2, "D input");
  bool interpolating = need != 0;
  EMBER_CHECK_VALUE(interpolating || !align_corners.has_value(),
                    "align_corners option can only be set with the interpolating modes: linear | "
                    "bilinear | bicubic | trilinear");
  EMBER_CHECK(static_cast<int64_t>(size.size()) == spatial, "interpolate: expected ", spatial,
              " output sizes, got ", size.size());
  bool nearest = mode == "nearest" || mode == "nearest-exact";
  EMBER_CHECK(nearest || x.is_floating_point(), "interpolate: ", mode,
              " mode expects a floating point input, got ", x.dtype());
  for (int64_t d = 0; d < spatial; ++d) {
    EMBER_CHECK(x.size(d + 2) > 0 && size[static_cast<size_t>(d)] > 0,
                "Input and output sizes should be greater than 0, but got input (",
                x.sizes(), ") and output (", size, ")");
  }
  if (!nearest && (x.dtype() == kFloat16 || x.dtype() == kBFloat16))
    // Weighted sums in float32, rounded once, as PyTorch's kernels accumulate.
    return interpolate(x.to(kFloat32), size, mode, align_corners, scales).to(x.dtype());
  bool ac = align_corners.value_or(false);
  TensorOptions options = TensorOptions(x.dtype()).with_device(x.device());
  Tensor out = x;
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t axis = d + 2;
    double given = scales.empty() ? 0.0 : scales[static_cast<size_t>(d)];
    Tensor m = axis_matrix(x.size(axis), size[static_cast<size_t>(d)], mode, ac, given);
    if (nearest) {
      // One source per output: a gather, exact for every dtype (uint8 images too).
      Tensor index = argmax(m, 1).to(options.device);
      out = index_select(out, axis, index);
      continue;
    }
    // The axis last, times m^T, then back in place.
    out = matmul(out.transpose(axis, -1), m.to(options).t()).transpose(axis, -1);
  }
  return out.contiguous();
}

}  // namespace ember
