#include "ember/backend/cpu/blas.h"

#include <cblas.h>

#include <algorithm>
#include <mutex>

#include "ember/backend/cpu/bf16_kernels.h"
#include "ember/backend/cpu/gemm_dnnl.h"
#include "ember/backend/cpu/thread_pool.h"
#include "ember/backend/kernels.h"
#include "ember/backend/matmul_layout.h"

namespace ember::cpu {

void init_blas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

namespace {

// Splits C into column blocks (or row blocks when C is tall) of at least ~kMinWork flops each
// and runs one BLAS call per block on the pool. T is the element type, S the scalars'.
template <typename T, typename S, typename Gemm>
void gemm_blocks(bool ta, bool tb, int64_t m, int64_t n, int64_t k, S alpha, const T* a,
                 int64_t lda, const T* b, int64_t ldb, S beta, T* c, int64_t ldc, Gemm gemm) {
  init_blas();
  constexpr double kMinWork = 2e6;  // below this a thread hand-off costs more than it saves
  double work = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  int64_t threads = in_parallel_region() ? 1 : get_num_threads();
  // Large products get two blocks per thread, claimed dynamically: a core slowed by another
  // process then costs a block, not half the product.
  int64_t per_thread = work > 1e9 ? 2 : 1;
  int64_t blocks = std::min<int64_t>(threads * per_thread, static_cast<int64_t>(work / kMinWork));
  auto ta_ = ta ? CblasTrans : CblasNoTrans;
  auto tb_ = tb ? CblasTrans : CblasNoTrans;
  if (blocks <= 1) {
    gemm(CblasRowMajor, ta_, tb_, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
         alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
    return;
  }
  bool split_n = n >= m;
  int64_t len = split_n ? n : m;
  parallel_for(0, blocks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t blk = lo; blk < hi; ++blk) {
      // Blocks of 16 columns or rows keep each BLAS call on whole micro-kernel tiles.
      int64_t s = (len * blk / blocks) / 16 * 16,
              e = blk + 1 == blocks ? len : (len * (blk + 1) / blocks) / 16 * 16;
      if (e <= s) continue;
      if (split_n) {
        const T* bb = tb ? b + s * ldb : b + s;
        gemm(CblasRowMajor, ta_, tb_, static_cast<int>(m), static_cast<int>(e - s),
             static_cast<int>(k), alpha, a, static_cast<int>(lda), bb, static_cast<int>(ldb), beta,
             c + s, static_cast<int>(ldc));
      } else {
        const T* aa = ta ? a + s : a + s * lda;
        gemm(CblasRowMajor, ta_, tb_, static_cast<int>(e - s), static_cast<int>(n),
             static_cast<int>(k), alpha, aa, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
             c + s * ldc, static_cast<int>(ldc));
      }
    }
  });
}

}  // namespace

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  // oneDNN's kernels are faster where there is work to amortise a primitive's call (about 10 us);
  // OpenBLAS below that.
  constexpr double kDnnlMinWork = 8e6;
  double work = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (have_dnnl_sgemm() && work >= kDnnlMinWork) {
    gemm_blocks<float, float>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                              [](CBLAS_ORDER, CBLAS_TRANSPOSE ta_, CBLAS_TRANSPOSE tb_, int m_,
                                 int n_, int k_, float al, const float* a_, int lda_,
                                 const float* b_, int ldb_, float be, float* c_, int ldc_) {
                                dnnl_sgemm(ta_ == CblasTrans, tb_ == CblasTrans, m_, n_, k_, al,
                                           a_, lda_, b_, ldb_, be, c_, ldc_);
                              });
    return;
  }
  gemm_blocks<float, float>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, cblas_sgemm);
}

void dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
           int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  gemm_blocks<double, double>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, cblas_dgemm);
}

void bf16gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const BFloat16* a,
              int64_t lda, const BFloat16* b, int64_t ldb, float beta, BFloat16* c, int64_t ldc) {
  gemm_blocks<BFloat16, float>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                               [](CBLAS_ORDER, CBLAS_TRANSPOSE ta_, CBLAS_TRANSPOSE tb_, int m_,
                                  int n_, int k_, float al, const BFloat16* a_, int lda_,
                                  const BFloat16* b_, int ldb_, float be, BFloat16* c_, int ldc_) {
                                 dnnl_bf16_gemm(ta_ == CblasTrans, tb_ == CblasTrans, m_, n_, k_,
                                                al, a_, lda_, b_, ldb_, be, c_, ldc_);
                               });
}

