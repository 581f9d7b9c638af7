// CUDA 2-D convolution: through cuDNN where ember has it and it is enabled (backend/cudnn.h); else,
// and where cuDNN has no algorithm, as im2col + cuBLAS: per chunk of samples, columns (K x P per
// sample) are built by a kernel and multiplied by the weights in one strided-batched GEMM;
// backward uses the transposed products and a gather-style col2im (each input element sums what
// it fed, no atomics). K = C/groups * kH * kW, P = oH * oW.
#include <cuda_runtime.h>

#include <algorithm>

#include "ember/backend/conv_layout.h"
#include "ember/backend/cuda/blas.h"
#include "ember/backend/cuda/block_reduce.cuh"
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/cudnn.h"
#include "ember/backend/functors/reduce.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

// cols[s][r][q] (s < nb, r < K, q < P): the input value at kernel position r of output q.
template <typename T>
__global__ void im2col_kernel(const T* x, T* cols, ConvLayout g, int64_t n0, int64_t nb,
                              int64_t group) {
  int64_t total = nb * g.K * g.P;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t q = i % g.P, r = i / g.P % g.K, s = i / (g.P * g.K);
    int64_t kj = r % g.kw, ki = r / g.kw % g.kh, c = r / (g.kw * g.kh);
    int64_t oh = q / g.oW, ow = q % g.oW;
    int64_t ih = oh * g.sh - g.ph + ki * g.dh, iw = ow * g.sw - g.pw + kj * g.dw;
    T v = T(0.0f);
    if (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W)
      v = x[(((n0 + s) * g.C + group * g.Cg + c) * g.H + ih) * g.W + iw];
    cols[i] = v;
  }
}

// The transpose of im2col: grad_x[n][c][ih][iw] = sum of dcols over the positions it fed.
template <typename T>
__global__ void col2im_kernel(const T* dcols, T* gx, ConvLayout g, int64_t n0, int64_t nb,
                              int64_t group) {
  using A = opmath_t<T>;
  int64_t total = nb * g.Cg * g.H * g.W;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t iw = i % g.W, ih = i / g.W % g.H, c = i / (g.W * g.H) % g.Cg,
            s = i / (g.W * g.H * g.Cg);
    A acc = 0;
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      int64_t th = ih + g.ph - ki * g.dh;
      if (th < 0 || th % g.sh) continue;
      int64_t oh = th / g.sh;
      if (oh >= g.oH) continue;
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        int64_t tw = iw + g.pw - kj * g.dw;
        if (tw < 0 || tw % g.sw) continue;
        int64_t ow = tw / g.sw;
        if (ow >= g.oW) continue;
        int64_t r = (c * g.kh + ki) * g.kw + kj;
        acc += static_cast<A>(dcols[(s * g.K + r) * g.P + oh * g.oW + ow]);
      }
    }
    gx[(((n0 + s) * g.C + group * g.Cg + c) * g.H + ih) * g.W + iw] = static_cast<T>(acc);
  }
}

// gb[o] = the sum of gout (N, O, P) over samples and positions, a block per channel: each warp
// reads consecutive positions, where a reduction over dims (0, 2, 3) would first copy gout into
// rows.
template <typename T>
__global__ void bias_grad_kernel(const T* gout, T* gb, int64_t N, int64_t O, int64_t P) {
  using A = opmath_t<T>;
  for (int64_t o = blockIdx.x; o < O; o += gridDim.x) {
    A acc = 0;
    for (int64_t j = threadIdx.x; j < N * P; j += blockDim.x)
      acc += static_cast<A>(gout[(j / P * O + o) * P + j % P]);
    acc = cuda::block_reduce<A>(acc, SumReducer<A>());
    if (threadIdx.x == 0) gb[o] = static_cast<T>(acc);
  }
}

