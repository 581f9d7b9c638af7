// CUDA max, average and adaptive average pooling over (N, C, H, W): a thread per output element
// forward; backward a thread per input element, gathering from the windows that cover it (no
// atomics: the sums come in a fixed order).
#include <cuda_runtime.h>

#include <limits>

#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/math.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

constexpr int kBlock = 256;

struct PoolGeom {
  int64_t planes, H, W, oH, oW;
  Pool2dParams p;
};

template <typename T>
__global__ void max_pool_kernel(const T* x, T* out, int64_t* indices, PoolGeom g) {
  using A = opmath_t<T>;
  int64_t total = g.planes * g.oH * g.oW;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t ow = k % g.oW, oh = k / g.oW % g.oH, pl = k / (g.oW * g.oH);
    const T* in = x + pl * g.H * g.W;
    A best = std::numeric_limits<A>::lowest();
    if constexpr (std::is_floating_point_v<A>) best = -std::numeric_limits<A>::infinity();
    int64_t bi = -1;
    for (int64_t ki = 0; ki < g.p.kernel[0]; ++ki) {
      int64_t ih = oh * g.p.stride[0] - g.p.padding[0] + ki * g.p.dilation[0];
      if (ih < 0 || ih >= g.H) continue;
      for (int64_t kj = 0; kj < g.p.kernel[1]; ++kj) {
        int64_t iw = ow * g.p.stride[1] - g.p.padding[1] + kj * g.p.dilation[1];
        if (iw < 0 || iw >= g.W) continue;
        A v = static_cast<A>(in[ih * g.W + iw]);
        if (bi < 0 || v > best || math::isnan(v)) {
          best = v;
          bi = ih * g.W + iw;
        }
      }
    }
    out[k] = static_cast<T>(best);
    indices[k] = bi;
  }
}

// A thread per input element gathers the gradients of the outputs whose windows can hold it (rows
// first_window(h).. last; their index says whether it was their maximum): no atomics, so the sums
// come in a fixed order (PyTorch's max_pool_backward_nchw).
__device__ int64_t first_window(int64_t h, int64_t pad, int64_t kernel, int64_t dilation,
                                int64_t stride) {
  int64_t span = (kernel - 1) * dilation + 1;
  return h + pad < span ? 0 : (h + pad - span) / stride + 1;
}
__device__ int64_t past_last_window(int64_t h, int64_t pad, int64_t stride, int64_t pooled) {
  return min((h + pad) / stride + 1, pooled);
}

template <typename T>
__global__ void max_pool_backward_kernel(const T* grad_out, const int64_t* indices, T* grad_x,
                                         PoolGeom g) {
  using A = opmath_t<T>;
  int64_t total = g.planes * g.H * g.W;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t w = k % g.W, h = k / g.W % g.H, pl = k / (g.W * g.H), here = h * g.W + w;
    int64_t out0 = pl * g.oH * g.oW;
    int64_t ph0 = first_window(h, g.p.padding[0], g.p.kernel[0], g.p.dilation[0], g.p.stride[0]);
    int64_t ph1 = past_last_window(h, g.p.padding[0], g.p.stride[0], g.oH);
    int64_t pw0 = first_window(w, g.p.padding[1], g.p.kernel[1], g.p.dilation[1], g.p.stride[1]);
    int64_t pw1 = past_last_window(w, g.p.padding[1], g.p.stride[1], g.oW);
    A acc = 0;
    for (int64_t ph = ph0; ph < ph1; ++ph)
      for (int64_t pw = pw0; pw < pw1; ++pw) {
        int64_t o = out0 + ph * g.oW + pw;
        if (indices[o] == here) acc += static_cast<A>(grad_out[o]);
      }
    grad_x[k] = static_cast<T>(acc);
  }
}

__device__ void window(int64_t oh, int64_t ow, const PoolGeom& g, int64_t& h0, int64_t& h1,
                       int64_t& w0, int64_t& w1, int64_t& divisor) {
  h0 = oh * g.p.stride[0] - g.p.padding[0];
  w0 = ow * g.p.stride[1] - g.p.padding[1];
  h1 = min(h0 + g.p.kernel[0], g.H + g.p.padding[0]);
  w1 = min(w0 + g.p.kernel[1], g.W + g.p.padding[1]);
  int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = max(h0, int64_t{0});
  w0 = max(w0, int64_t{0});
  h1 = min(h1, g.H);
  w1 = min(w1, g.W);
  divisor = g.p.count_include_pad ? padded : (h1 - h0) * (w1 - w0);
  if (g.p.divisor_override > 0) divisor = g.p.divisor_override;
  if (divisor < 1) divisor = 1;
}

