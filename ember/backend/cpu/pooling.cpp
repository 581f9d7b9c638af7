// CPU max, average and adaptive average pooling over (N, C, H, W), one plane per task.
#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "ember/backend/cpu/thread_pool.h"
#include "ember/backend/functors/math.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

int64_t planes(const Tensor& t) { return t.size(0) * t.size(1); }

}  // namespace

namespace {
// First index in [0, k) whose input coordinate o * stride - pad + i * dil is >= 0, and the end of
// those that are < size: the window clipped to the input, so the inner loops need no checks.
std::pair<int64_t, int64_t> clip(int64_t o, int64_t k, int64_t stride, int64_t pad, int64_t dil,
                                 int64_t size) {
  int64_t base = o * stride - pad;
  int64_t lo = base >= 0 ? 0 : (-base + dil - 1) / dil;
  int64_t hi = size - base <= 0 ? 0 : std::min(k, (size - base + dil - 1) / dil);
  return {lo, std::max(lo, hi)};
}

// A window clipped to the input: its first input coordinate and how many taps it has.
struct Taps {
  int64_t start, taps;
};
std::vector<Taps> windows(int64_t outputs, int64_t k, int64_t stride, int64_t pad, int64_t dil,
                          int64_t size) {
  std::vector<Taps> w;
  for (int64_t o = 0; o < outputs; ++o) {
    auto [lo, hi] = clip(o, k, stride, pad, dil, size);
    w.push_back({o * stride - pad + lo * dil, hi - lo});
  }
  return w;
}
}  // namespace

void max_pool2d_cpu(const Tensor& x, const Tensor& out, const Tensor& indices,
                    const Pool2dParams& p) {
  int64_t H = x.size(2), W = x.size(3), oH = out.size(2), oW = out.size(3);
  bool plain2x2 = p.kernel[0] == 2 && p.kernel[1] == 2 && p.stride[0] == 2 && p.stride[1] == 2 &&
                  p.padding[0] == 0 && p.padding[1] == 0 && p.dilation[0] == 1 &&
                  p.dilation[1] == 1 && 2 * oH <= H &&
                  2 * oW <= W;  // ceil_mode can add windows that run off the edge
  // Each output row's and column's window, clipped to the input, worked out once (not per
  // output: the clipping divides).
  std::vector<Taps> rows = windows(oH, p.kernel[0], p.stride[0], p.padding[0], p.dilation[0], H),
                    cols = windows(oW, p.kernel[1], p.stride[1], p.padding[1], p.dilation[1], W);
  dispatch_numeric(x.dtype(), "max_pool2d", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = opmath_t<T>;
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* op = static_cast<T*>(out.data_ptr());
    int64_t* ip = static_cast<int64_t*>(indices.data_ptr());
    // The first maximum wins; a NaN beats everything (PyTorch's rule).
    auto better = [](A v, A best) { return v > best || math::isnan(v); };
    parallel_for(
        0, planes(x), std::max<int64_t>(1, kGrainSize / std::max<int64_t>(H * W, 1)),
        [&](int64_t b, int64_t e) {
          for (int64_t pl = b; pl < e; ++pl) {
            const T* in = xp + pl * H * W;
            T* o = op + pl * oH * oW;
            int64_t* idx = ip + pl * oH * oW;
            if (plain2x2) {  // LeNet's pooling: four loads, no bounds checks
              for (int64_t oh = 0; oh < oH; ++oh) {
                const T* r0 = in + 2 * oh * W;
                const T* r1 = r0 + W;
                for (int64_t ow = 0; ow < oW; ++ow) {
                  int64_t c = 2 * ow;
                  A best = static_cast<A>(r0[c]);
                  int64_t bi = 2 * oh * W + c;
                  A v1 = static_cast<A>(r0[c + 1]), v2 = static_cast<A>(r1[c]),
                    v3 = static_cast<A>(r1[c + 1]);
                  if (better(v1, best)) best = v1, bi = 2 * oh * W + c + 1;
                  if (better(v2, best)) best = v2, bi = (2 * oh + 1) * W + c;
                  if (better(v3, best)) best = v3, bi = (2 * oh + 1) * W + c + 1;
                  o[oh * oW + ow] = static_cast<T>(best);
                  idx[oh * oW + ow] = bi;
                }
              }
              continue;
            }
            for (int64_t oh = 0; oh < oH; ++oh) {
              const Taps& wh = rows[static_cast<size_t>(oh)];
              for (int64_t ow = 0; ow < oW; ++ow) {
                const Taps& ww = cols[static_cast<size_t>(ow)];
                A best = std::numeric_limits<A>::lowest();
                if constexpr (std::is_floating_point_v<A>)
                  best = -std::numeric_limits<A>::infinity();
                int64_t bi = -1;
                if (wh.taps > 0 && ww.taps > 0) {  // the first tap starts; a NaN one stays
                  bi = wh.start * W + ww.start;
                  best = static_cast<A>(in[bi]);
                }
                for (int64_t ki = 0; ki < wh.taps; ++ki) {
                  int64_t ih = wh.start + ki * p.dilation[0];
                  const T* row = in + ih * W;
                  for (int64_t kj = 0; kj < ww.taps; ++kj) {
                    int64_t iw = ww.start + kj * p.dilation[1];
                    A v = static_cast<A>(row[iw]);
                    if (better(v, best)) {
                      best = v;
                      bi = ih * W + iw;
                    }
                  }
                }
                o[oh * oW + ow] = static_cast<T>(best);
                idx[oh * oW + ow] = bi;
              }
            }
          }
        });
  });
}