// Samples per chunk: the columns of a chunk stay within ~256 MiB.
int64_t chunk(const ConvLayout& g, size_t item) {
  int64_t per = std::max<int64_t>(1, g.K * g.P * static_cast<int64_t>(item));
  return std::clamp<int64_t>((int64_t{256} << 20) / per, 1, std::max<int64_t>(g.N, 1));
}

// out = conv2d(x, w) without cuDNN: im2col of a chunk of samples, then one batched GEMM per group.
void im2col_forward(const Tensor& x, const Tensor& w, const Tensor& out, const ConvLayout& g,
                    cudaStream_t stream) {
  int device = x.device().index();
  int64_t nb = chunk(g, x.element_size());
  Tensor cols = empty({nb, g.K, g.P}, x.options());
  dispatch_floating(x.dtype(), "conv2d", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    for (int64_t n0 = 0; n0 < g.N; n0 += nb) {
      int64_t n = std::min(nb, g.N - n0);
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        im2col_kernel<T>
            <<<cuda::grid_for(n * g.K * g.P, cuda::kThreads), cuda::kThreads, 0, stream>>>(
                static_cast<const T*>(x.data_ptr()), static_cast<T*>(cols.data_ptr()), g, n0, n,
                grp);
        EMBER_CUDA_LAUNCH_CHECK("im2col");
        // out[s][grp] (Og x P) = W[grp] (Og x K) @ cols[s] (K x P)
        cuda::gemm_strided_batched(device, x.dtype(), false, false, g.Og, g.P, g.K, 1.0,
                                   static_cast<const T*>(w.data_ptr()) + grp * g.Og * g.K, g.K, 0,
                                   cols.data_ptr(), g.P, g.K * g.P, 0.0,
                                   static_cast<T*>(out.data_ptr()) + (n0 * g.O + grp * g.Og) * g.P,
                                   g.P, g.O * g.P, n);
      }
    }
  });
}

// The gradients of x and w (whichever are defined) without cuDNN: the transposed products per
// chunk of samples, and a gather-style col2im.
void im2col_backward(const Tensor& x, const Tensor& w, const Tensor& gout, const Tensor& gx,
                     const Tensor& gw, const ConvLayout& g, cudaStream_t stream) {
  if (!gx.defined() && !gw.defined()) return;
  int device = x.device().index();
  int64_t nb = chunk(g, x.element_size());
  Tensor cols = empty({nb, g.K, g.P}, x.options());
  Tensor partial = gw.defined() ? empty({nb, g.Og, g.K}, x.options()) : Tensor();
  if (gw.defined()) EMBER_CUDA_CHECK(cudaMemsetAsync(gw.data_ptr(), 0, gw.nbytes(), stream));
  dispatch_floating(x.dtype(), "conv2d_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    for (int64_t n0 = 0; n0 < g.N; n0 += nb) {
      int64_t n = std::min(nb, g.N - n0);
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        const T* G = static_cast<const T*>(gout.data_ptr()) + (n0 * g.O + grp * g.Og) * g.P;
        if (gw.defined()) {
          im2col_kernel<T>
              <<<cuda::grid_for(n * g.K * g.P, cuda::kThreads), cuda::kThreads, 0, stream>>>(
                  static_cast<const T*>(x.data_ptr()), static_cast<T*>(cols.data_ptr()), g, n0, n,
                  grp);
          EMBER_CUDA_LAUNCH_CHECK("im2col");
          // partial[s] (Og x K) = G[s] (Og x P) @ cols[s]^T (P x K)
          cuda::gemm_strided_batched(device, x.dtype(), false, true, g.Og, g.K, g.P, 1.0, G, g.P,
                                     g.O * g.P, cols.data_ptr(), g.P, g.K * g.P, 0.0,
                                     partial.data_ptr(), g.K, g.Og * g.K, n);
          // gw[grp] += sum over s of partial[s]
          Tensor part = Tensor(std::make_shared<TensorImpl>(partial.storage(), Shape{n, g.Og, g.K},
                                                            partial.strides(), 0, partial.dtype(),
                                                            partial.device()));
          Tensor sum = empty({1, g.Og, g.K}, x.options());
          reduce_cuda(ReduceOp::Sum, part, {0}, sum, Tensor());
          Tensor dst = Tensor(std::make_shared<TensorImpl>(
              gw.storage(), Shape{1, g.Og, g.K}, Shape{0, g.K, 1},
              gw.storage_offset() + grp * g.Og * g.K, gw.dtype(), gw.device()));
          TensorIter it(dst, {dst, sum});
          binary_cuda(BinaryOp::Add, it, {});
        }
        if (gx.defined()) {
          // dcols[s] (K x P) = W[grp]^T (K x Og) @ G[s] (Og x P)
          cuda::gemm_strided_batched(device, x.dtype(), true, false, g.K, g.P, g.Og, 1.0,
                                     static_cast<const T*>(w.data_ptr()) + grp * g.Og * g.K, g.K, 0,
                                     G, g.P, g.O * g.P, 0.0, cols.data_ptr(), g.P, g.K * g.P, n);
          col2im_kernel<T>
              <<<cuda::grid_for(n * g.Cg * g.H * g.W, cuda::kThreads), cuda::kThreads, 0, stream>>>(
                  static_cast<const T*>(cols.data_ptr()), static_cast<T*>(gx.data_ptr()), g, n0, n,
                  grp);
          EMBER_CUDA_LAUNCH_CHECK("col2im");
        }
      }
    }
  });
}

}  // namespace

