#include "ember/ops/pooling.h"

#include "ember/ops/autograd_support.h"
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
                  bool count_include_pad) {
  EMBER_OP(avg_pool2d, x_in, k, s, pad, ceil, count_include_pad);
  check_defined("avg_pool2d", x_in);
  int64_t out_hw[2];
  Pool2dParams p = make_params("avg_pool2d", x_in, k, s, pad, {1, 1}, ceil, out_hw);
  p.count_include_pad = count_include_pad;
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

}  // namespace ember