// A scatter per plane: one thread owns a plane, so its sums come in a fixed order.
void max_pool2d_backward_cpu(const Tensor& grad_out, const Tensor& indices, const Tensor& grad_x,
                             const Pool2dParams&) {
  int64_t HW = grad_x.size(2) * grad_x.size(3), oHW = grad_out.size(2) * grad_out.size(3);
  dispatch_floating(grad_x.dtype(), "max_pool2d_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    const T* gp = static_cast<const T*>(grad_out.data_ptr());
    const int64_t* ip = static_cast<const int64_t*>(indices.data_ptr());
    T* gx = static_cast<T*>(grad_x.data_ptr());
    parallel_for(0, planes(grad_x), std::max<int64_t>(1, kGrainSize / std::max<int64_t>(HW, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t pl = b; pl < e; ++pl) {
                     T* dst = gx + pl * HW;
                     std::fill(dst, dst + HW, T(0));
                     for (int64_t k = 0; k < oHW; ++k) {
                       int64_t i = ip[pl * oHW + k];
                       if (i >= 0)
                         dst[i] = static_cast<T>(static_cast<opmath_t<T>>(dst[i]) +
                                                 static_cast<opmath_t<T>>(gp[pl * oHW + k]));
                     }
                   }
                 });
  });
}

namespace {
// The window of one output clipped to the real input, and the count it is divided by.
struct Window {
  int64_t h0, h1, w0, w1, divisor;
};
// avg_pool2d's window of output (oh, ow): clipped to the padded and to the real input.
Window window(int64_t oh, int64_t ow, int64_t H, int64_t W, const Pool2dParams& p) {
  int64_t h0 = oh * p.stride[0] - p.padding[0], w0 = ow * p.stride[1] - p.padding[1];
  int64_t h1 = std::min(h0 + p.kernel[0], H + p.padding[0]);
  int64_t w1 = std::min(w0 + p.kernel[1], W + p.padding[1]);
  int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0);
  w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, H);
  w1 = std::min(w1, W);
  int64_t divisor = p.count_include_pad ? padded : (h1 - h0) * (w1 - w0);
  if (p.divisor_override > 0) divisor = p.divisor_override;
  return {h0, h1, w0, w1, std::max<int64_t>(divisor, 1)};
}
// adaptive_avg_pool2d's window of output (oh, ow) of (oH, oW) over an (H, W) input.
Window adaptive_window(int64_t oh, int64_t ow, int64_t H, int64_t W, int64_t oH, int64_t oW) {
  Window w{adaptive_start(oh, H, oH), adaptive_end(oh, H, oH), adaptive_start(ow, W, oW),
           adaptive_end(ow, W, oW), 0};
  w.divisor = (w.h1 - w.h0) * (w.w1 - w.w0);
  return w;
}

