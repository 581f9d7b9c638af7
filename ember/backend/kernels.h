// Every kernel a backend provides, in pairs: ops/ checks arguments, allocates outputs, and calls
// the _cpu or _cuda variant by the device of the tensors. A build without CUDA links the _cuda
// names to backend/no_cuda/no_cuda.cpp, where each one reports that CUDA is not built in.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

#include "ember/backend/functors/attention.h"
#include "ember/backend/functors/binary.h"
#include "ember/backend/functors/random.h"
#include "ember/backend/functors/reduce.h"
#include "ember/backend/functors/unary.h"
#include "ember/backend/tensor_iter.h"
#include "ember/core/tensor.h"

namespace ember {

// Elementwise. Inputs of one op share a dtype; the output has it too (bool for Compare/Bool ops).
#define EMBER_ELEMENTWISE_KERNELS(dev)                                                          \
  void unary_##dev(UnaryOp op, const TensorIter& it, const UnaryParams& p);                     \
  void binary_##dev(BinaryOp op, const TensorIter& it, const BinaryParams& p);                  \
  void binary_scalar_##dev(BinaryOp op, const TensorIter& it, Scalar b, const BinaryParams& p); \
  void ternary_##dev(TernaryOp op, const TensorIter& it, const TernaryParams& p);               \
  void where_##dev(const TensorIter& it);          /* (out, cond, a, b) */                      \
  void copy_##dev(const TensorIter& it);           /* (out, in), any two dtypes */              \
  void fill_##dev(const TensorIter& it, Scalar v); /* (out) */
EMBER_ELEMENTWISE_KERNELS(cpu)
EMBER_ELEMENTWISE_KERNELS(cuda)
#undef EMBER_ELEMENTWISE_KERNELS

// Reduces `in` over the sorted, distinct `dims` into `out`, which has the keepdim shape and is
// contiguous. Sum/Prod write sum_acc_t's dtype (int64 for integers), Max/Min the input's dtype,
// All/Any bool (input bool), ArgMax/ArgMin int64. Max/Min also fill `indices` when defined.
void reduce_cpu(ReduceOp op, const Tensor& in, const Shape& dims, const Tensor& out,
                const Tensor& indices);
void reduce_cuda(ReduceOp op, const Tensor& in, const Shape& dims, const Tensor& out,
                 const Tensor& indices);

// out (B, M, N) = alpha * a (B, M, K) @ b (B, K, N) + beta * out. a and b may have any strides;
// out is contiguous and not empty, K > 0 (the op layer handles empty sums); all three share a
// dtype.
void bmm_cpu(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta);
void bmm_cuda(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta);

// Softmax over `dim` of a contiguous x into contiguous out (log_softmax when `log`), and its
// backward from the saved output: softmax: gx = y * (g - sum(g * y)); log: gx = g - exp(y) *
// sum(g).
void softmax_cpu(const Tensor& x, int64_t dim, bool log, const Tensor& out);
void softmax_cuda(const Tensor& x, int64_t dim, bool log, const Tensor& out);
void softmax_backward_cpu(const Tensor& grad, const Tensor& out, int64_t dim, bool log,
                          const Tensor& grad_in);
void softmax_backward_cuda(const Tensor& grad, const Tensor& out, int64_t dim, bool log,
                           const Tensor& grad_in);

struct Conv2dParams {
  int64_t stride[2] = {1, 1};
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  int64_t groups = 1;
};
// x (N, C, H, W), w (O, C / groups, kH, kW), bias (O) or undefined, out (N, O, oH, oW); all
// contiguous. The backward fills whichever of grad_x, grad_w, grad_b are defined.
void conv2d_cpu(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& out,
                const Conv2dParams& p);
void conv2d_cuda(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& out,
                 const Conv2dParams& p);
void conv2d_backward_cpu(const Tensor& x, const Tensor& w, const Tensor& grad_out,
                         const Tensor& grad_x, const Tensor& grad_w, const Tensor& grad_b,
                         const Conv2dParams& p);
void conv2d_backward_cuda(const Tensor& x, const Tensor& w, const Tensor& grad_out,
                          const Tensor& grad_x, const Tensor& grad_w, const Tensor& grad_b,
                          const Conv2dParams& p);

struct Pool2dParams {
  int64_t kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1};
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  bool count_include_pad = true;  // avg_pool2d
  int64_t divisor_override = 0;   // avg_pool2d: every window divided by it when > 0
};
/// avg_pool2d's accumulator: integers sum in int64 and divide toward zero, as PyTorch's do.
template <typename T>
using pool_acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;
// x (N, C, H, W) contiguous; out (N, C, oH, oW); indices (int64, flat h * W + w within the plane).
void max_pool2d_cpu(const Tensor& x, const Tensor& out, const Tensor& indices,
                    const Pool2dParams& p);
