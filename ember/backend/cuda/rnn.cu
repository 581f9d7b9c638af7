// CUDA recurrent cells over one time step: a thread per (row, unit), the per-element math from
// backend/functors/rnn.h (the same the CPU loop runs).
#include <cuda_runtime.h>

#include "ember/backend/cuda/runtime.h"
#include "ember/backend/functors/rnn.h"
#include "ember/backend/kernels.h"
#include "ember/backend/wide_floating.h"

namespace ember {
namespace {

constexpr int kBlock = 256;

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }

template <typename T>
__global__ void lstm_cell_kernel(T* g, const T* cp, const T* hp, T* co, T* ho, const bool* m,
                                 int64_t B, int64_t H) {
  int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= B * H) return;
  int64_t b = k / H, j = k % H;
  if (m && !m[b]) {
    co[k] = cp[k];
    ho[k] = hp[k];
    return;
  }
  T* gr = g + b * 4 * H;
  rnn::lstm_forward<T>(gr[j], gr[H + j], gr[2 * H + j], gr[3 * H + j], cp[k], co[k], ho[k]);
}

template <typename T>
__global__ void lstm_cell_backward_kernel(const T* g, const T* cp, const T* co, const T* dh,
                                          T* dc, T* dg, const bool* m, int64_t B, int64_t H) {
  int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= B * H) return;
  int64_t b = k / H, j = k % H;
  const T* gr = g + b * 4 * H;
  T* dgr = dg + b * 4 * H;
  if (m && !m[b]) {
    dgr[j] = dgr[H + j] = dgr[2 * H + j] = dgr[3 * H + j] = T(0);
    return;
  }
  T dcp;
  rnn::lstm_backward<T>(gr[j], gr[H + j], gr[2 * H + j], gr[3 * H + j], cp[k], co[k], dh[k], dc[k],
                        dgr[j], dgr[H + j], dgr[2 * H + j], dgr[3 * H + j], dcp);
  dc[k] = dcp;
}

template <typename T>
__global__ void gru_cell_kernel(T* x, const T* hh, const T* hp, T* ho, const bool* m, int64_t B,
                                int64_t H) {
  int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= B * H) return;
  int64_t b = k / H, j = k % H;
  if (m && !m[b]) {
    ho[k] = hp[k];
    return;
  }
  T* xr = x + b * 3 * H;
  const T* hr = hh + b * 3 * H;
  ho[k] = rnn::gru_forward<T>(xr[j], xr[H + j], xr[2 * H + j], hr[j], hr[H + j], hr[2 * H + j],
                              hp[k]);
}

template <typename T>
__global__ void gru_cell_backward_kernel(const T* g, const T* hh, const T* hp, const T* d, T* dx,
                                         T* dhh, T* dhp, const bool* m, int64_t B, int64_t H) {
  int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= B * H) return;
  int64_t b = k / H, j = k % H;
  T* dxr = dx + b * 3 * H;
  T* dhr = dhh + b * 3 * H;
  if (m && !m[b]) {
    dxr[j] = dxr[H + j] = dxr[2 * H + j] = dhr[j] = dhr[H + j] = dhr[2 * H + j] = T(0);
    dhp[k] = d[k];
    return;
  }
  const T* gr = g + b * 3 * H;
  const T* hr = hh + b * 3 * H;
  T dr, dz, dxn, dhn;
  rnn::gru_backward<T>(gr[j], gr[H + j], gr[2 * H + j], hr[2 * H + j], hp[k], d[k], dr, dz, dxn,
                       dhn, dhp[k]);
  dxr[j] = dhr[j] = dr;
  dxr[H + j] = dhr[H + j] = dz;
  dxr[2 * H + j] = dxn;
  dhr[2 * H + j] = dhn;
}

template <typename T>
__global__ void rnn_cell_kernel(const T* p, const T* hp, T* ho, bool relu, const bool* m,
                                int64_t B, int64_t H) {
  int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= B * H) return;
  if (m && !m[k / H]) {
    ho[k] = hp[k];
    return;
  }
  ho[k] = relu ? (p[k] > T(0) ? p[k] : T(0)) : math::tanh(p[k]);
}

template <typename T>
__global__ void rnn_cell_backward_kernel(const T* ho, const T* d, T* dp, bool relu, const bool* m,
                                         int64_t B, int64_t H) {
  int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= B * H) return;
  if (m && !m[k / H]) {
    dp[k] = T(0);
    return;
  }
  dp[k] = relu ? (ho[k] > T(0) ? d[k] : T(0)) : d[k] * (T(1) - ho[k] * ho[k]);
}

const bool* mask_ptr(const Tensor& mask) { return mask.defined() ? mask.data_ptr<bool>() : nullptr; }

}  // namespace

