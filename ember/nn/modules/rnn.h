// nn::RNN, nn::LSTM and nn::GRU: stacks of recurrent layers over ember's fused recurrent op
// (ember/ops/rnn.h), with PyTorch's parameter names (weight_ih_l0, bias_hh_l1_reverse, ...), shapes
// and initialisation (uniform in +-1/sqrt(hidden_size)), so that state dicts load both ways.
#pragma once

#include <tuple>

#include "ember/nn/module.h"
#include "ember/ops/rnn.h"

namespace ember::nn {

struct RNNOptions {
  RNNOptions(int64_t input_size, int64_t hidden_size)
      : input_size(input_size), hidden_size(hidden_size) {}
  int64_t input_size, hidden_size;
  int64_t num_layers = 1;
  bool bias = true;
  bool batch_first = false;
  double dropout = 0;  // between layers, in training
  bool bidirectional = false;
  int64_t proj_size = 0;  // LSTM only: h = W_hr (o * tanh(c)) of proj_size features (weight_hr_l*)
  RNNOptions& with_num_layers(int64_t n) {
    num_layers = n;
    return *this;
  }
  RNNOptions& with_bias(bool b) {
    bias = b;
    return *this;
  }
  RNNOptions& with_batch_first(bool b) {
    batch_first = b;
    return *this;
  }
  RNNOptions& with_dropout(double p) {
    dropout = p;
    return *this;
  }
  RNNOptions& with_bidirectional(bool b) {
    bidirectional = b;
    return *this;
  }
  RNNOptions& with_proj_size(int64_t p) {
    proj_size = p;
    return *this;
  }
};

/// What the three share. forward(x) gives the output only; forward_with_state the final states
/// too: (output, h_n, c_n), c_n for LSTM only.
class RNNBase : public Module {
 public:
  using Kind = RecurrentOptions::Kind;
  RNNBase(Kind kind, RNNOptions options);
  Tensor forward(const Tensor& x) override;
  std::tuple<Tensor, Tensor, Tensor> forward_with_state(const Tensor& x,
                                                        const Tensor& h0 = Tensor(),
                                                        const Tensor& c0 = Tensor());
  std::string name() const override;
  std::string extra_repr() const override;
  void reset_parameters();
  /// Per layer and direction: w_ih, w_hh, b_ih, b_hh (biases undefined without bias), and w_hr
  /// with projections.
  std::vector<Tensor> flat_weights() const;

  const Kind kind;
  const RNNOptions options;

 protected:
  std::shared_ptr<Module> clone_impl() const override;

 private:
  std::vector<std::string> weight_names_;
};

class LSTM : public RNNBase {
 public:
  explicit LSTM(RNNOptions options) : RNNBase(Kind::Lstm, options) {}
};

class GRU : public RNNBase {
 public:
  explicit GRU(RNNOptions options) : RNNBase(Kind::Gru, options) {}
};

/// The Elman RNN: tanh (default) or ReLU.
class RNN : public RNNBase {
 public:
  explicit RNN(RNNOptions options, bool relu = false)
      : RNNBase(relu ? Kind::RnnRelu : Kind::RnnTanh, options) {}
};

}  // namespace ember::nn