// out[plane, oh, ow] = the sum of x over window(oh, ow), divided by its divisor (accumulated in A).
template <typename T, typename A, typename WindowFn>
void average_windows(const Tensor& x, const Tensor& out, const WindowFn& window_of) {
  int64_t H = x.size(2), W = x.size(3), oH = out.size(2), oW = out.size(3);
  const T* xp = static_cast<const T*>(x.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  parallel_for(0, planes(x), std::max<int64_t>(1, kGrainSize / std::max<int64_t>(H * W, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t pl = b; pl < e; ++pl) {
                   const T* in = xp + pl * H * W;
                   for (int64_t oh = 0; oh < oH; ++oh)
                     for (int64_t ow = 0; ow < oW; ++ow) {
                       Window w = window_of(oh, ow);
                       A acc = 0;
                       for (int64_t ih = w.h0; ih < w.h1; ++ih)
                         for (int64_t iw = w.w0; iw < w.w1; ++iw)
                           acc += static_cast<A>(in[ih * W + iw]);
                       op[(pl * oH + oh) * oW + ow] =
                           static_cast<T>(acc / static_cast<A>(w.divisor));
                     }
                 }
               });
}

// The backward of average_windows: each output's gradient / divisor added over its window.
template <typename T, typename WindowFn>
void scatter_windows(const Tensor& grad_out, const Tensor& grad_x, const WindowFn& window_of) {
  using A = opmath_t<T>;
  int64_t H = grad_x.size(2), W = grad_x.size(3), oH = grad_out.size(2), oW = grad_out.size(3);
  const T* gp = static_cast<const T*>(grad_out.data_ptr());
  T* gx = static_cast<T*>(grad_x.data_ptr());
  parallel_for(0, planes(grad_x), std::max<int64_t>(1, kGrainSize / std::max<int64_t>(H * W, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<A> acc(static_cast<size_t>(H * W));
                 for (int64_t pl = b; pl < e; ++pl) {
                   std::fill(acc.begin(), acc.end(), A(0));
                   for (int64_t oh = 0; oh < oH; ++oh)
                     for (int64_t ow = 0; ow < oW; ++ow) {
                       Window w = window_of(oh, ow);
                       A g =
                           static_cast<A>(gp[(pl * oH + oh) * oW + ow]) / static_cast<A>(w.divisor);
                       for (int64_t ih = w.h0; ih < w.h1; ++ih)
                         for (int64_t iw = w.w0; iw < w.w1; ++iw)
                           acc[static_cast<size_t>(ih * W + iw)] += g;
                     }
                   for (int64_t i = 0; i < H * W; ++i)
                     gx[pl * H * W + i] = static_cast<T>(acc[static_cast<size_t>(i)]);
                 }
               });
}
}  // namespace

void avg_pool2d_cpu(const Tensor& x, const Tensor& out, const Pool2dParams& p) {
  int64_t H = x.size(2), W = x.size(3);
  dispatch_numeric(x.dtype(), "avg_pool2d", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    average_windows<T, pool_acc_t<T>>(
        x, out, [&](int64_t oh, int64_t ow) { return window(oh, ow, H, W, p); });
  });
}

void avg_pool2d_backward_cpu(const Tensor& grad_out, const Tensor& grad_x, const Pool2dParams& p) {
  int64_t H = grad_x.size(2), W = grad_x.size(3);
  dispatch_floating(grad_x.dtype(), "avg_pool2d_backward", [&](auto tag) {
    scatter_windows<EMBER_TYPE(tag)>(
        grad_out, grad_x, [&](int64_t oh, int64_t ow) { return window(oh, ow, H, W, p); });
  });
}

void adaptive_avg_pool2d_cpu(const Tensor& x, const Tensor& out) {
  int64_t H = x.size(2), W = x.size(3), oH = out.size(2), oW = out.size(3);
  dispatch_floating(x.dtype(), "adaptive_avg_pool2d", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    average_windows<T, opmath_t<T>>(
        x, out, [&](int64_t oh, int64_t ow) { return adaptive_window(oh, ow, H, W, oH, oW); });
  });
}

void adaptive_avg_pool2d_backward_cpu(const Tensor& grad_out, const Tensor& grad_x) {
  int64_t H = grad_x.size(2), W = grad_x.size(3), oH = grad_out.size(2), oW = grad_out.size(3);
  dispatch_floating(grad_x.dtype(), "adaptive_avg_pool2d_backward", [&](auto tag) {
    scatter_windows<EMBER_TYPE(tag)>(grad_out, grad_x, [&](int64_t oh, int64_t ow) {
      return adaptive_window(oh, ow, H, W, oH, oW);
    });
  });
}

}  // namespace ember
