#include "ember/ops/pad.h"

#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/op_entry.h"

namespace ember {
namespace {

// The source index of each output position along a dim of size n padded by (before, after).
std::vector<int64_t> source_indices(int64_t n, int64_t before, int64_t after,
                                    const std::string& mode) {
  std::vector<int64_t> idx;
  for (int64_t o = -before; o < n + after; ++o) {
    int64_t i = o;
    if (mode == "reflect") {
      // Mirror without repeating the edge: -1 -> 1, n -> n - 2.
      int64_t period = 2 * (n - 1);
      i = period == 0 ? 0 : ((i % period) + period) % period;
      if (i >= n) i = period - i;
    } else if (mode == "replicate") {
      i = std::min(std::max<int64_t>(i, 0), n - 1);
    } else {
      // Circular, as PyTorch's: negative pads crop first and the rest wraps around what is left
      // (pad (-1, 2) of [0, 1, 2] is [1, 2, 1, 2]).
      int64_t lo = std::max<int64_t>(-before, 0), kept = n - lo - std::max<int64_t>(-after, 0);
      i = kept <= 0 ? 0 : lo + (((i - lo) % kept) + kept) % kept;
    }
    idx.push_back(i);
  }
  return idx;
}

}  // namespace

Tensor pad(const Tensor& x, const Shape& pads, const std::string& mode, double value) {
  EMBER_OP(pad, x, pads, mode, value);
  check_defined("pad", x);
  EMBER_CHECK(pads.size() % 2 == 0, "[pad] Padding length must be divisible by 2, got ",
              pads.size());
  auto npad = static_cast<int64_t>(pads.size() / 2);
  EMBER_CHECK(npad <= x.dim(), "[pad] Padding length too large: ", pads.size(),
              " for a tensor of ", x.dim(), " dims");
  if (mode == "constant") {
    Shape out_shape = x.sizes();
    for (int64_t k = 0; k < npad; ++k) {
      size_t d = static_cast<size_t>(x.dim() - 1 - k);
      out_shape[d] += pads[2 * k] + pads[2 * k + 1];
      EMBER_CHECK(out_shape[d] >= 0, "[pad] the padded size of dim ", d, " is negative (",
                  out_shape[d], ")");
    }
    // The part of x that survives cropping, and where it lands in the output.
    Tensor src = x, out = full(out_shape, value, x.options());
    Tensor dst = out;
    for (int64_t k = 0; k < npad; ++k) {
      int64_t d = x.dim() - 1 - k, before = pads[2 * k], after = pads[2 * k + 1];
      int64_t start = std::max<int64_t>(-before, 0), stop = x.size(d) - std::max<int64_t>(-after, 0);
      int64_t len = std::max<int64_t>(stop - start, 0);
      src = src.narrow(d, std::min(start, x.size(d)), len);
      dst = dst.narrow(d, std::max<int64_t>(before, 0), len);
    }
    {
      NoGradGuard no_grad;
      dst.copy_(src);
    }
    if (any_requires_grad({&x})) {
      record("ConstantPadNdBackward0", {&out}, {&x},
             [xs = x.sizes(), pads, npad](const Tensor& g) -> TensorList {
               // The gradient of the kept part, zeros where x was cropped away.
               Tensor gx = zeros(xs, g.options()), src = g, dst = gx;
               for (int64_t k = 0; k < npad; ++k) {
                 int64_t d = static_cast<int64_t>(xs.size()) - 1 - k;
                 int64_t before = pads[2 * k], after = pads[2 * k + 1];
                 int64_t start = std::max<int64_t>(-before, 0),
                         stop = xs[static_cast<size_t>(d)] - std::max<int64_t>(-after, 0);
                 int64_t len = std::max<int64_t>(stop - start, 0);
                 src = src.narrow(d, std::max<int64_t>(before, 0), len);
                 dst = dst.narrow(d, std::min(start, xs[static_cast<size_t>(d)]), len);
               }
               NoGradGuard no_grad;
               dst.copy_(src);
               return {gx};
             });
    }
    return out;
  }
  EMBER_CHECK_VALUE(mode == "reflect" || mode == "replicate" || mode == "circular",
                    "[pad] Unrecognised padding mode '", mode,
                    "' (expected constant, reflect, replicate or circular)");
  Tensor out = x;
  for (int64_t k = 0; k < npad; ++k) {
    int64_t d = x.dim() - 1 - k, n = x.size(d), before = pads[2 * k], after = pads[2 * k + 1];
    EMBER_CHECK(mode != "reflect" || (before < n && after < n), "[pad] Padding size should be "
                "less than the corresponding input dimension, but got: padding (", before, ", ",
                after, ") at dimension ", d, " of input ", x.sizes());
    EMBER_CHECK(n > 0, "[pad] cannot pad an empty dim by ", mode);
    std::vector<int64_t> idx = source_indices(n, before, after, mode);
    out = index_select(out, d, from_vector(idx, {static_cast<int64_t>(idx.size())}, kInt64)
                                   .to(x.device()));
  }
  return out;
}

}  // namespace ember
