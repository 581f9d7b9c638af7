#include "ember/ops/conv.h"

#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/pad.h"

namespace ember {

StringPadding conv_string_padding(std::string_view padding, Pair kernel, Pair stride,
                                  Pair dilation) {
  StringPadding out;
  if (padding == "valid") return out;
  EMBER_CHECK_VALUE(padding == "same", "Invalid padding string '", padding,
                    "', should be one of {'valid', 'same'}");
  for (size_t i = 0; i < 2; ++i) {
    EMBER_CHECK_VALUE(stride[i] == 1, "padding='same' is not supported for strided convolutions");
    int64_t total = dilation[i] * (kernel[i] - 1);
    out.before[i] = total / 2;
    out.extra[i] = total % 2;
  }
  return out;
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, Pair stride,
              std::string_view padding, Pair dilation, int64_t groups) {
  check_defined("conv2d", w, "weight");
  EMBER_CHECK(w.dim() >= 2, "[conv2d] expected a weight of at least 2 dims, got shape ", w.sizes());
  Pair kernel{w.dim() >= 4 ? w.size(-2) : 1, w.size(-1)};
  StringPadding p = conv_string_padding(padding, kernel, stride, dilation);
  if (p.extra == Pair{0, 0}) return conv2d(x, w, bias, stride, p.before, dilation, groups);
  Tensor padded = pad(x, {0, p.extra[1], 0, p.extra[0]});
  return conv2d(padded, w, bias, stride, p.before, dilation, groups);
}

Tensor conv2d(const Tensor& x_in, const Tensor& w, const Tensor& bias, Pair stride, Pair padding,
              Pair dilation, int64_t groups) {
  EMBER_OP_CAST(kLowerPrecisionFp, conv2d, x_in, w, bias, stride, padding, dilation, groups);
  check_defined("conv2d", x_in);
  check_defined("conv2d", w, "weight");
  check_same_device("conv2d", {&x_in, &w, &bias});
  bool batched = x_in.dim() == 4;
  EMBER_CHECK(x_in.dim() == 3 || x_in.dim() == 4,
              "[conv2d] expected 3-D (unbatched) or 4-D (batched) input, but got input of size ",
              x_in.sizes());
  EMBER_CHECK(w.dim() == 4, "[conv2d] expected a 4-D weight (O, C/groups, kH, kW), got ",
              w.sizes());
  EMBER_CHECK(groups > 0, "[conv2d] non-positive groups is not supported, got ", groups);
  EMBER_CHECK(x_in.dtype() == w.dtype(), "[conv2d] input type (", x_in.dtype(),
              ") and weight type (", w.dtype(), ") should be the same");
  EMBER_CHECK(x_in.is_floating_point(), "[conv2d] expected a floating point input, got ",
              x_in.dtype());
  Tensor x = batched ? x_in : x_in.unsqueeze(0);
  int64_t C = x.size(1), O = w.size(0);
  EMBER_CHECK(C == w.size(1) * groups, "[conv2d] given groups=", groups, ", weight of size ",
              w.sizes(), ", expected input ", x.sizes(), " to have ", w.size(1) * groups,
              " channels, but got ", C, " channels instead");
  EMBER_CHECK(O % groups == 0, "[conv2d] out_channels (", O, ") must be divisible by groups (",
              groups, ")");
  if (bias.defined())
    EMBER_CHECK(bias.dim() == 1 && bias.size(0) == O, "[conv2d] expected bias of shape [", O,
                "], got ", bias.sizes());
  Conv2dParams p;
  int64_t out_hw[2];
  for (int i = 0; i < 2; ++i) {
    EMBER_CHECK(
        stride[i] > 0 && dilation[i] > 0 && padding[i] >= 0,
        "[conv2d] expected positive stride and dilation and non-negative padding, got stride ",
        stride[i], ", dilation ", dilation[i], ", padding ", padding[i]);
    p.stride[i] = stride[i];
    p.padding[i] = padding[i];
    p.dilation[i] = dilation[i];
    int64_t in = x.size(2 + i), k = w.size(2 + i);
    int64_t span = dilation[i] * (k - 1) + 1;
    EMBER_CHECK(in + 2 * padding[i] >= span, "[conv2d] calculated padded input size per channel: (",
                x.size(2) + 2 * padding[0], " x ", x.size(3) + 2 * padding[1], "). Kernel size: (",
                w.size(2), " x ", w.size(3),
                "). Kernel size can't be greater than actual input size");
    out_hw[i] = (in + 2 * padding[i] - span) / stride[i] + 1;
  }
  p.groups = groups;
  // The kernels take one dtype (a CPU without a kernel for it computes in float32 and rounds).
  DType kt = x.dtype();
  Tensor xc = x.contiguous(), wc = w.contiguous();
  Tensor bc = bias.defined() ? bias.to(kt).contiguous() : Tensor();
  Tensor out =
      empty({x.size(0), O, out_hw[0], out_hw[1]}, TensorOptions(kt).with_device(x.device()));
  EMBER_DISPATCH_DEVICE(x.device(), conv2d, xc, wc, bc, out, p);
  if (any_requires_grad({&x, &w, &bias})) {
    record("ConvolutionBackward0", {&out}, {&x, &w, &bias},
           [sx = SavedTensor(x), sw = SavedTensor(w), has_bias = bias.defined(), p, kt](
               const Tensor& g, const Node& n) -> TensorList {
             const Tensor& x = sx.get();
             const Tensor& w = sw.get();
             Tensor gx, gw, gb;
             if (n.needs_input_grad(0))
               gx = empty(x.sizes(), TensorOptions(kt).with_device(x.device()));
             if (n.needs_input_grad(1))
               gw = empty(w.sizes(), TensorOptions(kt).with_device(w.device()));
             if (has_bias && n.needs_input_grad(2))
               gb = empty({w.size(0)}, TensorOptions(kt).with_device(w.device()));
             EMBER_DISPATCH_DEVICE(x.device(), conv2d_backward, x.to(kt).contiguous(),
                                   w.to(kt).contiguous(), g.to(kt).contiguous(), gx, gw, gb, p);
             auto back = [&](const Tensor& t, DType d) { return t.defined() ? t.to(d) : t; };
             return {back(gx, x.dtype()), back(gw, w.dtype()), back(gb, w.dtype())};
           });
  }
  return batched ? out : out.squeeze(0);
}

Tensor conv_transpose2d(const Tensor& x_in, const Tensor& w, const Tensor& bias, Pair stride,
                        Pair padding, Pair output_padding, int64_t groups, Pair dilation) {
  EMBER_OP_CAST(kLowerPrecisionFp, conv_transpose2d, x_in, w, bias, stride, padding, output_padding,
                groups, dilation);
  check_defined("conv_transpose2d", x_in);
  check_defined("conv_transpose2d", w, "weight");
  check_same_device("conv_transpose2d", {&x_in, &w, &bias});
  EMBER_CHECK(x_in.dim() == 3 || x_in.dim() == 4, "[conv_transpose2d] expected 3-D or 4-D input, "
              "got ", x_in.sizes());
  EMBER_CHECK(w.dim() == 4, "[conv_transpose2d] expected a 4-D weight (C_in, C_out/groups, kH, "
              "kW), got ", w.sizes());
  EMBER_CHECK(x_in.dtype() == w.dtype(), "[conv_transpose2d] input type (", x_in.dtype(),
              ") and weight type (", w.dtype(), ") should be the same");
  bool batched = x_in.dim() == 4;
  Tensor x = (batched ? x_in : x_in.unsqueeze(0)).contiguous();
  EMBER_CHECK(groups > 0 && x.size(1) == w.size(0) && w.size(0) % groups == 0,
              "[conv_transpose2d] given groups=", groups, ", weight of size ", w.sizes(),
              ", expected input ", x.sizes(), " to have ", w.size(0), " channels");
  int64_t C_out = w.size(1) * groups;
  Conv2dParams p;
  int64_t out_hw[2];
  for (int i = 0; i < 2; ++i) {
    EMBER_CHECK(stride[i] > 0 && dilation[i] > 0 && padding[i] >= 0 && output_padding[i] >= 0 &&
                    (output_padding[i] < stride[i] || output_padding[i] < dilation[i]),
                "[conv_transpose2d] invalid stride ", stride[i], ", dilation ", dilation[i],
                ", padding ", padding[i], " or output_padding ", output_padding[i]);
    p.stride[i] = stride[i];
    p.padding[i] = padding[i];
    p.dilation[i] = dilation[i];
    out_hw[i] = (x.size(2 + i) - 1) * stride[i] - 2 * padding[i] +
                dilation[i] * (w.size(2 + i) - 1) + output_padding[i] + 1;
    EMBER_CHECK(out_hw[i] > 0, "[conv_transpose2d] the output size would be ", out_hw[i]);
  }
  p.groups = groups;
  Tensor wc = w.contiguous();
  // conv2d's input gradient for an "input" of the output's shape: the kernel reads its shape only.
  Tensor shape_of_out = empty({x.size(0), C_out, out_hw[0], out_hw[1]}, x.options());
  Tensor out = empty(shape_of_out.sizes(), x.options());
  EMBER_DISPATCH_DEVICE(x.device(), conv2d_backward, shape_of_out, wc, x, out, Tensor(), Tensor(),
                        p);
  {
    NoGradGuard no_grad;
    if (bias.defined()) out.add_(bias.to(out.dtype()).view({1, C_out, 1, 1}));
  }
  if (any_requires_grad({&x, &w, &bias})) {
    record("ConvolutionBackward0", {&out}, {&x, &w, &bias},
           [sx = SavedTensor(x), sw = SavedTensor(wc), has_bias = bias.defined(), p](
               const Tensor& g, const Node& n) -> TensorList {
             const Tensor& x = sx.get();
             const Tensor& w = sw.get();
             Tensor gc = g.contiguous(), gx, gw, gb;
             // The input's gradient is the forward convolution of the output's (past the input's
             // size where an output padding past the stride added rows no input feeds); the
             // weight's is conv2d's weight gradient with the roles of input and output exchanged.
             if (n.needs_input_grad(0))
               gx = conv2d(gc, w, Tensor(), {p.stride[0], p.stride[1]},
                           {p.padding[0], p.padding[1]}, {p.dilation[0], p.dilation[1]}, p.groups)
                        .narrow(2, 0, x.size(2))
                        .narrow(3, 0, x.size(3));
             if (n.needs_input_grad(1)) {
               gw = empty(w.sizes(), w.options());
               EMBER_DISPATCH_DEVICE(x.device(), conv2d_backward, gc, w, x, Tensor(), gw,
                                     Tensor(), p);
             }
             if (has_bias && n.needs_input_grad(2)) gb = g.sum({0, 2, 3});
             return {gx, gw, gb};
           });
  }
  return batched ? out : out.squeeze(0);
}

}  // namespace ember
