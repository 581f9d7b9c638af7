// CPU 2-D convolution: float32 (and bfloat16 on CPUs with bfloat16 instructions) goes to oneDNN
// when ember is built with it (conv_dnnl.cpp, the faster path by the benchmark); other 16-bit
// inputs run in float32 and round at the end; float64, and float32 without oneDNN, run as im2col +
// GEMM. Samples are processed in chunks whose column matrix stays in cache: one GEMM per chunk and
// group, then a copy into NCHW that adds the bias. Chunks run in parallel on the pool (BLAS
// single-threaded inside); with fewer chunks than threads the GEMMs split themselves instead.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "ember/backend/conv_layout.h"
#include "ember/backend/cpu/bf16_kernels.h"
#include "ember/backend/cpu/blas.h"
#include "ember/backend/cpu/conv_dnnl.h"
#include "ember/backend/cpu/thread_pool.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

// Samples per chunk: the column matrix (K x nb*P) of a chunk stays within ~512 KiB.
int64_t chunk_size(const ConvLayout& g, size_t item) {
  int64_t per_sample = std::max<int64_t>(g.K * g.P * static_cast<int64_t>(item), 1);
  return std::clamp<int64_t>((512 << 10) / per_sample, 1, std::max<int64_t>(g.N, 1));
}

// cols (K x nb*P), column s*P + p holds the receptive field of output position p of sample n0+s.
template <typename T>
void im2col(const T* x, const ConvLayout& g, int64_t n0, int64_t nb, int64_t group, T* cols) {
  int64_t ld = nb * g.P;
  for (int64_t c = 0; c < g.Cg; ++c)
    for (int64_t ki = 0; ki < g.kh; ++ki)
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        T* row = cols + ((c * g.kh + ki) * g.kw + kj) * ld;
        for (int64_t s = 0; s < nb; ++s) {
          const T* plane = x + ((n0 + s) * g.C + group * g.Cg + c) * g.H * g.W;
          T* dst = row + s * g.P;
          for (int64_t oh = 0; oh < g.oH; ++oh) {
            int64_t ih = oh * g.sh - g.ph + ki * g.dh;
            T* d = dst + oh * g.oW;
            if (ih < 0 || ih >= g.H) {
              std::fill(d, d + g.oW, T(0));
              continue;
            }
            const T* src = plane + ih * g.W;
            int64_t base = kj * g.dw - g.pw;
            if (g.sw == 1 && base >= 0 && base + g.oW <= g.W) {
              std::memcpy(d, src + base, static_cast<size_t>(g.oW) * sizeof(T));
            } else {
              for (int64_t ow = 0; ow < g.oW; ++ow) {
                int64_t iw = ow * g.sw + base;
                d[ow] = iw >= 0 && iw < g.W ? src[iw] : T(0);
              }
            }
          }
        }
      }
}

// Adds cols (K x nb*P) back into the input gradient (the transpose of im2col).
template <typename T>
void col2im(const T* cols, const ConvLayout& g, int64_t n0, int64_t nb, int64_t group, T* gx) {
  int64_t ld = nb * g.P;
  for (int64_t c = 0; c < g.Cg; ++c)
    for (int64_t ki = 0; ki < g.kh; ++ki)
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const T* row = cols + ((c * g.kh + ki) * g.kw + kj) * ld;
        for (int64_t s = 0; s < nb; ++s) {
          T* plane = gx + ((n0 + s) * g.C + group * g.Cg + c) * g.H * g.W;
          const T* src = row + s * g.P;
          for (int64_t oh = 0; oh < g.oH; ++oh) {
            int64_t ih = oh * g.sh - g.ph + ki * g.dh;
            if (ih < 0 || ih >= g.H) continue;
            T* dst = plane + ih * g.W;
            for (int64_t ow = 0; ow < g.oW; ++ow) {
              int64_t iw = ow * g.sw - g.pw + kj * g.dw;
              if (iw >= 0 && iw < g.W) dst[iw] += src[oh * g.oW + ow];
            }
          }
        }
      }
}