void max_pool2d_cuda(const Tensor& x, const Tensor& out, const Tensor& indices,
                     const Pool2dParams& p);
// The backward adds each output's gradient into its maximum's place in grad_x (N, C, H, W); p (the
// forward's) lets a backend gather per input element, from the outputs whose windows can hold it.
void max_pool2d_backward_cpu(const Tensor& grad_out, const Tensor& indices, const Tensor& grad_x,
                             const Pool2dParams& p);
void max_pool2d_backward_cuda(const Tensor& grad_out, const Tensor& indices, const Tensor& grad_x,
                              const Pool2dParams& p);
void avg_pool2d_cpu(const Tensor& x, const Tensor& out, const Pool2dParams& p);
void avg_pool2d_cuda(const Tensor& x, const Tensor& out, const Pool2dParams& p);
void avg_pool2d_backward_cpu(const Tensor& grad_out, const Tensor& grad_x, const Pool2dParams& p);
void avg_pool2d_backward_cuda(const Tensor& grad_out, const Tensor& grad_x, const Pool2dParams& p);

// Adaptive average pooling (PyTorch's windows): output o of O over an input of size I averages
// [floor(o * I / O), ceil((o + 1) * I / O)). x (N, C, H, W) contiguous, out (N, C, oH, oW).
EMBER_HOST_DEVICE inline int64_t adaptive_start(int64_t o, int64_t in, int64_t out) {
  return o * in / out;
}
EMBER_HOST_DEVICE inline int64_t adaptive_end(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}
void adaptive_avg_pool2d_cpu(const Tensor& x, const Tensor& out);
void adaptive_avg_pool2d_cuda(const Tensor& x, const Tensor& out);
void adaptive_avg_pool2d_backward_cpu(const Tensor& grad_out, const Tensor& grad_x);
void adaptive_avg_pool2d_backward_cuda(const Tensor& grad_out, const Tensor& grad_x);

// Batch norm over x viewed as (N, C, S), contiguous (S: the product of the dims after C).
// Per-channel tensors (C) are contiguous, in the statistics dtype: float32 for 16-bit x, else
// x's. An undefined weight, bias, sum_dy or sum_dy_xmu means 1, 0, 0, 0. The elementwise math is
// backend/functors/batch_norm.h.
/// mean and biased variance of each channel over N and S.
void batch_norm_stats_cpu(const Tensor& x, const Tensor& mean, const Tensor& var);
void batch_norm_stats_cuda(const Tensor& x, const Tensor& mean, const Tensor& var);
/// out (x's shape and dtype) = (x - mean) * invstd * weight + bias.
void batch_norm_elemt_cpu(const Tensor& x, const Tensor& mean, const Tensor& invstd,
                          const Tensor& weight, const Tensor& bias, const Tensor& out);
void batch_norm_elemt_cuda(const Tensor& x, const Tensor& mean, const Tensor& invstd,
                           const Tensor& weight, const Tensor& bias, const Tensor& out);
/// sum_dy = sum of grad_out, sum_dy_xmu = sum of grad_out * (x - mean), per channel.
void batch_norm_backward_reduce_cpu(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                                    const Tensor& sum_dy, const Tensor& sum_dy_xmu);
void batch_norm_backward_reduce_cuda(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                                     const Tensor& sum_dy, const Tensor& sum_dy_xmu);
/// grad_in (x's shape and dtype) from the sums over `count` elements per channel.
void batch_norm_backward_elemt_cpu(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                                   const Tensor& invstd, const Tensor& weight, const Tensor& sum_dy,
                                   const Tensor& sum_dy_xmu, double count, const Tensor& grad_in);
void batch_norm_backward_elemt_cuda(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                                    const Tensor& invstd, const Tensor& weight,
                                    const Tensor& sum_dy, const Tensor& sum_dy_xmu, double count,
                                    const Tensor& grad_in);

