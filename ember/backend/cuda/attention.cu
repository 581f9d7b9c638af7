// CUDA fused attention: a thread per query row runs the online softmax over the keys (scores,
// running max and sum, the output accumulated in registers), keeping only the row's log-sum-exp;
// the backward recomputes the weights from it, a thread per key row for dk and dv and a thread
// per query row for dq. Memory grows with L, never L x L. This is the straightforward form of
// FlashAttention (no shared-memory tiling yet): correct first, to be tuned on a GPU.
#include <cuda_runtime.h>

#include <cmath>

#include "ember/backend/cuda/runtime.h"
#include "ember/backend/kernels.h"
#include "ember/backend/wide_floating.h"

namespace ember {
namespace {

constexpr int kThreads = 128;
constexpr int kMaxDim = 256;  // head dims held in registers per thread

template <typename T>
struct MaskView {
  const T* data;
  int64_t sn, si, sj;
  __device__ T at(int64_t n, int64_t i, int64_t j) const {
    return data ? data[n * sn + i * si + j * sj] : T(0);
  }
};

template <typename T>
__device__ T score(const T* q, const T* k, int64_t D, T scale) {
  T s = 0;
  for (int64_t c = 0; c < D; ++c) s += q[c] * k[c];
  return s * scale;
}

template <typename T>
__global__ void attention_forward_kernel(const T* q, const T* k, const T* v, MaskView<T> mask,
                                         AttentionParams p, T* out, T* lse, int64_t N, int64_t Lq,
                                         int64_t Lk, int64_t D, int64_t Dv) {
  int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (row >= N * Lq) return;
  int64_t n = row / Lq, i = row % Lq;
  const T* qi = q + row * D;
  T acc[kMaxDim];
  for (int64_t c = 0; c < Dv; ++c) acc[c] = 0;
  const T ninf = -INFINITY;
  T m = ninf, l = 0;
  const T keep_scale = p.dropout > 0 ? T(1.0 / (1.0 - p.dropout)) : T(1);
  int64_t k_end = p.causal ? (i + 1 < Lk ? i + 1 : Lk) : Lk;
  for (int64_t j = 0; j < k_end; ++j) {
    T s = score(qi, k + (n * Lk + j) * D, D, T(p.scale)) + mask.at(n, i, j);
    T m_new = s > m ? s : m;
    if (m_new == ninf) continue;
    T corr = exp(m - m_new), e = exp(s - m_new);
    l = l * corr + e;
    T w = e;
    if (p.dropout > 0) w = attention_keep(p, n, i, j, Lq, Lk) ? e * keep_scale : T(0);
    const T* vj = v + (n * Lk + j) * Dv;
    for (int64_t c = 0; c < Dv; ++c) acc[c] = acc[c] * corr + w * vj[c];
    m = m_new;
  }
  T inv = l > T(0) ? T(1) / l : T(NAN);
  for (int64_t c = 0; c < Dv; ++c) out[row * Dv + c] = acc[c] * inv;
  lse[row] = m + log(l);
}

// D_i = rowsum(dO_i * O_i).
template <typename T>
__global__ void attention_delta_kernel(const T* out, const T* dout, T* delta, int64_t rows,
                                       int64_t Dv) {
  int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (row >= rows) return;
  T s = 0;
  for (int64_t c = 0; c < Dv; ++c) s += out[row * Dv + c] * dout[row * Dv + c];
  delta[row] = s;
}

// The recomputed weight and the scores' gradient of (n, i, j).
template <typename T>
__device__ void weight_and_grad(const T* q, const T* k, const T* v, const T* dout, const T* lse,
                                const T* delta, const MaskView<T>& mask, const AttentionParams& p,
                                int64_t n, int64_t i, int64_t j, int64_t Lq, int64_t Lk,
                                int64_t D, int64_t Dv, T& w, T& ds) {
  const int64_t qi = n * Lq + i, kj = n * Lk + j;
  T l = lse[qi];
  if ((p.causal && j > i) || isinf(l)) {
    w = ds = 0;
    return;
  }
  T s = score(q + qi * D, k + kj * D, D, T(p.scale)) + mask.at(n, i, j);
  T prob = exp(s - l);
  T dp = 0;
  for (int64_t c = 0; c < Dv; ++c) dp += dout[qi * Dv + c] * v[kj * Dv + c];
  w = prob;
  if (p.dropout > 0) {
    bool keep = attention_keep(p, n, i, j, Lq, Lk);
    T keep_scale = T(1.0 / (1.0 - p.dropout));
    w = keep ? prob * keep_scale : T(0);
    dp = keep ? dp * keep_scale : T(0);
  }
  ds = prob * (dp - delta[qi]);
}

template <typename T>
__global__ void attention_dkdv_kernel(const T* q, const T* k, const T* v, MaskView<T> mask,
                                      AttentionParams p, const T* dout, const T* lse,
                                      const T* delta, T* dk, T* dv, int64_t N, int64_t Lq,
                                      int64_t Lk, int64_t D, int64_t Dv) {
  int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (row >= N * Lk) return;
  int64_t n = row / Lk, j = row % Lk;
  T adk[kMaxDim], adv[kMaxDim];
  for (int64_t c = 0; c < D; ++c) adk[c] = 0;
  for (int64_t c = 0; c < Dv; ++c) adv[c] = 0;
  for (int64_t i = p.causal ? j : 0; i < Lq; ++i) {
    T w, ds;
    weight_and_grad(q, k, v, dout, lse, delta, mask, p, n, i, j, Lq, Lk, D, Dv, w, ds);
    const T* doi = dout + (n * Lq + i) * Dv;
    const T* qi = q + (n * Lq + i) * D;
    for (int64_t c = 0; c < Dv; ++c) adv[c] += w * doi[c];
    for (int64_t c = 0; c < D; ++c) adk[c] += ds * T(p.scale) * qi[c];
  }
  for (int64_t c = 0; c < D; ++c) dk[row * D + c] = adk[c];
  for (int64_t c = 0; c < Dv; ++c) dv[row * Dv + c] = adv[c];
}

template <typename T>
__global__ void attention_dq_kernel(const T* q, const T* k, const T* v, MaskView<T> mask,
                                    AttentionParams p, const T* dout, const T* lse,
                                    const T* delta, T* dq, int64_t N, int64_t Lq, int64_t Lk,
                                    int64_t D, int64_t Dv) {
  int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (row >= N * Lq) return;
  int64_t n = row / Lq, i = row % Lq;
  T adq[kMaxDim];
  for (int64_t c = 0; c < D; ++c) adq[c] = 0;
  int64_t k_end = p.causal ? (i + 1 < Lk ? i + 1 : Lk) : Lk;
  for (int64_t j = 0; j < k_end; ++j) {
    T w, ds;
    weight_and_grad(q, k, v, dout, lse, delta, mask, p, n, i, j, Lq, Lk, D, Dv, w, ds);
    const T* kj = k + (n * Lk + j) * D;
    for (int64_t c = 0; c < D; ++c) adq[c] += ds * T(p.scale) * kj[c];
  }
  for (int64_t c = 0; c < D; ++c) dq[row * D + c] = adq[c];
}

template <typename T>
MaskView<T> mask_view(const Tensor& mask) {
  if (!mask.defined()) return {nullptr, 0, 0, 0};
  return {mask.data_ptr<T>(), mask.stride(0), mask.stride(1), mask.stride(2)};
}

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

void check_dims(const Tensor& q, const Tensor& v) {
  EMBER_CHECK(q.size(2) <= kMaxDim && v.size(2) <= kMaxDim,
              "[scaled_dot_product_attention] ember's CUDA kernel takes head dims up to ", kMaxDim,
              ", got ", q.size(2), " and ", v.size(2));
}

}  // namespace

void attention_cuda(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                    const AttentionParams& p, const Tensor& out, const Tensor& lse) {
  check_dims(q, v);
  const int64_t N = q.size(0), Lq = q.size(1), D = q.size(2), Lk = k.size(1), Dv = v.size(2);
  if (N * Lq == 0) return;
  cuda::LaunchScope scope(q.device().index());
  dispatch_wide_floating(q.dtype(), "scaled_dot_product_attention", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    attention_forward_kernel<T><<<blocks(N * Lq), kThreads, 0, scope.stream>>>(
        q.data_ptr<T>(), k.data_ptr<T>(), v.data_ptr<T>(), mask_view<T>(mask), p,
        out.data_ptr<T>(), lse.data_ptr<T>(), N, Lq, Lk, D, Dv);
    EMBER_CUDA_LAUNCH_CHECK("attention_forward");
  });
}