template <typename T>
__global__ void avg_pool_kernel(const T* x, T* out, PoolGeom g) {
  using A = pool_acc_t<T>;
  int64_t total = g.planes * g.oH * g.oW;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t ow = k % g.oW, oh = k / g.oW % g.oH, pl = k / (g.oW * g.oH);
    int64_t h0, h1, w0, w1, divisor;
    window(oh, ow, g, h0, h1, w0, w1, divisor);
    const T* in = x + pl * g.H * g.W;
    A acc = 0;
    for (int64_t ih = h0; ih < h1; ++ih)
      for (int64_t iw = w0; iw < w1; ++iw) acc += static_cast<A>(in[ih * g.W + iw]);
    out[k] = static_cast<T>(acc / static_cast<A>(divisor));
  }
}

// Each input element sums the gradients of the windows that contain it.
template <typename T>
__global__ void avg_pool_backward_kernel(const T* grad_out, T* grad_x, PoolGeom g) {
  using A = opmath_t<T>;
  int64_t total = g.planes * g.H * g.W;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t iw = k % g.W, ih = k / g.W % g.H, pl = k / (g.W * g.H);
    // Windows oh with oh*s - pad <= ih < oh*s - pad + kernel.
    int64_t oh_lo =
        max(int64_t{0}, (ih + g.p.padding[0] - g.p.kernel[0] + g.p.stride[0]) / g.p.stride[0]);
    int64_t oh_hi = min(g.oH - 1, (ih + g.p.padding[0]) / g.p.stride[0]);
    int64_t ow_lo =
        max(int64_t{0}, (iw + g.p.padding[1] - g.p.kernel[1] + g.p.stride[1]) / g.p.stride[1]);
    int64_t ow_hi = min(g.oW - 1, (iw + g.p.padding[1]) / g.p.stride[1]);
    A acc = 0;
    for (int64_t oh = oh_lo; oh <= oh_hi; ++oh)
      for (int64_t ow = ow_lo; ow <= ow_hi; ++ow) {
        int64_t h0, h1, w0, w1, divisor;
        window(oh, ow, g, h0, h1, w0, w1, divisor);
        if (ih < h0 || ih >= h1 || iw < w0 || iw >= w1) continue;
        acc += static_cast<A>(grad_out[(pl * g.oH + oh) * g.oW + ow]) / static_cast<A>(divisor);
      }
    grad_x[k] = static_cast<T>(acc);
  }
}

// Adaptive average pooling: a thread per output forward; backward a thread per input element
// that gathers from the windows containing it (deterministic).
template <typename T>
__global__ void adaptive_avg_pool_kernel(const T* x, T* out, PoolGeom g) {
  using A = opmath_t<T>;
  int64_t total = g.planes * g.oH * g.oW;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t ow = k % g.oW, oh = k / g.oW % g.oH, pl = k / (g.oW * g.oH);
    int64_t h0 = adaptive_start(oh, g.H, g.oH), h1 = adaptive_end(oh, g.H, g.oH);
    int64_t w0 = adaptive_start(ow, g.W, g.oW), w1 = adaptive_end(ow, g.W, g.oW);
    const T* in = x + pl * g.H * g.W;
    A acc = 0;
    for (int64_t ih = h0; ih < h1; ++ih)
      for (int64_t iw = w0; iw < w1; ++iw) acc += static_cast<A>(in[ih * g.W + iw]);
    out[k] = static_cast<T>(acc / static_cast<A>((h1 - h0) * (w1 - w0)));
  }
}

template <typename T>
__global__ void adaptive_avg_pool_backward_kernel(const T* grad_out, T* grad_x, PoolGeom g) {
  using A = opmath_t<T>;
  int64_t total = g.planes * g.H * g.W;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t iw = k % g.W, ih = k / g.W % g.H, pl = k / (g.W * g.H);
    // Windows that can contain (ih, iw); each is checked, the range may hold one too many.
    int64_t oh_lo = ih * g.oH / g.H, oh_hi = min(g.oH, ((ih + 1) * g.oH + g.H - 1) / g.H);
    int64_t ow_lo = iw * g.oW / g.W, ow_hi = min(g.oW, ((iw + 1) * g.oW + g.W - 1) / g.W);
    A acc = 0;
    for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
      int64_t h0 = adaptive_start(oh, g.H, g.oH), h1 = adaptive_end(oh, g.H, g.oH);
      if (ih < h0 || ih >= h1) continue;
      for (int64_t ow = ow_lo; ow < ow_hi; ++ow) {
        int64_t w0 = adaptive_start(ow, g.W, g.oW), w1 = adaptive_end(ow, g.W, g.oW);
        if (iw < w0 || iw >= w1) continue;
        acc += static_cast<A>(grad_out[(pl * g.oH + oh) * g.oW + ow]) /
               static_cast<A>((h1 - h0) * (w1 - w0));
      }
    }
    grad_x[k] = static_cast<T>(acc);
  }
}