// How scatter combines src with what the destination holds: Assign (of two writes to one place,
// either wins), Sum, Prod, Max and Min (a NaN on either side wins, as PyTorch's amax and amin).
enum class ScatterReduce { Assign, Sum, Prod, Max, Min };

// out[..i..] = self[..index[..i..]..] along dim (out has index's shape); scatter combines src
// into the indexed positions of out in place. Indices out of range are an error naming the index.
void gather_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out);
void gather_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out);
void scatter_cpu(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src,
                 ScatterReduce reduce);
void scatter_cuda(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src,
                  ScatterReduce reduce);

// Sorting along the last dim of a contiguous (R, L) tensor `x` into contiguous values (x's dtype)
// and indices (int64) of the same shape. NaN sorts above every number, as in PyTorch. `stable`
// keeps equal elements in their order; on the CPU an unstable sort is PyTorch's std::sort of
// (value, index) pairs, so ties come out in the order PyTorch gives (the GPU's is always stable).
void sort_cpu(const Tensor& x, bool descending, bool stable, const Tensor& values,
              const Tensor& indices);
void sort_cuda(const Tensor& x, bool descending, bool stable, const Tensor& values,
               const Tensor& indices);
// The k-th smallest of each row of a contiguous (R, L) x into values and indices (R): PyTorch's
// quick select (median of three), so that among equal values the index is PyTorch's.
void kthvalue_cpu(const Tensor& x, int64_t k, const Tensor& values, const Tensor& indices);
// The k largest (or smallest) of each row of a contiguous (R, L) x into (R, k) values and
// indices, sorted when `sorted`. (CUDA's top-k is its sort, narrowed by ops/.)
void topk_cpu(const Tensor& x, int64_t k, bool largest, bool sorted, const Tensor& values,
              const Tensor& indices);
// Inclusive scan (cumulative sum or product) along the last dim of a contiguous (R, L) x into
// out of the same shape, accumulated in out's dtype (opmath for 16-bit floats).
enum class ScanOp { Sum, Prod };
void scan_cpu(ScanOp op, const Tensor& x, const Tensor& out);
void scan_cuda(ScanOp op, const Tensor& x, const Tensor& out);

// Layer norm over the rows of a contiguous (M, N) x: y = (x - mean) * rstd * weight + bias
// (weight and bias (N) or undefined), mean and rstd (M) in the statistics dtype (float32 for 16-bit
// x). The backward writes whichever of dx (M, N), dweight and dbias (N) are defined.
void layer_norm_cpu(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                    const Tensor& y, const Tensor& mean, const Tensor& rstd);
void layer_norm_cuda(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                     const Tensor& y, const Tensor& mean, const Tensor& rstd);
void layer_norm_backward_cpu(const Tensor& dy, const Tensor& x, const Tensor& mean,
                             const Tensor& rstd, const Tensor& weight, const Tensor& dx,
                             const Tensor& dweight, const Tensor& dbias);
void layer_norm_backward_cuda(const Tensor& dy, const Tensor& x, const Tensor& mean,
                              const Tensor& rstd, const Tensor& weight, const Tensor& dx,
                              const Tensor& dweight, const Tensor& dbias);

// Recurrent cells over one time step of a batch (backend/functors/rnn.h has the math). Every
// tensor is contiguous; `mask` (B, bool) or undefined: rows whose sequence has ended keep their
// state (h, c copied from the previous step) and get zero gate gradients.
/// gates (B, 4H): pre-activations in, activated (i, f, g, o) out; c, h (B, H) out.
void lstm_cell_cpu(const Tensor& gates, const Tensor& c_prev, const Tensor& h_prev,
                   const Tensor& c, const Tensor& h, const Tensor& mask);
void lstm_cell_cuda(const Tensor& gates, const Tensor& c_prev, const Tensor& h_prev,
                    const Tensor& c, const Tensor& h, const Tensor& mask);
/// dh (B, H): the new h's gradient; dc (B, H): the new c's in, c_prev's out; dgates (B, 4H) out.
void lstm_cell_backward_cpu(const Tensor& gates, const Tensor& c_prev, const Tensor& c,
                            const Tensor& dh, const Tensor& dc, const Tensor& dgates,
                            const Tensor& mask);
void lstm_cell_backward_cuda(const Tensor& gates, const Tensor& c_prev, const Tensor& c,
                             const Tensor& dh, const Tensor& dc, const Tensor& dgates,
                             const Tensor& mask);
