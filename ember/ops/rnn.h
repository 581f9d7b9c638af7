// Recurrent layers: LSTM, GRU and the Elman RNN (tanh or ReLU) over time-major sequences, as
// PyTorch computes them, with optional per-sequence lengths (packed sequences).
//
// Note [Fused recurrent layers]
// A layer (one direction) is one autograd node: its forward runs the time steps (a GEMM of the
// hidden state and one fused cell kernel per step) and keeps the activated gates; its backward
// runs the steps in reverse with the fused cell backward and one GEMM per step for the hidden
// state's gradient, then the hidden weights' gradient as one GEMM over all steps. The input's
// projection (x W_ih^T + b for every step at once, one GEMM) is an ordinary op in front of it,
// as cuDNN and PyTorch's CPU path split the work.
#pragma once

#include <tuple>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

/// One LSTM direction. x_proj (T, B, 4H): the input's projection with both biases; h0, c0
/// (B, H); w_hh (4H, H); lengths (B, int64) or undefined (steps t >= lengths[b] keep row b's
/// state); reverse: steps from T - 1 down. Returns (outputs (T, B, H), h_n, c_n).
std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& x_proj, const Tensor& h0,
                                              const Tensor& c0, const Tensor& w_hh,
                                              const Tensor& lengths = Tensor(),
                                              bool reverse = false);
/// One GRU direction. x_proj (T, B, 3H) with b_ih; b_hh (3H) is added to the hidden side each
/// step (GRU's n gate scales it by r). Returns (outputs, h_n).
std::tuple<Tensor, Tensor> gru_layer(const Tensor& x_proj, const Tensor& h0, const Tensor& w_hh,
                                     const Tensor& b_hh, const Tensor& lengths = Tensor(),
                                     bool reverse = false);
/// One Elman RNN direction, tanh or ReLU. x_proj (T, B, H) with both biases.
std::tuple<Tensor, Tensor> rnn_layer(const Tensor& x_proj, const Tensor& h0, const Tensor& w_hh,
                                     bool relu, const Tensor& lengths = Tensor(),
                                     bool reverse = false);

/// What RNN, LSTM and GRU share: the kind, the sizes and the flags of torch.nn.RNN & co.
struct RecurrentOptions {
  enum class Kind { RnnTanh, RnnRelu, Lstm, Gru } kind = Kind::Lstm;
  int64_t num_layers = 1;
  /// LSTM only: h_t = W_hr (o_t * tanh(c_t)), of proj_size < hidden_size features (0: none).
  int64_t proj_size = 0;
  bool bidirectional = false;
  bool batch_first = false;
  double dropout = 0;
  bool training = true;
};

/// The gate blocks stacked in a layer's weights: LSTM 4, GRU 3, RNN 1.
inline int64_t gate_count(RecurrentOptions::Kind kind) {
  return kind == RecurrentOptions::Kind::Lstm ? 4 : kind == RecurrentOptions::Kind::Gru ? 3 : 1;
}

/// The whole stack: `weights` holds, per layer and direction in PyTorch's order, (w_ih, w_hh,
/// b_ih, b_hh) (biases undefined when absent), and w_hr (proj_size, H) after them with
/// projections. x (T, B, I) or (B, T, I) with batch_first, or unbatched (T, I); h0
/// (layers * directions, B, proj_size or H) and c0 for LSTM (layers * directions, B, H), or
/// undefined (zeros).
/// lengths: per-sequence lengths (packed input; outputs past a sequence's end are zero).
/// Returns (output, h_n, c_n) (c_n undefined but for LSTM).
std::tuple<Tensor, Tensor, Tensor> recurrent(const Tensor& x, const Tensor& h0, const Tensor& c0,
                                             const std::vector<Tensor>& weights,
                                             const RecurrentOptions& options,
                                             const Tensor& lengths = Tensor());

/// The cells: one step, x (B, I) or unbatched (I).
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& x, const Tensor& h, const Tensor& c,
                                     const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                     const Tensor& b_hh);
Tensor gru_cell(const Tensor& x, const Tensor& h, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh);
Tensor rnn_cell(const Tensor& x, const Tensor& h, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh, bool relu);

}  // namespace ember