template <typename T>
void complex_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, Complex<T> alpha,
                  const Complex<T>* a, int64_t lda, const Complex<T>* b, int64_t ldb,
                  Complex<T> beta, Complex<T>* c, int64_t ldc) {
  auto call = [](CBLAS_ORDER o, CBLAS_TRANSPOSE ta_, CBLAS_TRANSPOSE tb_, int m_, int n_, int k_,
                 Complex<T> al, const Complex<T>* a_, int lda_, const Complex<T>* b_, int ldb_,
                 Complex<T> be, Complex<T>* c_, int ldc_) {
    if constexpr (std::is_same_v<T, float>)
      cblas_cgemm(o, ta_, tb_, m_, n_, k_, &al, a_, lda_, b_, ldb_, &be, c_, ldc_);
    else
      cblas_zgemm(o, ta_, tb_, m_, n_, k_, &al, a_, lda_, b_, ldb_, &be, c_, ldc_);
  };
  gemm_blocks<Complex<T>, Complex<T>>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, call);
}
template void complex_gemm<float>(bool, bool, int64_t, int64_t, int64_t, Complex<float>,
                                  const Complex<float>*, int64_t, const Complex<float>*, int64_t,
                                  Complex<float>, Complex<float>*, int64_t);
template void complex_gemm<double>(bool, bool, int64_t, int64_t, int64_t, Complex<double>,
                                   const Complex<double>*, int64_t, const Complex<double>*,
                                   int64_t, Complex<double>, Complex<double>*, int64_t);

}  // namespace ember::cpu

namespace ember {
namespace {

template <typename T, typename S, typename G>
void bmm_typed(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta,
               G gemm) {
  MatrixOperand A = blas_operand(a), B = blas_operand(b);
  int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  const T* pa = static_cast<const T*>(A.t.data_ptr());
  const T* pb = static_cast<const T*>(B.t.data_ptr());
  T* pc = static_cast<T*>(out.data_ptr());
  auto one = [&](int64_t i) {
    gemm(A.trans, B.trans, m, n, k, static_cast<S>(alpha), pa + i * A.batch_stride, A.ld,
         pb + i * B.batch_stride, B.ld, static_cast<S>(beta), pc + i * m * n, n);
  };
  if (batch >= get_num_threads() && !in_parallel_region()) {
    parallel_for(0, batch, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) one(i);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i);
  }
}

// Integers multiply and add exactly, wrapping on overflow as PyTorch's integer matmul does
// (through float64 they would saturate or round instead). (batch, m, k) x (batch, k, n).
void bmm_integer(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) {
  Tensor ai = a.to(kInt64).contiguous(), bi = b.to(kInt64).contiguous();
  Tensor o = out.to(kInt64).contiguous();
  int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  const auto* pa = static_cast<const uint64_t*>(ai.data_ptr());
  const auto* pb = static_cast<const uint64_t*>(bi.data_ptr());
  auto* po = static_cast<uint64_t*>(o.data_ptr());
  auto al = static_cast<uint64_t>(static_cast<int64_t>(alpha));
  auto be = static_cast<uint64_t>(static_cast<int64_t>(beta));
  parallel_for(0, batch * m, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * k, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t row = lo; row < hi; ++row) {
                   const uint64_t* ar = pa + row * k;
                   const uint64_t* bb = pb + (row / m) * k * n;
                   uint64_t* orow = po + row * n;
                   for (int64_t j = 0; j < n; ++j) {
                     uint64_t acc = 0;
                     for (int64_t l = 0; l < k; ++l) acc += ar[l] * bb[l * n + j];
                     orow[j] = (beta == 0 ? 0 : be * orow[j]) + al * acc;
                   }
                 }
               });
  TensorIter it(out, {o});
  copy_cpu(it);
}

}  // namespace

void bmm_cpu(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) {
  switch (out.dtype()) {
    case kFloat32:
      return bmm_typed<float, float>(a, b, out, alpha, beta, cpu::sgemm);
    case kFloat64:
      return bmm_typed<double, double>(a, b, out, alpha, beta, cpu::dgemm);
    case kComplex64:
      return bmm_typed<Complex<float>, Complex<float>>(a, b, out, alpha, beta,
                                                       cpu::complex_gemm<float>);
    case kComplex128:
      return bmm_typed<Complex<double>, Complex<double>>(a, b, out, alpha, beta,
                                                         cpu::complex_gemm<double>);
    case kUInt8:
    case kInt8:
    case kInt16:
    case kInt32:
    case kInt64:
      return bmm_integer(a, b, out, alpha, beta);
    case kBFloat16:
      if (cpu::have_bf16_kernels())
        return bmm_typed<BFloat16, float>(a, b, out, alpha, beta, cpu::bf16gemm);
      [[fallthrough]];
    default: {
      // float16, and bfloat16 without bfloat16 kernels, go through float32.
      DType wide = kFloat32;
      Tensor o = out.to(wide);
      bmm_cpu(a.to(wide), b.to(wide), o, alpha, beta);
      TensorIter it(out, {o});
      copy_cpu(it);
    }
  }
}

}  // namespace ember
