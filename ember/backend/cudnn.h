// What ember runs through cuDNN on CUDA: 2-D convolutions (cudnnConvolutionForward, BackwardData,
// BackwardFilter), for backend/cuda/conv.cu; recurrent stacks (cudnnRNNForward,
// cudnnRNNBackwardData_v8 and cudnnRNNBackwardWeights_v8), for ops/rnn.cpp, which allocates and
// keeps the tensors; and the switches of torch.backends.cudnn.
//
// cuDNN is optional: a build without CUDA, or with a CUDA toolkit that has no cuDNN, compiles
// backend/no_cudnn/ instead, where built() is false and the calls are never reached (convolutions
// and recurrent layers then run ember's own kernels, on either device).
//
// Note [cuDNN weight space]
// cuDNN keeps a stack's weights in one buffer in its own order. Each call copies PyTorch's
// per-layer tensors (w_ih, w_hh, b_ih, b_hh) into that buffer, and the backward copies the
// buffer's gradient back out, so the modules keep PyTorch's parameters and state-dict keys. Where
// cuDNN lays a parameter's gate blocks out one after another (as it does for every mode), the
// blocks merge into one copy per parameter.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/backend/kernels.h"
#include "ember/core/tensor.h"

namespace ember::cudnn {

/// Whether ember was built with cuDNN, and cuDNN's version (cudnnGetVersion(), 91900 for 9.19.0;
/// 0 without it).
bool built();
int64_t version();

/// torch.backends.cudnn.enabled: convolutions and recurrent layers on CUDA go through cuDNN (on by
/// default). Off, they run ember's own CUDA kernels.
void set_enabled(bool enabled);
bool enabled();
/// torch.backends.cudnn.allow_tf32: float32 convolutions and recurrent layers may use TF32 tensor
/// cores (on by default, as in PyTorch).
void set_allow_tf32(bool allow);
bool allow_tf32();
/// torch.backends.cudnn.benchmark: a convolution's algorithm is chosen by timing every candidate
/// once per shape (cudnnFind*) rather than by cuDNN's heuristics (off by default).
void set_benchmark(bool on);
bool benchmark();
/// torch.backends.cudnn.deterministic: convolutions take only algorithms that give the same bits
/// on every run (off by default).
void set_deterministic(bool on);
bool deterministic();

/// Whether a convolution of x (N, C, H, W) with w into y goes through cuDNN: built, enabled, every
/// tensor non-empty and within cuDNN's int element counts, and y the size conv2d(x, w) gives.
bool use_for_conv(const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dParams& p);
/// y = conv2d(x, w) (no bias); x, w and y contiguous NCHW, of one floating dtype, on one CUDA
/// device. The backward passes take the same three shapes: conv_backward_data writes grad_x from w
/// and grad_y, conv_backward_filter grad_w from x and grad_y. Each returns false, writing nothing,
/// when cuDNN has no algorithm for the call (none deterministic under cudnn.deterministic, or none
/// whose workspace fits in memory): the caller then runs its own kernels.
bool conv_forward(const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dParams& p);
bool conv_backward_data(const Tensor& grad_x, const Tensor& w, const Tensor& grad_y,
                        const Conv2dParams& p);
bool conv_backward_filter(const Tensor& x, const Tensor& grad_w, const Tensor& grad_y,
                          const Conv2dParams& p);

enum class RnnMode { RnnTanh, RnnRelu, Lstm, Gru };

/// One cuDNN call's stack: every layer has `hidden_size` units; the first takes `input_size`
/// features, the others output_size() * directions.
struct RnnShape {
  RnnMode mode = RnnMode::Lstm;
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 1;
  bool bidirectional = false;
  bool bias = true;
  int64_t proj_size = 0;  // LSTM's projection of h (0: none)
  int64_t directions() const { return bidirectional ? 2 : 1; }
  /// The features of h and of each direction's output: proj_size, or hidden_size without.
  int64_t output_size() const { return proj_size > 0 ? proj_size : hidden_size; }
  /// The tensors per layer and direction: (w_ih, w_hh, b_ih, b_hh[, w_hr]).
  int64_t weights_per_layer() const { return proj_size > 0 ? 5 : 4; }
};

/// Rows [row, row + rows) of weights[weight] (a matrix of `cols` columns, or a bias when cols is
/// 1) lie at element `offset` of the weight space.
struct WeightBlock {
  size_t weight = 0;
  int64_t row = 0, rows = 0, cols = 1;
  int64_t offset = 0;
};
struct RnnLayout {
  int64_t elements = 0;  // of the weight space, in the stack's dtype
  std::vector<WeightBlock> blocks;
};
/// Where a stack's weights go in cuDNN's weight space (Note [cuDNN weight space]); `weights` in
/// rnn_forward's order, for a stack of `dtype` on CUDA device `device`. Kept per shape.
const RnnLayout& rnn_layout(const RnnShape& shape, DType dtype, int device);

/// The bytes of reserve space a training forward of x (T, B, input_size) keeps for the backward.
int64_t rnn_reserve_bytes(const RnnShape& shape, const Tensor& x, const Tensor& lengths);

/// x (T, B, input_size), hx (layers * directions, B, output_size()) and cx (layers * directions,
/// B, H; only for LSTM), all contiguous, float32 or float64, on one CUDA device; weight_space as
/// rnn_layout lays it out. `lengths`: (B)
/// int64 on the CPU, each in [1, T], or undefined for full sequences. Writes y (T, B, directions
/// * output_size(); zeros past a sequence's length), hy (as hx) and cy (as cx), and with `reserve`
/// defined (of rnn_reserve_bytes) trains: the reserve space then holds what rnn_backward needs.
void rnn_forward(const RnnShape& shape, const Tensor& x, const Tensor& hx, const Tensor& cx,
                 const Tensor& weight_space, const Tensor& lengths, const Tensor& y,
                 const Tensor& hy, const Tensor& cy, const Tensor& reserve);

/// From the gradients of y, hy, cy (contiguous, zeros where none came) and what the training
/// forward wrote: dx, dhx, dcx, and the weight space's gradient added into dweight_space.
void rnn_backward(const RnnShape& shape, const Tensor& x, const Tensor& hx, const Tensor& cx,
                  const Tensor& weight_space, const Tensor& lengths, const Tensor& y,
                  const Tensor& reserve, const Tensor& dy, const Tensor& dhy, const Tensor& dcy,
                  const Tensor& dx, const Tensor& dhx, const Tensor& dcx,
                  const Tensor& dweight_space);

}  // namespace ember::cudnn
