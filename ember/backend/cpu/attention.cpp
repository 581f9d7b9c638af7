// CPU fused attention (FlashAttention, Dao et al. 2022; the online softmax of Milakov &
// Gimelshein 2018): for each (batch x head, block of queries), blocks of keys are scored with a
// small GEMM, the running row max and sum rescale the accumulated output, and only the rows'
// log-sum-exp is kept. The backward (FlashAttention-2's order: key blocks outer) recomputes each
// block's weights from it. Work is split over (batch x head, query block) forward and over
// batch x head backward.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/backend/cpu/blas.h"
#include "ember/backend/cpu/thread_pool.h"
#include "ember/backend/functors/math.h"
#include "ember/backend/kernels.h"
#include "ember/backend/wide_floating.h"

namespace ember {
namespace {

constexpr int64_t kBlockQ = 32, kBlockK = 32;

// C (m x n) = alpha op(A) op(B) + beta C for row-major blocks.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cpu::sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cpu::dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The additive mask's value at (n, i, j), 0 without a mask.
template <typename T>
struct Mask {
  const T* data = nullptr;
  int64_t sn = 0, si = 0, sj = 0;
  T at(int64_t n, int64_t i, int64_t j) const {
    return data ? data[n * sn + i * si + j * sj] : T(0);
  }
};

template <typename T>
Mask<T> mask_of(const Tensor& mask) {
  Mask<T> m;
  if (!mask.defined()) return m;
  m.data = mask.data_ptr<T>();
  m.sn = mask.stride(0);
  m.si = mask.stride(1);
  m.sj = mask.stride(2);
  return m;
}

// Scores of a block: S (bq x bk) = scale * Q_blk K_blk^T + mask, -inf where causal hides a key.
template <typename T>
void score_block(const T* q, const T* k, int64_t D, int64_t i0, int64_t bq, int64_t j0, int64_t bk,
                 int64_t n, const Mask<T>& mask, const AttentionParams& p, T* S) {
  gemm(false, true, bq, bk, D, static_cast<T>(p.scale), q + i0 * D, D, k + j0 * D, D, T(0), S, bk);
  if (mask.data)
    for (int64_t a = 0; a < bq; ++a)
      for (int64_t b = 0; b < bk; ++b) S[a * bk + b] += mask.at(n, i0 + a, j0 + b);
  // Causal: only blocks that cross the diagonal hide some of their keys.
  if (!p.causal || j0 + bk - 1 <= i0) return;
  const T ninf = -std::numeric_limits<T>::infinity();
  for (int64_t a = 0; a < bq; ++a)
    for (int64_t b = std::max<int64_t>(0, i0 + a + 1 - j0); b < bk; ++b) S[a * bk + b] = ninf;
}

template <typename T>
void forward(const Tensor& qt, const Tensor& kt, const Tensor& vt, const Tensor& mask_t,
             const AttentionParams& p, const Tensor& out_t, const Tensor& lse_t) {
  const int64_t N = qt.size(0), Lq = qt.size(1), D = qt.size(2), Lk = kt.size(1),
                Dv = vt.size(2);
  const T* q = qt.data_ptr<T>();
  const T* k = kt.data_ptr<T>();
  const T* v = vt.data_ptr<T>();
  T* out = out_t.data_ptr<T>();
  T* lse = lse_t.data_ptr<T>();
  Mask<T> mask = mask_of<T>(mask_t);
  const int64_t qblocks = (Lq + kBlockQ - 1) / kBlockQ;
  const T ninf = -std::numeric_limits<T>::infinity();
  const T keep_scale = p.dropout > 0 ? static_cast<T>(1.0 / (1.0 - p.dropout)) : T(1);
  parallel_for(0, N * qblocks, 1, [&](int64_t lo, int64_t hi) {
    std::vector<T> S(static_cast<size_t>(kBlockQ * kBlockK)), acc(static_cast<size_t>(kBlockQ * Dv)),
        m(static_cast<size_t>(kBlockQ)), l(static_cast<size_t>(kBlockQ));
    for (int64_t task = lo; task < hi; ++task) {
      int64_t n = task / qblocks, i0 = (task % qblocks) * kBlockQ;
      int64_t bq = std::min(kBlockQ, Lq - i0);
      const T *qn = q + n * Lq * D, *kn = k + n * Lk * D, *vn = v + n * Lk * Dv;
      std::fill(acc.begin(), acc.begin() + bq * Dv, T(0));
      std::fill(m.begin(), m.begin() + bq, ninf);
      std::fill(l.begin(), l.begin() + bq, T(0));
      // Causal: keys past the block's last query are hidden for every query in it.
      int64_t k_end = p.causal ? std::min(Lk, i0 + bq) : Lk;
      for (int64_t j0 = 0; j0 < k_end; j0 += kBlockK) {
        int64_t bk = std::min(kBlockK, k_end - j0);
        score_block(qn, kn, D, i0, bq, j0, bk, n, mask, p, S.data());
        for (int64_t a = 0; a < bq; ++a) {
          T* s = S.data() + a * bk;
          T row_max = ninf;
          for (int64_t b = 0; b < bk; ++b) row_max = std::max(row_max, s[b]);
          T m_new = std::max(m[a], row_max);
          // A row whose every score so far is -inf has no distribution yet: keep it at zero.
          T corr = m_new == ninf ? T(1) : math::exp_nonpositive(m[a] - m_new);
          T sum = 0;
          if (m_new == ninf) {
            std::fill(s, s + bk, T(0));
          } else {
            // Three passes, so that the exponentials vectorise: the sum (a float reduction) and
            // dropout's branch would keep the compiler from it.
            for (int64_t b = 0; b < bk; ++b) s[b] = math::exp_nonpositive(s[b] - m_new);
            for (int64_t b = 0; b < bk; ++b) sum += s[b];
            if (p.dropout > 0)
              for (int64_t b = 0; b < bk; ++b)
                s[b] = attention_keep(p, n, i0 + a, j0 + b, Lq, Lk) ? s[b] * keep_scale : T(0);
          }
          l[a] = l[a] * corr + sum;
          m[a] = m_new;
          T* ac = acc.data() + a * Dv;
          if (corr != T(1))
            for (int64_t c = 0; c < Dv; ++c) ac[c] *= corr;
        }
        gemm(false, false, bq, Dv, bk, T(1), S.data(), bk, vn + j0 * Dv, Dv, T(1), acc.data(), Dv);
      }
      for (int64_t a = 0; a < bq; ++a) {
        T inv = l[a] > T(0) ? T(1) / l[a] : std::numeric_limits<T>::quiet_NaN();
        T* o = out + (n * Lq + i0 + a) * Dv;
        for (int64_t c = 0; c < Dv; ++c) o[c] = acc[static_cast<size_t>(a * Dv + c)] * inv;
        lse[n * Lq + i0 + a] = m[a] + std::log(l[a]);
      }
    }
  });
}

template <typename T>
void backward(const Tensor& qt, const Tensor& kt, const Tensor& vt, const Tensor& mask_t,
              const AttentionParams& p, const Tensor& out_t, const Tensor& lse_t,
              const Tensor& dout_t, const Tensor& dq_t, const Tensor& dk_t, const Tensor& dv_t) {
  const int64_t N = qt.size(0), Lq = qt.size(1), D = qt.size(2), Lk = kt.size(1),
                Dv = vt.size(2);
  const T* q = qt.data_ptr<T>();
  const T* k = kt.data_ptr<T>();
  const T* v = vt.data_ptr<T>();
  const T* out = out_t.data_ptr<T>();
  const T* lse = lse_t.data_ptr<T>();
  const T* dout = dout_t.data_ptr<T>();
  T* dq = dq_t.data_ptr<T>();
  T* dk = dk_t.data_ptr<T>();
  T* dv = dv_t.data_ptr<T>();
  Mask<T> mask = mask_of<T>(mask_t);
  const T scale = static_cast<T>(p.scale);
  const T keep_scale = p.dropout > 0 ? static_cast<T>(1.0 / (1.0 - p.dropout)) : T(1);
  parallel_for(0, N, 1, [&](int64_t lo, int64_t hi) {
    std::vector<T> P(static_cast<size_t>(kBlockQ * kBlockK)),
        dP(static_cast<size_t>(kBlockQ * kBlockK)), Dr(static_cast<size_t>(Lq));
    for (int64_t n = lo; n < hi; ++n) {
      const T *qn = q + n * Lq * D, *kn = k + n * Lk * D, *vn = v + n * Lk * Dv;
      const T *on = out + n * Lq * Dv, *don = dout + n * Lq * Dv, *ln = lse + n * Lq;
      T *dqn = dq + n * Lq * D, *dkn = dk + n * Lk * D, *dvn = dv + n * Lk * Dv;
      std::fill(dqn, dqn + Lq * D, T(0));
      std::fill(dkn, dkn + Lk * D, T(0));
      std::fill(dvn, dvn + Lk * Dv, T(0));
      // D_i = rowsum(dO_i * O_i): the softmax backward's per-row term.
      for (int64_t i = 0; i < Lq; ++i) {
        T s = 0;
        for (int64_t c = 0; c < Dv; ++c) s += don[i * Dv + c] * on[i * Dv + c];
        Dr[static_cast<size_t>(i)] = s;
      }
      for (int64_t j0 = 0; j0 < Lk; j0 += kBlockK) {
        int64_t bk = std::min(kBlockK, Lk - j0);
        int64_t i_start = p.causal ? (j0 / kBlockQ) * kBlockQ : 0;  // earlier queries see none
        for (int64_t i0 = i_start; i0 < Lq; i0 += kBlockQ) {
          int64_t bq = std::min(kBlockQ, Lq - i0);
          score_block(qn, kn, D, i0, bq, j0, bk, n, mask, p, P.data());
          for (int64_t a = 0; a < bq; ++a) {
            T* s = P.data() + a * bk;
            T lse_a = ln[i0 + a];
            if (std::isinf(lse_a) && lse_a < 0)  // a row that attends to nothing
              std::fill(s, s + bk, T(0));
            else
              for (int64_t b = 0; b < bk; ++b) s[b] = math::exp_nonpositive(s[b] - lse_a);
          }
          // dP = dO V^T (then dropout's mask and scale); dV += (P with dropout)^T dO.
          gemm(false, true, bq, bk, Dv, T(1), don + i0 * Dv, Dv, vn + j0 * Dv, Dv, T(0), dP.data(),
               bk);
          if (p.dropout > 0) {
            std::vector<T> Pd(P.begin(), P.begin() + bq * bk);
            for (int64_t a = 0; a < bq; ++a)
              for (int64_t b = 0; b < bk; ++b) {
                bool keep = attention_keep(p, n, i0 + a, j0 + b, Lq, Lk);
                size_t x = static_cast<size_t>(a * bk + b);
                Pd[x] = keep ? Pd[x] * keep_scale : T(0);
                dP[x] = keep ? dP[x] * keep_scale : T(0);
              }
            gemm(true, false, bk, Dv, bq, T(1), Pd.data(), bk, don + i0 * Dv, Dv, T(1),
                 dvn + j0 * Dv, Dv);
          } else {
            gemm(true, false, bk, Dv, bq, T(1), P.data(), bk, don + i0 * Dv, Dv, T(1),
                 dvn + j0 * Dv, Dv);
          }
          // dS = P (dP - D) (the scores' gradient, before the scale).
          for (int64_t a = 0; a < bq; ++a)
            for (int64_t b = 0; b < bk; ++b) {
              size_t x = static_cast<size_t>(a * bk + b);
              dP[x] = P[x] * (dP[x] - Dr[static_cast<size_t>(i0 + a)]);
            }
          gemm(false, false, bq, D, bk, scale, dP.data(), bk, kn + j0 * D, D, T(1), dqn + i0 * D,
               D);
          gemm(true, false, bk, D, bq, scale, dP.data(), bk, qn + i0 * D, D, T(1), dkn + j0 * D,
               D);
        }
      }
    }
  });
}

}  // namespace

void attention_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                   const AttentionParams& p, const Tensor& out, const Tensor& lse) {
  dispatch_wide_floating(q.dtype(), "scaled_dot_product_attention",
                         [&](auto tag) { forward<EMBER_TYPE(tag)>(q, k, v, mask, p, out, lse); });
}

void attention_backward_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                            const AttentionParams& p, const Tensor& out, const Tensor& lse,
                            const Tensor& dout, const Tensor& dq, const Tensor& dk,
                            const Tensor& dv) {
  dispatch_wide_floating(q.dtype(), "scaled_dot_product_attention_backward", [&](auto tag) {
    backward<EMBER_TYPE(tag)>(q, k, v, mask, p, out, lse, dout, dq, dk, dv);
  });
}

}  // namespace ember
