// CUDA layer norm over the rows of a contiguous (M, N) tensor: a block per row for the forward and
// the input gradient (block reductions of the row's sums), a thread per column for the weight and
// bias gradients. The per-element math is backend/functors/layer_norm.h.
#include <cuda_runtime.h>

#include "ember/backend/cuda/block_reduce.cuh"
#include "ember/backend/cuda/runtime.h"
#include "ember/backend/functors/layer_norm.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

constexpr int kBlock = 256;

template <typename A>
struct Sum {
  __device__ static A identity() { return A(0); }
  __device__ A operator()(A a, A b) const { return a + b; }
};

// The block-wide sum of v, valid in every thread.
template <typename A>
__device__ A row_sum(A v) {
  __shared__ A total;
  A s = cuda::block_reduce(v, Sum<A>());
  if (threadIdx.x == 0) total = s;
  __syncthreads();
  A out = total;
  __syncthreads();
  return out;
}

template <typename T>
__global__ void layer_norm_rows(const T* x, const T* w, const T* b, T* y, opmath_t<T>* mean,
                                opmath_t<T>* rstd, int64_t N, double eps) {
  using A = opmath_t<T>;
  const int64_t r = blockIdx.x;
  const T* row = x + r * N;
  A s = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) s += static_cast<A>(row[i]);
  A m = row_sum(s) / static_cast<A>(N);
  A ss = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    A d = static_cast<A>(row[i]) - m;
    ss += d * d;
  }
  A rs = rsqrt(row_sum(ss) / static_cast<A>(N) + static_cast<A>(eps));
  if (threadIdx.x == 0) {
    mean[r] = m;
    rstd[r] = rs;
  }
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x)
    y[r * N + i] = static_cast<T>(layer_norm_forward<A>(
        static_cast<A>(row[i]), m, rs, w ? static_cast<A>(w[i]) : A(1),
        b ? static_cast<A>(b[i]) : A(0)));
}

template <typename T>
__global__ void layer_norm_input_grad(const T* dy, const T* x, const opmath_t<T>* mean,
                                      const opmath_t<T>* rstd, const T* w, T* dx, int64_t N) {
  using A = opmath_t<T>;
  const int64_t r = blockIdx.x;
  A m = mean[r], rs = rstd[r];
  A s1 = 0, s2 = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    A dyw = static_cast<A>(dy[r * N + i]) * (w ? static_cast<A>(w[i]) : A(1));
    s1 += dyw;
    s2 += dyw * (static_cast<A>(x[r * N + i]) - m) * rs;
  }
  A sum_dyw = row_sum(s1), sum_dyw_xhat = row_sum(s2);
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    A dyw = static_cast<A>(dy[r * N + i]) * (w ? static_cast<A>(w[i]) : A(1));
    A xhat = (static_cast<A>(x[r * N + i]) - m) * rs;
    dx[r * N + i] =
        static_cast<T>(layer_norm_backward<A>(dyw, xhat, rs, sum_dyw, sum_dyw_xhat, A(N)));
  }
}

template <typename T>
__global__ void layer_norm_param_grads(const T* dy, const T* x, const opmath_t<T>* mean,
                                       const opmath_t<T>* rstd, T* dw, T* db, int64_t M,
                                       int64_t N) {
  using A = opmath_t<T>;
  int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (c >= N) return;
  A sw = 0, sb = 0;
  for (int64_t r = 0; r < M; ++r) {
    A g = static_cast<A>(dy[r * N + c]);
    sw += g * (static_cast<A>(x[r * N + c]) - mean[r]) * rstd[r];
    sb += g;
  }
  if (dw) dw[c] = static_cast<T>(sw);
  if (db) db[c] = static_cast<T>(sb);
}

}  // namespace

void layer_norm_cuda(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                     const Tensor& y, const Tensor& mean, const Tensor& rstd) {
  const int64_t N = x.size(-1), M = N == 0 ? 0 : x.numel() / N;
  if (M == 0) return;
  cuda::LaunchScope scope(x.device().index());
  dispatch_floating(x.dtype(), "layer_norm", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = opmath_t<T>;
    layer_norm_rows<T><<<static_cast<unsigned>(M), kBlock, 0, scope.stream>>>(
        x.data_ptr<T>(), weight.defined() ? weight.data_ptr<T>() : nullptr,
        bias.defined() ? bias.data_ptr<T>() : nullptr, y.data_ptr<T>(), mean.data_ptr<A>(),
        rstd.data_ptr<A>(), N, eps);
    EMBER_CUDA_LAUNCH_CHECK("layer_norm_rows");
  });
}

void layer_norm_backward_cuda(const Tensor& dy, const Tensor& x, const Tensor& mean,
                              const Tensor& rstd, const Tensor& weight, const Tensor& dx,
                              const Tensor& dweight, const Tensor& dbias) {
  const int64_t N = x.size(-1), M = N == 0 ? 0 : x.numel() / N;
  if (M == 0) return;
  cuda::LaunchScope scope(x.device().index());
  dispatch_floating(x.dtype(), "layer_norm_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = opmath_t<T>;
    if (dx.defined()) {
      layer_norm_input_grad<T><<<static_cast<unsigned>(M), kBlock, 0, scope.stream>>>(
          dy.data_ptr<T>(), x.data_ptr<T>(), mean.data_ptr<A>(), rstd.data_ptr<A>(),
          weight.defined() ? weight.data_ptr<T>() : nullptr, dx.data_ptr<T>(), N);
      EMBER_CUDA_LAUNCH_CHECK("layer_norm_input_grad");
    }
    if (dweight.defined() || dbias.defined()) {
      unsigned blocks = static_cast<unsigned>((N + kBlock - 1) / kBlock);
      layer_norm_param_grads<T><<<blocks, kBlock, 0, scope.stream>>>(
          dy.data_ptr<T>(), x.data_ptr<T>(), mean.data_ptr<A>(), rstd.data_ptr<A>(),
          dweight.defined() ? dweight.data_ptr<T>() : nullptr,
          dbias.defined() ? dbias.data_ptr<T>() : nullptr, M, N);
      EMBER_CUDA_LAUNCH_CHECK("layer_norm_param_grads");
    }
  });
}

}  // namespace ember
