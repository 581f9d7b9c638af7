#include "ember/ops/pooling.h"

#include <limits>

#include "ember/ops/autograd_support.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/interpolate.h"
#include "ember/ops/join.h"
#include "ember/ops/pointwise.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/op_entry.h"

namespace ember {
namespace {

// PyTorch's pooling output size, including its ceil_mode rule that a window must start inside
// the input or the left padding.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil) {
  int64_t span = dil * (k - 1) + 1;
  int64_t num = in + 2 * pad - span + (ceil ? stride - 1 : 0);
  // Floor division, as PyTorch's div_rtn: a window larger than the padded input gives a negative
  // num, and truncation would round it up to a valid-looking size of 1.
  int64_t q = num / stride;
  if (num % stride != 0 && num < 0) --q;
  int64_t out = q + 1;
  if (ceil && (out - 1) * stride >= in + pad) --out;
  return out;
}

Pool2dParams make_params(const char* op, const Tensor& x, Pair k, std::optional<Pair> s, Pair pad,
                         Pair dil, bool ceil, int64_t out_hw[2]) {
  EMBER_CHECK(x.dim() == 3 || x.dim() == 4, "[", op, "] expected 3-D or 4-D input, got ",
              x.sizes());
  Pool2dParams p;
  Pair st = s ? *s : k;
  for (int i = 0; i < 2; ++i) {
    EMBER_CHECK(k[i] > 0 && st[i] > 0 && dil[i] > 0, "[", op,
                "] kernel_size, stride and dilation must be positive, got ", k[i], ", ", st[i],
                ", ", dil[i]);
    EMBER_CHECK(pad[i] >= 0 && pad[i] * 2 <= k[i], "[", op,
                "] pad should be at most half of effective kernel size, but got pad=", pad[i],
                ", kernel_size=", k[i]);
    p.kernel[i] = k[i];
    p.stride[i] = st[i];
    p.padding[i] = pad[i];
    p.dilation[i] = dil[i];
    out_hw[i] = pooled_size(x.size(x.dim() - 2 + i), k[i], pad[i], st[i], dil[i], ceil);
    EMBER_CHECK(out_hw[i] > 0, "[", op, "] given input size ", x.sizes(),
                ", the calculated output size is too small");
  }
  return p;
}

}  // namespace

Tensor max_pool2d(const Tensor& x_in, Pair k, std::optional<Pair> s, Pair pad, Pair dil,
                  bool ceil) {
  EMBER_OP(max_pool2d, x_in, k, s, pad, dil, ceil);
  return std::get<0>(max_pool2d_with_indices(x_in, k, s, pad, dil, ceil));
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x_in, Pair k,
                                                   std::optional<Pair> s, Pair pad, Pair dil,
                                                   bool ceil) {
  EMBER_OP(max_pool2d_with_indices, x_in, k, s, pad, dil, ceil);
  check_defined("max_pool2d", x_in);
  int64_t out_hw[2];
  Pool2dParams p = make_params("max_pool2d", x_in, k, s, pad, dil, ceil, out_hw);
  bool batched = x_in.dim() == 4;
  Tensor x = (batched ? x_in : x_in.unsqueeze(0)).contiguous();
  Tensor out = empty({x.size(0), x.size(1), out_hw[0], out_hw[1]}, x.options());
  Tensor idx = empty(out.sizes(), TensorOptions(kInt64).with_device(x.device()));
  EMBER_DISPATCH_DEVICE(x.device(), max_pool2d, x, out, idx, p);
  if (any_requires_grad({&x})) {
    record(
        "MaxPool2DWithIndicesBackward0", {&out}, {&x},
        [si = SavedTensor(idx), xs = x.sizes(), xo = x.options(),
         p](const Tensor& g) -> TensorList {
          Tensor gx = empty(xs, xo);
          EMBER_DISPATCH_DEVICE(g.device(), max_pool2d_backward, g.contiguous(), si.get(), gx, p);
          return {gx};
        });
  }
  if (!batched) return {out.squeeze(0), idx.squeeze(0)};
  return {out, idx};
}