template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    cpu::sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    cpu::dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// Runs body(n0, nb, scratch) over all chunks: in parallel when there are enough of them.
template <typename T, typename F>
void for_chunks(const ConvLayout& g, size_t scratch_elems, F body) {
  int64_t nb = chunk_size(g, sizeof(T));
  int64_t chunks = (g.N + nb - 1) / nb;
  auto run = [&](int64_t lo, int64_t hi) {
    std::vector<T> scratch(scratch_elems * static_cast<size_t>(nb));
    for (int64_t c = lo; c < hi; ++c) {
      int64_t n0 = c * nb;
      body(n0, std::min(nb, g.N - n0), scratch.data());
    }
  };
  if (chunks >= get_num_threads())
    parallel_for(0, chunks, 1, run);
  else
    run(0, chunks);
}

template <typename T>
void conv_forward(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& out,
                  const Conv2dParams& p) {
  ConvLayout g = conv_layout(x, w, out, p);
  const T* xp = static_cast<const T*>(x.data_ptr());
  const T* wp = static_cast<const T*>(w.data_ptr());
  const T* bp = bias.defined() ? static_cast<const T*>(bias.data_ptr()) : nullptr;
  T* op = static_cast<T*>(out.data_ptr());
  // scratch per sample: its columns (K x P) and its GEMM result (Og x P)
  for_chunks<T>(g, static_cast<size_t>((g.K + g.Og) * g.P),
                [&](int64_t n0, int64_t nb, T* scratch) {
                  T* cols = scratch;
                  T* res = scratch + g.K * g.P * nb;
                  int64_t ld = nb * g.P;
                  for (int64_t grp = 0; grp < g.groups; ++grp) {
                    im2col(xp, g, n0, nb, grp, cols);
                    gemm<T>(false, false, g.Og, ld, g.K, T(1), wp + grp * g.Og * g.K, g.K, cols, ld,
                            T(0), res, ld);
                    for (int64_t s = 0; s < nb; ++s)
                      for (int64_t o = 0; o < g.Og; ++o) {
                        T* dst = op + ((n0 + s) * g.O + grp * g.Og + o) * g.P;
                        const T* src = res + o * ld + s * g.P;
                        T b = bp ? bp[grp * g.Og + o] : T(0);
                        for (int64_t q = 0; q < g.P; ++q) dst[q] = src[q] + b;
                      }
                  }
                });
}

template <typename T>
void conv_backward(const Tensor& x, const Tensor& w, const Tensor& gout, const Tensor& gx,
                   const Tensor& gw, const Tensor& gb, const Conv2dParams& p) {
  ConvLayout g = conv_layout(x, w, gout, p);
  const T* xp = static_cast<const T*>(x.data_ptr());
  const T* wp = static_cast<const T*>(w.data_ptr());
  const T* gp = static_cast<const T*>(gout.data_ptr());
  if (gb.defined()) {
    T* gbp = static_cast<T*>(gb.data_ptr());
    for (int64_t o = 0; o < g.O; ++o) {
      double acc = 0;
      for (int64_t n = 0; n < g.N; ++n) {
        const T* src = gp + (n * g.O + o) * g.P;
        T part = 0;
        for (int64_t q = 0; q < g.P; ++q) part += src[q];
        acc += static_cast<double>(part);
      }
      gbp[o] = static_cast<T>(acc);
    }
  }
  if (!gx.defined() && !gw.defined()) return;
  T* gxp = gx.defined() ? static_cast<T*>(gx.data_ptr()) : nullptr;
  if (gxp) std::fill(gxp, gxp + gx.numel(), T(0));
  // Weight gradients are summed per worker, then across workers.
  std::mutex mutex;
  std::vector<T> gw_total(gw.defined() ? static_cast<size_t>(gw.numel()) : 0, T(0));
  for_chunks<T>(
      g, static_cast<size_t>((g.K + g.Og) * g.P), [&](int64_t n0, int64_t nb, T* scratch) {
        T* cols = scratch;
        T* G = scratch + g.K * g.P * nb;  // (Og x nb*P) gradient of this chunk and group
        int64_t ld = nb * g.P;
        std::vector<T> gw_part(gw_total.size(), T(0));
        for (int64_t grp = 0; grp < g.groups; ++grp) {
          for (int64_t s = 0; s < nb; ++s)
            for (int64_t o = 0; o < g.Og; ++o)
              std::memcpy(G + o * ld + s * g.P, gp + ((n0 + s) * g.O + grp * g.Og + o) * g.P,
                          static_cast<size_t>(g.P) * sizeof(T));
          if (gw.defined()) {
            im2col(xp, g, n0, nb, grp, cols);
            // gw_g (Og x K) += G (Og x ld) @ cols^T (ld x K)
            gemm<T>(false, true, g.Og, g.K, ld, T(1), G, ld, cols, ld, T(1),
                    gw_part.data() + grp * g.Og * g.K, g.K);
          }
          if (gxp) {
            // dcols (K x ld) = W_g^T (K x Og) @ G (Og x ld)
            gemm<T>(true, false, g.K, ld, g.Og, T(1), wp + grp * g.Og * g.K, g.K, G, ld, T(0), cols,
                    ld);
            col2im(cols, g, n0, nb, grp, gxp);
          }
        }
        if (gw.defined()) {
          std::lock_guard<std::mutex> lock(mutex);
          for (size_t i = 0; i < gw_total.size(); ++i) gw_total[i] += gw_part[i];
        }
      });
  if (gw.defined()) std::memcpy(gw.data_ptr(), gw_total.data(), gw_total.size() * sizeof(T));
}

}  // namespace

