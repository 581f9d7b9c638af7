#include "ember/ops/conv.h"

#include "ember/ops/autograd_support.h"
#include "ember/ops/complex.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/join.h"
#include "ember/ops/pad.h"
#include "ember/ops/reduce.h"

namespace ember {
namespace {
// A complex convolution from three real ones (Gauss's trick, in PyTorch's order): with x = a + ib,
// w = c + id and bias p + iq, re = conv(a, c, p) - conv(b, d) and im = conv(a + b, c + d, p + q)
// minus both.
template <typename Conv>
Tensor complex_conv(const Tensor& x, const Tensor& w, const Tensor& bias, Conv conv) {
  Tensor a = real(x), b = imag(x), c = real(w), d = imag(w);
  Tensor p = bias.defined() ? real(bias) : Tensor();
  Tensor ac = conv(a, c, p), bd = conv(b, d, Tensor());
  Tensor cross = conv(a + b, c + d, bias.defined() ? p + imag(bias) : Tensor());
  return complex(ac - bd, cross - ac - bd);
}
}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, Pair stride,
              std::string_view padding, Pair dilation, int64_t groups) {
  EMBER_OP(conv2d, x, w, bias, stride, padding, dilation, groups);
  check_defined("conv2d", w, "weight");
  EMBER_CHECK(w.dim() >= 2, "[conv2d] expected a weight of at least 2 dims, got shape ", w.sizes());
  Pair kernel{w.dim() >= 4 ? w.size(-2) : 1, w.size(-1)};
  StringPadding<2> p = conv_string_padding<2>(padding, kernel, stride, dilation);
  if (p.extra == Pair{0, 0}) return conv2d(x, w, bias, stride, p.before, dilation, groups);
  Tensor padded = pad(x, {0, p.extra[1], 0, p.extra[0]});
  return conv2d(padded, w, bias, stride, p.before, dilation, groups);
}

namespace {
// conv2d's gradients as differentiable ops, for a backward under create_graph (gradient
// penalties differentiate them again; the kernels record nothing): the input's by the transposed
// convolution, the weight's by correlating the input with the output gradient (stride and
// dilation trading places), group by group; x (N, C, H, W), w (O, C / groups, kH, kW).
TensorList conv2d_backward_differentiable(const Tensor& x, const Tensor& w, const Tensor& g,
                                          const Conv2dParams& p, const Node& n) {
  Pair stride{p.stride[0], p.stride[1]}, padding{p.padding[0], p.padding[1]};
  Pair dilation{p.dilation[0], p.dilation[1]};
  Tensor gx, gw, gb;
  if (n.needs_input_grad(0)) {
    Pair extra;
    for (int i = 0; i < 2; ++i)
      extra[i] = x.size(2 + i) - ((g.size(2 + i) - 1) * stride[i] - 2 * padding[i] +
                                  dilation[i] * (w.size(2 + i) - 1) + 1);
    gx = conv_transpose2d(g, w, Tensor(), stride, padding, extra, p.groups, dilation);
  }
  if (n.needs_input_grad(1)) {
    int64_t cg = w.size(1), og = w.size(0) / p.groups;
    std::vector<Tensor> parts;
    for (int64_t k = 0; k < p.groups; ++k) {
      Tensor xs = x.narrow(1, k * cg, cg).transpose(0, 1);  // (C/g, N, H, W)
      Tensor gs = g.narrow(1, k * og, og).transpose(0, 1);  // (O/g, N, oH, oW)
      Tensor corr = conv2d(xs, gs, Tensor(), dilation, padding, stride, 1);  // (C/g, O/g, ...)
      parts.push_back(corr.transpose(0, 1).narrow(2, 0, w.size(2)).narrow(3, 0, w.size(3)));
    }
    gw = p.groups == 1 ? parts[0] : cat(parts, 0);
  }
  if (n.needs_input_grad(2)) gb = sum(g, Dims{0, 2, 3});
  return {gx, gw, gb};
}
}  // namespace

