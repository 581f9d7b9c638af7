// Float32 and bfloat16 convolutions through oneDNN (Debian's libdnnl, the library libtorch uses on
// the CPU), run on ember's pool: each worker takes a slice of the batch and calls oneDNN
// single-threaded, so oneDNN's OpenMP team never spins against the pool (backend/cpu/thread_pool.h
// says why).
#pragma once

#include "ember/backend/kernels.h"

namespace ember::cpu {

/// Whether ember was built with oneDNN.
bool have_dnnl();

/// Whether float32 3x3 stride-1 convolutions of 64 or more channels may use Winograd's algorithm
/// (on by default; conv_dnnl.cpp says when it is chosen, and its precision). Off: direct
/// convolution, as PyTorch on the CPU. ember.backends.mkldnn.allow_winograd in Python. Without
/// oneDNN the switch is kept but changes nothing.
void set_allow_winograd(bool allow);
bool allow_winograd();

/// conv2d_cpu / conv2d_backward_cpu for float32, and bfloat16 where have_bf16_kernels(), through
/// oneDNN (a bfloat16 bias is used in float32; weight gradients are summed in float32).
void dnnl_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& out,
                 const Conv2dParams& p);
void dnnl_conv2d_backward(const Tensor& x, const Tensor& w, const Tensor& grad_out,
                          const Tensor& grad_x, const Tensor& grad_w, const Tensor& grad_b,
                          const Conv2dParams& p);

}  // namespace ember::cpu