Tensor avg_pool2d(const Tensor& x_in, Pair k, std::optional<Pair> s, Pair pad, bool ceil,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  EMBER_OP(avg_pool2d, x_in, k, s, pad, ceil, count_include_pad, divisor_override);
  check_defined("avg_pool2d", x_in);
  EMBER_CHECK_VALUE(!divisor_override || *divisor_override != 0,
                    "[avg_pool2d] divisor must be not zero");
  int64_t out_hw[2];
  Pool2dParams p = make_params("avg_pool2d", x_in, k, s, pad, {1, 1}, ceil, out_hw);
  p.count_include_pad = count_include_pad;
  // The kernels divide by a positive divisor; a negative one (PyTorch takes any but 0) is its
  // magnitude's result negated.
  int64_t divisor = divisor_override.value_or(0);
  p.divisor_override = divisor < 0 ? -divisor : divisor;
  bool batched = x_in.dim() == 4;
  Tensor x = (batched ? x_in : x_in.unsqueeze(0)).contiguous();
  EMBER_CHECK(x.dtype() != kBool, "[avg_pool2d] expected a numeric input, got ", x.dtype());
  Tensor out = empty({x.size(0), x.size(1), out_hw[0], out_hw[1]}, x.options());
  EMBER_DISPATCH_DEVICE(x.device(), avg_pool2d, x, out, p);
  if (any_requires_grad({&x})) {
    record("AvgPool2DBackward0", {&out}, {&x},
           [p, xs = x.sizes(), xo = x.options()](const Tensor& g) -> TensorList {
             Tensor gx = empty(xs, xo);
             EMBER_DISPATCH_DEVICE(g.device(), avg_pool2d_backward, g.contiguous(), gx, p);
             return {gx};
           });
  }
  if (divisor < 0) out = -out;
  return batched ? out : out.squeeze(0);
}

Tensor adaptive_avg_pool2d(const Tensor& x_in, Pair output_size) {
  EMBER_OP(adaptive_avg_pool2d, x_in, output_size);
  check_defined("adaptive_avg_pool2d", x_in);
  EMBER_CHECK(x_in.dim() == 3 || x_in.dim() == 4,
              "[adaptive_avg_pool2d] expected 3-D or 4-D input, got ", x_in.sizes());
  EMBER_CHECK(output_size[0] >= 0 && output_size[1] >= 0,
              "[adaptive_avg_pool2d] expected a non-negative output size, got (", output_size[0],
              ", ", output_size[1], ")");
  for (int64_t d = 1; d < x_in.dim(); ++d)
    EMBER_CHECK(x_in.size(d) > 0,
                "[adaptive_avg_pool2d] expected input to have non-zero size for "
                "non-batch dimensions, but input has sizes ",
                x_in.sizes(), " with dimension ", d, " being empty");
  EMBER_CHECK(x_in.is_floating_point(),
              "[adaptive_avg_pool2d] expected a floating point input, got ", x_in.dtype());
  bool batched = x_in.dim() == 4;
  Tensor x = (batched ? x_in : x_in.unsqueeze(0)).contiguous();
  Tensor out = empty({x.size(0), x.size(1), output_size[0], output_size[1]}, x.options());
  EMBER_DISPATCH_DEVICE(x.device(), adaptive_avg_pool2d, x, out);
  if (any_requires_grad({&x})) {
    record("AdaptiveAvgPool2DBackward0", {&out}, {&x},
           [xs = x.sizes(), xo = x.options()](const Tensor& g) -> TensorList {
             Tensor gx = empty(xs, xo);
             EMBER_DISPATCH_DEVICE(g.device(), adaptive_avg_pool2d_backward, g.contiguous(), gx);
             return {gx};
           });
  }
  return batched ? out : out.squeeze(0);
}


// --- 3-D, made of 2-D pooling of each depth plane --------------------------------------------