void attention_backward_cuda(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                             const AttentionParams& p, const Tensor& out, const Tensor& lse,
                             const Tensor& dout, const Tensor& dq, const Tensor& dk,
                             const Tensor& dv) {
  check_dims(q, v);
  const int64_t N = q.size(0), Lq = q.size(1), D = q.size(2), Lk = k.size(1), Dv = v.size(2);
  if (N == 0) return;
  cuda::LaunchScope scope(q.device().index());
  dispatch_wide_floating(q.dtype(), "scaled_dot_product_attention_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    Tensor delta = empty({N * Lq}, lse.options());
    if (N * Lq > 0) {
      attention_delta_kernel<T><<<blocks(N * Lq), kThreads, 0, scope.stream>>>(
          out.data_ptr<T>(), dout.data_ptr<T>(), delta.data_ptr<T>(), N * Lq, Dv);
      EMBER_CUDA_LAUNCH_CHECK("attention_delta");
      attention_dq_kernel<T><<<blocks(N * Lq), kThreads, 0, scope.stream>>>(
          q.data_ptr<T>(), k.data_ptr<T>(), v.data_ptr<T>(), mask_view<T>(mask), p,
          dout.data_ptr<T>(), lse.data_ptr<T>(), delta.data_ptr<T>(), dq.data_ptr<T>(), N, Lq, Lk,
          D, Dv);
      EMBER_CUDA_LAUNCH_CHECK("attention_dq");
    }
    if (N * Lk > 0) {
      attention_dkdv_kernel<T><<<blocks(N * Lk), kThreads, 0, scope.stream>>>(
          q.data_ptr<T>(), k.data_ptr<T>(), v.data_ptr<T>(), mask_view<T>(mask), p,
          dout.data_ptr<T>(), lse.data_ptr<T>(), delta.data_ptr<T>(), dk.data_ptr<T>(),
          dv.data_ptr<T>(), N, Lq, Lk, D, Dv);
      EMBER_CUDA_LAUNCH_CHECK("attention_dkdv");
    }
  });
}

}  // namespace ember