Tensor conv2d(const Tensor& x_in, const Tensor& w, const Tensor& bias, Pair stride, Pair padding,
              Pair dilation, int64_t groups) {
  EMBER_OP(conv2d, x_in, w, bias, stride, padding, dilation, groups);
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
  EMBER_CHECK(x_in.dtype() != kBool, "[conv2d] \"slow_conv2d_cpu\" not implemented for 'Bool'");
  if (x_in.is_complex())
    return complex_conv(x_in, w, bias, [&](const Tensor& x, const Tensor& w, const Tensor& b) {
      return conv2d(x, w, b, stride, padding, dilation, groups);
    });
  if (!x_in.is_floating_point()) {
    // Integers as PyTorch's CPU kernel sums them: exactly (in float64, below 2^53), no autograd.
    NoGradGuard no_grad;
    Tensor out = conv2d(x_in.to(kFloat64), w.to(kFloat64),
                        bias.defined() ? bias.to(kFloat64) : bias, stride, padding, dilation,
                        groups);
    return out.to(x_in.dtype());
  }
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
             if (GradMode::is_enabled()) return conv2d_backward_differentiable(x, w, g, p, n);
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
  EMBER_OP(conv_transpose2d, x_in, w, bias, stride, padding, output_padding,
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
  if (x_in.is_complex())
    return complex_conv(x_in, w, bias, [&](const Tensor& x, const Tensor& w, const Tensor& b) {
      return conv_transpose2d(x, w, b, stride, padding, output_padding, groups, dilation);
    });
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


// --- 3-D, made of 2-D ----------------------------------------------------------------------------

Tensor conv3d(const Tensor& x_in, const Tensor& w, const Tensor& bias, Triple stride,
              Triple padding, Triple dilation, int64_t groups) {
  EMBER_OP(conv3d, x_in, w, bias, stride, padding, dilation, groups);
  check_defined("conv3d", x_in);
  check_defined("conv3d", w, "weight");
  EMBER_CHECK(x_in.dim() == 4 || x_in.dim() == 5,
              "[conv3d] expected 4-D (unbatched) or 5-D (batched) input, but got input of size ",
              x_in.sizes());
  EMBER_CHECK(w.dim() == 5, "[conv3d] expected a 5-D weight (O, C/groups, kD, kH, kW), got ",
              w.sizes());
  bool batched = x_in.dim() == 5;
  Tensor x = batched ? x_in : x_in.unsqueeze(0);
  int64_t N = x.size(0), D = x.size(2), kD = w.size(2);
  int64_t sd = stride[0], pd = padding[0], dd = dilation[0];
  EMBER_CHECK(sd > 0 && dd > 0 && pd >= 0, "[conv3d] expected positive stride and dilation and "
              "non-negative padding");
  int64_t span = dd * (kD - 1) + 1, oD = (D + 2 * pd - span) / sd + 1;
  EMBER_CHECK(D + 2 * pd >= span, "[conv3d] Calculated padded input size per channel: (",
              D + 2 * pd, " x ", x.size(3) + 2 * padding[1], " x ", x.size(4) + 2 * padding[2],
              "). Kernel size: (", span, " x ", w.size(3), " x ", w.size(4),
              "). Kernel size can't be greater than actual input size");
  Tensor xp = pd > 0 ? pad(x, {0, 0, 0, 0, pd, pd}) : x;
  Tensor out;
  for (int64_t k = 0; k < kD; ++k) {
    // The depths kernel slice k meets: k dd, k dd + sd, ... (oD of them), as a batch of 2-D maps.
    Tensor planes = xp.slice(2, k * dd, k * dd + (oD - 1) * sd + 1, sd);  // (N, C, oD, H, W)
    Tensor flat = planes.transpose(1, 2).reshape({N * oD, x.size(1), x.size(3), x.size(4)});
    Tensor y = conv2d(flat, w.select(2, k), k == 0 ? bias : Tensor(), {stride[1], stride[2]},
                      {padding[1], padding[2]}, {dilation[1], dilation[2]}, groups);
    out = out.defined() ? out + y : y;
  }
  out = out.reshape({N, oD, out.size(1), out.size(2), out.size(3)}).transpose(1, 2).contiguous();
  return batched ? out : out.squeeze(0);
}

Tensor conv3d(const Tensor& x, const Tensor& w, const Tensor& bias, Triple stride,
              std::string_view padding, Triple dilation, int64_t groups) {
  EMBER_OP(conv3d, x, w, bias, stride, padding, dilation, groups);
  check_defined("conv3d", w, "weight");
  EMBER_CHECK(w.dim() == 5, "[conv3d] expected a 5-D weight (O, C/groups, kD, kH, kW), got ",
              w.sizes());
  StringPadding<3> p =
      conv_string_padding<3>(padding, {w.size(2), w.size(3), w.size(4)}, stride, dilation);
  bool odd = p.extra != Triple{0, 0, 0};
  Tensor padded = odd ? pad(x, {0, p.extra[2], 0, p.extra[1], 0, p.extra[0]}) : x;
  return conv3d(padded, w, bias, stride, p.before, dilation, groups);
}

Tensor conv_transpose3d(const Tensor& x_in, const Tensor& w, const Tensor& bias, Triple stride,
                        Triple padding, Triple output_padding, int64_t groups, Triple dilation) {
  EMBER_OP(conv_transpose3d, x_in, w, bias, stride, padding,
                output_padding, groups, dilation);
  check_defined("conv_transpose3d", x_in);
  check_defined("conv_transpose3d", w, "weight");
  EMBER_CHECK(x_in.dim() == 4 || x_in.dim() == 5, "[conv_transpose3d] expected 4-D or 5-D "
              "input, got ", x_in.sizes());
  EMBER_CHECK(w.dim() == 5, "[conv_transpose3d] expected a 5-D weight (C_in, C_out/groups, kD, "
              "kH, kW), got ", w.sizes());
  bool batched = x_in.dim() == 5;
  Tensor x = batched ? x_in : x_in.unsqueeze(0);
  int64_t N = x.size(0), D = x.size(2), kD = w.size(2);
  int64_t sd = stride[0], pd = padding[0], dd = dilation[0], opd = output_padding[0];
  EMBER_CHECK(opd < sd || opd < dd, "[conv_transpose3d] output padding must be smaller than "
              "either stride or dilation, but got output_padding_depth: ", opd,
              ", stride_depth: ", sd, ", dilation_depth: ", dd);
  // The full output depth before cropping the padding: (D - 1) sd + dd (kD - 1) + 1 + opd.
  int64_t full = (D - 1) * sd + dd * (kD - 1) + 1 + opd;
  int64_t oD = full - 2 * pd;
  EMBER_CHECK(oD > 0, "[conv_transpose3d] the output depth ", oD, " is not positive");
  Tensor flat = x.transpose(1, 2).reshape({N * D, x.size(1), x.size(3), x.size(4)});
  Tensor out;
  for (int64_t k = 0; k < kD; ++k) {
    Tensor y = conv_transpose2d(flat, w.select(2, k), Tensor(), {stride[1], stride[2]},
                                {padding[1], padding[2]}, {output_padding[1], output_padding[2]},
                                groups, {dilation[1], dilation[2]});
    int64_t C = y.size(1), H = y.size(2), W = y.size(3);
    // Input depth i lands at i sd + k dd: spread the D planes sd apart, then offset by k dd.
    Tensor planes = y.reshape({N, D, C, H, W});
    if (sd > 1) {
      planes = cat({planes.unsqueeze(2), zeros({N, D, sd - 1, C, H, W}, planes.options())}, 2)
                   .reshape({N, D * sd, C, H, W})
                   .narrow(1, 0, (D - 1) * sd + 1);
    }
    int64_t before = k * dd, after = full - before - planes.size(1);
    planes = pad(planes.permute({0, 2, 3, 4, 1}), {before, after}).permute({0, 4, 1, 2, 3});
    out = out.defined() ? out + planes : planes;
  }
  out = out.narrow(1, pd, oD).transpose(1, 2);  // (N, C, oD, H, W)
  if (bias.defined()) out = out + bias.reshape({1, -1, 1, 1, 1});
  out = out.contiguous();
  return batched ? out : out.squeeze(0);
}

}  // namespace ember