namespace {

// The depth geometry of a 3-D pool: output depth, and how many -inf / zero planes pad the front
// and back so that every window's depths exist.
struct Depth {
  int64_t out, front, back;
};
Depth depth_of(const char* op, int64_t D, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  EMBER_CHECK(k > 0 && s > 0 && d > 0, "[", op,
              "] kernel_size, stride and dilation must be positive");
  EMBER_CHECK(p >= 0 && p * 2 <= k, "[", op, "] pad should be at most half of effective kernel "
              "size, but got pad=", p, ", kernel_size=", k);
  int64_t out = pooled_size(D, k, p, s, d, ceil);
  EMBER_CHECK(out > 0, "[", op, "] the calculated output depth is too small");
  int64_t last = (out - 1) * s + (k - 1) * d;  // in padded coordinates
  return {out, p, std::max<int64_t>(0, last + 1 - p - D)};
}

// x (N, D, C, H, W) with `front` and `back` planes of `value` added along D.
Tensor pad_depth(const Tensor& x, int64_t front, int64_t back, double value) {
  if (front == 0 && back == 0) return x;
  Shape a = x.sizes(), b = x.sizes();
  a[1] = front;
  b[1] = back;
  return cat({full(a, value, x.options()), x, full(b, value, x.options())}, 1);
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x_in, Triple k,
                                                   std::optional<Triple> s_in, Triple pad,
                                                   Triple dil, bool ceil) {
  EMBER_OP(max_pool3d_with_indices, x_in, k, s_in, pad, dil, ceil);
  check_defined("max_pool3d", x_in);
  EMBER_CHECK(x_in.dim() == 4 || x_in.dim() == 5, "[max_pool3d] expected 4-D or 5-D input, got ",
              x_in.sizes());
  bool batched = x_in.dim() == 5;
  Tensor x = batched ? x_in : x_in.unsqueeze(0);
  Triple s = s_in ? *s_in : k;
  int64_t N = x.size(0), C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
  Depth g = depth_of("max_pool3d", D, k[0], s[0], pad[0], dil[0], ceil);
  // Each depth plane pooled over (H, W): (N D, C, oH, oW).
  auto [pv, pi] = max_pool2d_with_indices(
      x.transpose(1, 2).reshape({N * D, C, H, W}), {k[1], k[2]}, Pair{s[1], s[2]},
      {pad[1], pad[2]}, {dil[1], dil[2]}, ceil);
  int64_t oH = pv.size(2), oW = pv.size(3);
  double lowest = -std::numeric_limits<double>::infinity();
  Tensor vals = pad_depth(pv.reshape({N, D, C, oH, oW}), g.front, g.back, lowest);
  Tensor idx = pad_depth(pi.reshape({N, D, C, oH, oW}), g.front, g.back, 0);
  // Window o reads padded depths o s + j d, j < k: the maximum over j, the first on ties.
  std::vector<Tensor> vs, is;
  for (int64_t j = 0; j < k[0]; ++j) {
    int64_t start = j * dil[0], end = start + (g.out - 1) * s[0] + 1;
    vs.push_back(vals.slice(1, start, end, s[0]));
    is.push_back(idx.slice(1, start, end, s[0]));
  }
  auto [v, which] = stack(vs, 2).max(2);  // (N, oD, C, oH, oW)
  Tensor plane_index = gather(stack(is, 2), 2, which.unsqueeze(2)).squeeze(2);
  // The depth of the maximum, back in input coordinates.
  Tensor od = arange(g.out, TensorOptions(kInt64)).reshape({1, g.out, 1, 1, 1});
  Tensor depth = od * s[0] + which * dil[0] - pad[0];
  Tensor index = depth * (H * W) + plane_index;
  v = v.transpose(1, 2).contiguous();
  index = index.transpose(1, 2).contiguous();
  if (!batched) return {v.squeeze(0), index.squeeze(0)};
  return {v, index};
}

Tensor max_pool3d(const Tensor& x, Triple k, std::optional<Triple> s, Triple pad, Triple dil,
                  bool ceil) {
  EMBER_OP(max_pool3d, x, k, s, pad, dil, ceil);
  return std::get<0>(max_pool3d_with_indices(x, k, s, pad, dil, ceil));
}

Tensor avg_pool3d(const Tensor& x_in, Triple k, std::optional<Triple> s_in, Triple pad, bool ceil,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  EMBER_OP(avg_pool3d, x_in, k, s_in, pad, ceil, count_include_pad, divisor_override);
  check_defined("avg_pool3d", x_in);
  EMBER_CHECK(x_in.dim() == 4 || x_in.dim() == 5, "[avg_pool3d] expected 4-D or 5-D input, got ",
              x_in.sizes());
  EMBER_CHECK_VALUE(!divisor_override || *divisor_override != 0,
                    "[avg_pool3d] divisor must be not zero");
  if (x_in.dtype() == kFloat16 || x_in.dtype() == kBFloat16)
    // The depth sums and the division in float32, rounded once, as PyTorch's kernel.
    return avg_pool3d(x_in.to(kFloat32), k, s_in, pad, ceil, count_include_pad, divisor_override)
        .to(x_in.dtype());
  bool batched = x_in.dim() == 5;
  Tensor x = batched ? x_in : x_in.unsqueeze(0);
  Triple s = s_in ? *s_in : k;
  int64_t N = x.size(0), C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
  Depth g = depth_of("avg_pool3d", D, k[0], s[0], pad[0], 1, ceil);
  // The sums of each depth plane's (H, W) windows (a divisor of 1), then over the depths.
  Tensor sums = avg_pool2d(x.transpose(1, 2).reshape({N * D, C, H, W}), {k[1], k[2]},
                           Pair{s[1], s[2]}, {pad[1], pad[2]}, ceil, true, 1);
  int64_t oH = sums.size(2), oW = sums.size(3);
  Tensor planes = pad_depth(sums.reshape({N, D, C, oH, oW}), g.front, g.back, 0);
  Tensor total;
  for (int64_t j = 0; j < k[0]; ++j) {
    Tensor part = planes.slice(1, j, j + (g.out - 1) * s[0] + 1, s[0]);
    total = total.defined() ? total + part : part;
  }
  // The divisor: the product of each axis's window length, counting padding (but not what
  // ceil_mode adds past it) or not (PyTorch's avg_pool3d).
  auto lengths = [&](int64_t L, int64_t kk, int64_t ss, int64_t pp, int64_t n) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t o = 0; o < n; ++o) {
      int64_t start = o * ss - pp, end = std::min(start + kk, L + pp);
      v[static_cast<size_t>(o)] = static_cast<double>(
          count_include_pad ? end - start : std::min(end, L) - std::max<int64_t>(start, 0));
    }
    return from_vector(v, {n});
  };
  Tensor divisor;
  if (divisor_override) {
    divisor = scalar_tensor(static_cast<double>(*divisor_override), TensorOptions(kFloat64));
  } else {
    divisor = lengths(D, k[0], s[0], pad[0], g.out).reshape({1, g.out, 1, 1, 1}) *
              lengths(H, k[1], s[1], pad[1], oH).reshape({1, 1, 1, oH, 1}) *
              lengths(W, k[2], s[2], pad[2], oW).reshape({1, 1, 1, 1, oW});
  }
  Tensor out = x.is_floating_point()
                   ? total / divisor.to(total.dtype()).to(total.device())
                   : div(total, divisor.to(total.device()).to(total.dtype()), "trunc");
  out = out.transpose(1, 2).contiguous();
  return batched ? out : out.squeeze(0);
}

Tensor adaptive_avg_pool3d(const Tensor& x, Triple output_size) {
  EMBER_OP(adaptive_avg_pool3d, x, output_size);
  check_defined("adaptive_avg_pool3d", x);
  EMBER_CHECK(x.dim() == 4 || x.dim() == 5, "[adaptive_avg_pool3d] expected 4-D or 5-D input, "
              "got ", x.sizes());
  bool batched = x.dim() == 5;
  // PyTorch's "area" interpolation is adaptive average pooling.
  Tensor out = interpolate(batched ? x : x.unsqueeze(0),
                           {output_size[0], output_size[1], output_size[2]}, "area");
  return batched ? out : out.squeeze(0);
}

}  // namespace ember