void lstm_cell_cuda(const Tensor& gates, const Tensor& c_prev, const Tensor& h_prev,
                    const Tensor& c, const Tensor& h, const Tensor& mask) {
  const int64_t B = c.size(0), H = c.size(1);
  if (B * H == 0) return;
  cuda::LaunchScope scope(c.device().index());
  dispatch_wide_floating(gates.dtype(), "lstm", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    lstm_cell_kernel<T><<<blocks(B * H), kBlock, 0, scope.stream>>>(
        gates.data_ptr<T>(), c_prev.data_ptr<T>(), h_prev.data_ptr<T>(), c.data_ptr<T>(),
        h.data_ptr<T>(), mask_ptr(mask), B, H);
    EMBER_CUDA_LAUNCH_CHECK("lstm_cell");
  });
}

void lstm_cell_backward_cuda(const Tensor& gates, const Tensor& c_prev, const Tensor& c,
                             const Tensor& dh, const Tensor& dc, const Tensor& dgates,
                             const Tensor& mask) {
  const int64_t B = c.size(0), H = c.size(1);
  if (B * H == 0) return;
  cuda::LaunchScope scope(c.device().index());
  dispatch_wide_floating(gates.dtype(), "lstm_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    lstm_cell_backward_kernel<T><<<blocks(B * H), kBlock, 0, scope.stream>>>(
        gates.data_ptr<T>(), c_prev.data_ptr<T>(), c.data_ptr<T>(), dh.data_ptr<T>(),
        dc.data_ptr<T>(), dgates.data_ptr<T>(), mask_ptr(mask), B, H);
    EMBER_CUDA_LAUNCH_CHECK("lstm_cell_backward");
  });
}

void gru_cell_cuda(const Tensor& gx, const Tensor& gh, const Tensor& h_prev, const Tensor& h,
                   const Tensor& mask) {
  const int64_t B = h.size(0), H = h.size(1);
  if (B * H == 0) return;
  cuda::LaunchScope scope(h.device().index());
  dispatch_wide_floating(gx.dtype(), "gru", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    gru_cell_kernel<T><<<blocks(B * H), kBlock, 0, scope.stream>>>(
        gx.data_ptr<T>(), gh.data_ptr<T>(), h_prev.data_ptr<T>(), h.data_ptr<T>(),
        mask_ptr(mask), B, H);
    EMBER_CUDA_LAUNCH_CHECK("gru_cell");
  });
}

void gru_cell_backward_cuda(const Tensor& gates, const Tensor& gh, const Tensor& h_prev,
                            const Tensor& dh, const Tensor& dgx, const Tensor& dgh,
                            const Tensor& dh_prev, const Tensor& mask) {
  const int64_t B = h_prev.size(0), H = h_prev.size(1);
  if (B * H == 0) return;
  cuda::LaunchScope scope(h_prev.device().index());
  dispatch_wide_floating(gates.dtype(), "gru_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    gru_cell_backward_kernel<T><<<blocks(B * H), kBlock, 0, scope.stream>>>(
        gates.data_ptr<T>(), gh.data_ptr<T>(), h_prev.data_ptr<T>(), dh.data_ptr<T>(),
        dgx.data_ptr<T>(), dgh.data_ptr<T>(), dh_prev.data_ptr<T>(), mask_ptr(mask), B, H);
    EMBER_CUDA_LAUNCH_CHECK("gru_cell_backward");
  });
}

void rnn_cell_cuda(const Tensor& pre, const Tensor& h_prev, const Tensor& h, bool relu,
                   const Tensor& mask) {
  const int64_t B = h.size(0), H = h.size(1);
  if (B * H == 0) return;
  cuda::LaunchScope scope(h.device().index());
  dispatch_wide_floating(pre.dtype(), "rnn", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    rnn_cell_kernel<T><<<blocks(B * H), kBlock, 0, scope.stream>>>(
        pre.data_ptr<T>(), h_prev.data_ptr<T>(), h.data_ptr<T>(), relu, mask_ptr(mask), B, H);
    EMBER_CUDA_LAUNCH_CHECK("rnn_cell");
  });
}

void rnn_cell_backward_cuda(const Tensor& h, const Tensor& dh, const Tensor& dpre, bool relu,
                            const Tensor& mask) {
  const int64_t B = h.size(0), H = h.size(1);
  if (B * H == 0) return;
  cuda::LaunchScope scope(h.device().index());
  dispatch_wide_floating(h.dtype(), "rnn_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    rnn_cell_backward_kernel<T><<<blocks(B * H), kBlock, 0, scope.stream>>>(
        h.data_ptr<T>(), dh.data_ptr<T>(), dpre.data_ptr<T>(), relu, mask_ptr(mask), B, H);
    EMBER_CUDA_LAUNCH_CHECK("rnn_cell_backward");
  });
}

}  // namespace ember
