// How both im2col convolutions see a 2-D convolution: every size and step as a number, with the
// per-group sizes derived once. K = Cg * kh * kw rows of the column matrix, P = oH * oW columns.
#pragma once

#include "ember/backend/kernels.h"

namespace ember {

struct ConvLayout {
  int64_t N, C, H, W, O, kh, kw, oH, oW, groups, Cg, Og, K, P;
  int64_t sh, sw, ph, pw, dh, dw;
};

/// x (N, C, H, W), w (O, C / groups, kh, kw), out (N, O, oH, oW).
inline ConvLayout conv_layout(const Tensor& x, const Tensor& w, const Tensor& out,
                              const Conv2dParams& p) {
  ConvLayout g{};
  g.N = x.size(0), g.C = x.size(1), g.H = x.size(2), g.W = x.size(3);
  g.O = w.size(0), g.kh = w.size(2), g.kw = w.size(3), g.oH = out.size(2), g.oW = out.size(3);
  g.groups = p.groups, g.Cg = g.C / g.groups, g.Og = g.O / g.groups;
  g.K = g.Cg * g.kh * g.kw, g.P = g.oH * g.oW;
  g.sh = p.stride[0], g.sw = p.stride[1], g.ph = p.padding[0], g.pw = p.padding[1];
  g.dh = p.dilation[0], g.dw = p.dilation[1];
  return g;
}

/// Whether the output is the size the forward convolution gives. A transposed convolution's output
/// padding can make its output (this layout's "input"'s gradient) larger: oneDNN's and cuDNN's
/// primitives take no such pair of shapes, ember's own kernels do (PyTorch's
/// is_output_padding_big likewise keeps it from cuDNN).
inline bool output_is_forward_size(const ConvLayout& g) {
  return g.oH == (g.H + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1 &&
         g.oW == (g.W + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
}

}  // namespace ember