void conv2d_cuda(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& out,
                 const Conv2dParams& p) {
  if (out.numel() == 0) return;
  ConvLayout g = conv_layout(x, w, out, p);
  int device = x.device().index();
  cuda::LaunchScope launch(device);
  cudaStream_t stream = launch.stream;
  if (!cudnn::use_for_conv(x, w, out, p) || !cudnn::conv_forward(x, w, out, p))
    im2col_forward(x, w, out, g, stream);
  if (bias.defined()) {
    Tensor b =
        Tensor(std::make_shared<TensorImpl>(bias.storage(), Shape{1, g.O, 1, 1}, Shape{0, 1, 0, 0},
                                            bias.storage_offset(), bias.dtype(), bias.device()));
    TensorIter it(out, {out, b});
    binary_cuda(BinaryOp::Add, it, {});
  }
}

void conv2d_backward_cuda(const Tensor& x, const Tensor& w, const Tensor& gout, const Tensor& gx,
                          const Tensor& gw, const Tensor& gb, const Conv2dParams& p) {
  ConvLayout g = conv_layout(x, w, gout, p);
  int device = x.device().index();
  cuda::LaunchScope launch(device);
  cudaStream_t stream = launch.stream;
  if (gb.defined()) {
    dispatch_floating(gb.dtype(), "conv2d_backward", [&](auto tag) {
      using T = EMBER_TYPE(tag);
      bias_grad_kernel<T><<<cuda::grid_for(g.O, 1), cuda::kThreads, 0, stream>>>(
          static_cast<const T*>(gout.data_ptr()), static_cast<T*>(gb.data_ptr()), g.N, g.O, g.P);
      EMBER_CUDA_LAUNCH_CHECK("conv2d bias gradient");
    });
  }
  // Whichever gradient cuDNN has no algorithm for runs below, on ember's kernels.
  Tensor gx_left = gx, gw_left = gw;
  if (cudnn::use_for_conv(x, w, gout, p)) {
    if (gx.defined() && cudnn::conv_backward_data(gx, w, gout, p)) gx_left = Tensor();
    if (gw.defined() && cudnn::conv_backward_filter(x, gw, gout, p)) gw_left = Tensor();
  }
  im2col_backward(x, w, gout, gx_left, gw_left, g, stream);
}

}  // namespace ember