/// gx (B, 3H): input-side pre-activations in, activated (r, z, n) out; gh (B, 3H) hidden-side.
void gru_cell_cpu(const Tensor& gx, const Tensor& gh, const Tensor& h_prev, const Tensor& h,
                  const Tensor& mask);
void gru_cell_cuda(const Tensor& gx, const Tensor& gh, const Tensor& h_prev, const Tensor& h,
                   const Tensor& mask);
/// dgx, dgh (B, 3H) and the direct part of h_prev's gradient (B, H) out.
void gru_cell_backward_cpu(const Tensor& gates, const Tensor& gh, const Tensor& h_prev,
                           const Tensor& dh, const Tensor& dgx, const Tensor& dgh,
                           const Tensor& dh_prev, const Tensor& mask);
void gru_cell_backward_cuda(const Tensor& gates, const Tensor& gh, const Tensor& h_prev,
                            const Tensor& dh, const Tensor& dgx, const Tensor& dgh,
                            const Tensor& dh_prev, const Tensor& mask);
/// pre (B, H): the pre-activation; h = tanh(pre) or relu(pre) (h_prev where masked).
void rnn_cell_cpu(const Tensor& pre, const Tensor& h_prev, const Tensor& h, bool relu,
                  const Tensor& mask);
void rnn_cell_cuda(const Tensor& pre, const Tensor& h_prev, const Tensor& h, bool relu,
                   const Tensor& mask);
/// dpre = dh * act'(h) (0 where masked).
void rnn_cell_backward_cpu(const Tensor& h, const Tensor& dh, const Tensor& dpre, bool relu,
                           const Tensor& mask);
void rnn_cell_backward_cuda(const Tensor& h, const Tensor& dh, const Tensor& dpre, bool relu,
                            const Tensor& mask);

// Fused attention, FlashAttention's tiling with the online softmax: q (N, Lq, D), k (N, Lk, D),
// v (N, Lk, Dv) contiguous (N = batch x heads); mask (N, Lq, Lk) additive, any strides (stride 0
// for broadcast dims), or undefined. out (N, Lq, Dv); lse (N, Lq) the rows' log-sum-exp (float32
// or float64 as q), for the backward, which recomputes the weights block by block and fills dq,
// dk, dv (contiguous, q's, k's and v's shapes). The L x L matrix is never held whole.
void attention_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                   const AttentionParams& p, const Tensor& out, const Tensor& lse);
void attention_cuda(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                    const AttentionParams& p, const Tensor& out, const Tensor& lse);
void attention_backward_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                            const AttentionParams& p, const Tensor& out, const Tensor& lse,
                            const Tensor& dout, const Tensor& dq, const Tensor& dk,
                            const Tensor& dv);
void attention_backward_cuda(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                             const AttentionParams& p, const Tensor& out, const Tensor& lse,
                             const Tensor& dout, const Tensor& dq, const Tensor& dk,
                             const Tensor& dv);

// Discrete Fourier transforms over `dims` (sorted, distinct), each output scaled by `scale`
// (PyTorch's _fft_c2c, _fft_r2c and _fft_c2r). c2c: complex in and out, one shape, the sign of
// the exponent negative when `forward`. r2c: real in, complex out with the last of `dims` cut to
// n / 2 + 1 (the other half is the conjugate). c2r: the inverse of r2c, out's last dim giving n.
// CPU only for now (pocketfft); cuFFT's are to come, and ops/fft refuses CUDA tensors.
void fft_c2c_cpu(const Tensor& in, const Tensor& out, const Shape& dims, bool forward,
                 double scale);
void fft_r2c_cpu(const Tensor& in, const Tensor& out, const Shape& dims, double scale);
void fft_c2r_cpu(const Tensor& in, const Tensor& out, const Shape& dims, double scale);

// Random fill of a contiguous tensor: element i = random_value(p, i) converted to its dtype.
void random_cpu(const Tensor& out, const RandomParams& p);
void random_cuda(const Tensor& out, const RandomParams& p);

// Transfers where a GPU is on either side (dtype conversion included). The CUDA backend orders
// them with the current streams; non_blocking is honoured from and to pinned host memory.
void copy_between_devices_cuda(const Tensor& dst, const Tensor& src, bool non_blocking);
Tensor pin_memory_cuda(const Tensor& t);
bool is_pinned_cuda(const Tensor& t);
void record_stream_cuda(const Tensor& t, uintptr_t stream);

}  // namespace ember