namespace {
// oneDNN takes float32, and bfloat16 where the CPU has bfloat16 instructions.
bool dnnl_takes(DType t) {
  return cpu::have_dnnl() && (t == kFloat32 || (t == kBFloat16 && cpu::have_bf16_kernels()));
}
// 16-bit floats otherwise run in float32: a float32 copy of t (undefined stays undefined).
Tensor widened(const Tensor& t) { return t.defined() ? t.to(kFloat32) : t; }
// Copies a float32 result back into its 16-bit destination.
void narrow_into(const Tensor& dst, const Tensor& wide) {
  if (!dst.defined()) return;
  TensorIter it(dst, {wide});
  copy_cpu(it);
}
}  // namespace

void conv2d_cpu(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& out,
                const Conv2dParams& p) {
  if (out.numel() == 0) return;
  if (dnnl_takes(x.dtype())) return cpu::dnnl_conv2d(x, w, bias, out, p);
  if (x.dtype() == kFloat64) return conv_forward<double>(x, w, bias, out, p);
  if (x.dtype() == kFloat32) return conv_forward<float>(x, w, bias, out, p);
  Tensor wide = empty(out.sizes(), kFloat32);
  conv2d_cpu(widened(x), widened(w), widened(bias), wide, p);
  narrow_into(out, wide);
}

void conv2d_backward_cpu(const Tensor& x, const Tensor& w, const Tensor& grad_out,
                         const Tensor& grad_x, const Tensor& grad_w, const Tensor& grad_b,
                         const Conv2dParams& p) {
  if (dnnl_takes(x.dtype()) && x.numel() > 0 &&
      output_is_forward_size(conv_layout(x, w, grad_out, p)))
    return cpu::dnnl_conv2d_backward(x, w, grad_out, grad_x, grad_w, grad_b, p);
  if (x.dtype() == kFloat64)
    return conv_backward<double>(x, w, grad_out, grad_x, grad_w, grad_b, p);
  if (x.dtype() == kFloat32) return conv_backward<float>(x, w, grad_out, grad_x, grad_w, grad_b, p);
  auto wide_like = [](const Tensor& t) { return t.defined() ? empty(t.sizes(), kFloat32) : t; };
  Tensor gx = wide_like(grad_x), gw = wide_like(grad_w), gb = wide_like(grad_b);
  conv2d_backward_cpu(widened(x), widened(w), widened(grad_out), gx, gw, gb, p);
  narrow_into(grad_x, gx);
  narrow_into(grad_w, gw);
  narrow_into(grad_b, gb);
}

}  // namespace ember