PoolGeom geom(const Tensor& x, const Tensor& out, const Pool2dParams& p) {
  return {x.size(0) * x.size(1), x.size(2), x.size(3), out.size(2), out.size(3), p};
}

}  // namespace

void max_pool2d_cuda(const Tensor& x, const Tensor& out, const Tensor& indices,
                     const Pool2dParams& p) {
  if (out.numel() == 0) return;
  PoolGeom g = geom(x, out, p);
  cuda::LaunchScope launch(x.device().index());
  dispatch_numeric(x.dtype(), "max_pool2d", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    max_pool_kernel<T><<<cuda::grid_for(out.numel(), kBlock), kBlock, 0, launch.stream>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<T*>(out.data_ptr()),
        static_cast<int64_t*>(indices.data_ptr()), g);
    EMBER_CUDA_LAUNCH_CHECK("max_pool2d");
  });
}

void max_pool2d_backward_cuda(const Tensor& grad_out, const Tensor& indices, const Tensor& grad_x,
                              const Pool2dParams& p) {
  if (grad_x.numel() == 0) return;
  PoolGeom g = geom(grad_x, grad_out, p);
  cuda::LaunchScope launch(grad_x.device().index());
  dispatch_floating(grad_x.dtype(), "max_pool2d_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    max_pool_backward_kernel<T>
        <<<cuda::grid_for(grad_x.numel(), kBlock), kBlock, 0, launch.stream>>>(
            static_cast<const T*>(grad_out.data_ptr()),
            static_cast<const int64_t*>(indices.data_ptr()), static_cast<T*>(grad_x.data_ptr()), g);
    EMBER_CUDA_LAUNCH_CHECK("max_pool2d_backward");
  });
}

void avg_pool2d_cuda(const Tensor& x, const Tensor& out, const Pool2dParams& p) {
  if (out.numel() == 0) return;
  PoolGeom g = geom(x, out, p);
  cuda::LaunchScope launch(x.device().index());
  dispatch_numeric(x.dtype(), "avg_pool2d", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    avg_pool_kernel<T><<<cuda::grid_for(out.numel(), kBlock), kBlock, 0, launch.stream>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<T*>(out.data_ptr()), g);
    EMBER_CUDA_LAUNCH_CHECK("avg_pool2d");
  });
}

void avg_pool2d_backward_cuda(const Tensor& grad_out, const Tensor& grad_x, const Pool2dParams& p) {
  if (grad_x.numel() == 0) return;
  PoolGeom g = geom(grad_x, grad_out, p);
  cuda::LaunchScope launch(grad_x.device().index());
  dispatch_floating(grad_x.dtype(), "avg_pool2d_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    avg_pool_backward_kernel<T>
        <<<cuda::grid_for(grad_x.numel(), kBlock), kBlock, 0, launch.stream>>>(
            static_cast<const T*>(grad_out.data_ptr()), static_cast<T*>(grad_x.data_ptr()), g);
    EMBER_CUDA_LAUNCH_CHECK("avg_pool2d_backward");
  });
}

void adaptive_avg_pool2d_cuda(const Tensor& x, const Tensor& out) {
  if (out.numel() == 0) return;
  PoolGeom g = geom(x, out, Pool2dParams{});
  cuda::LaunchScope launch(x.device().index());
  dispatch_floating(x.dtype(), "adaptive_avg_pool2d", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    adaptive_avg_pool_kernel<T><<<cuda::grid_for(out.numel(), kBlock), kBlock, 0, launch.stream>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<T*>(out.data_ptr()), g);
    EMBER_CUDA_LAUNCH_CHECK("adaptive_avg_pool2d");
  });
}

void adaptive_avg_pool2d_backward_cuda(const Tensor& grad_out, const Tensor& grad_x) {
  if (grad_x.numel() == 0) return;
  PoolGeom g = geom(grad_x, grad_out, Pool2dParams{});
  cuda::LaunchScope launch(grad_x.device().index());
  dispatch_floating(grad_x.dtype(), "adaptive_avg_pool2d_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    adaptive_avg_pool_backward_kernel<T>
        <<<cuda::grid_for(grad_x.numel(), kBlock), kBlock, 0, launch.stream>>>(
            static_cast<const T*>(grad_out.data_ptr()), static_cast<T*>(grad_x.data_ptr()), g);
    EMBER_CUDA_LAUNCH_CHECK("adaptive_avg_pool2d_backward");
  });
}

}  // namespace ember
