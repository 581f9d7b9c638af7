#include "ember/nn/modules/rnn.h"

#include <cmath>
#include <sstream>

#include "ember/nn/init.h"

namespace ember::nn {

RNNBase::RNNBase(Kind k, RNNOptions o) : kind(k), options(o) {
  EMBER_CHECK_VALUE(o.input_size > 0 && o.hidden_size > 0 && o.num_layers > 0, "[", name(),
                    "] expected positive input_size, hidden_size and num_layers, got ",
                    o.input_size, ", ", o.hidden_size, " and ", o.num_layers);
  EMBER_CHECK_VALUE(o.dropout >= 0 && o.dropout <= 1, "[", name(),
                    "] dropout must be in [0, 1], got ", o.dropout);
  EMBER_CHECK_VALUE(o.proj_size >= 0, "[", name(),
                    "] proj_size should be a positive integer or zero to disable projections");
  EMBER_CHECK_VALUE(o.proj_size == 0 || kind == Kind::Lstm, "[", name(),
                    "] proj_size argument is only supported for LSTM, not RNN or GRU");
  EMBER_CHECK_VALUE(o.proj_size < o.hidden_size, "[", name(),
                    "] proj_size has to be smaller than hidden_size, got ", o.proj_size, " and ",
                    o.hidden_size);
  const int64_t dirs = o.bidirectional ? 2 : 1, g = gate_count(kind) * o.hidden_size;
  const int64_t h = o.proj_size > 0 ? o.proj_size : o.hidden_size;  // h's features
  for (int64_t layer = 0; layer < o.num_layers; ++layer)
    for (int64_t d = 0; d < dirs; ++d) {
      std::string suffix = std::to_string(layer) + (d ? "_reverse" : "");
      int64_t in = layer == 0 ? o.input_size : h * dirs;
      auto add = [&](const std::string& n, const Shape& shape) {
        register_parameter(n, uninitialized(shape));
        weight_names_.push_back(n);
      };
      add("weight_ih_l" + suffix, {g, in});
      add("weight_hh_l" + suffix, {g, h});
      if (o.bias) {
        add("bias_ih_l" + suffix, {g});
        add("bias_hh_l" + suffix, {g});
      }
      if (o.proj_size > 0) add("weight_hr_l" + suffix, {o.proj_size, o.hidden_size});
    }
  if (should_initialize()) reset_parameters();
}

void RNNBase::reset_parameters() {
  double bound = 1.0 / std::sqrt(static_cast<double>(options.hidden_size));
  for (const std::string& n : weight_names_) init::uniform_(*parameter_slot(n), -bound, bound);
}

std::vector<Tensor> RNNBase::flat_weights() const {
  std::vector<Tensor> out;
  auto* self = const_cast<RNNBase*>(this);
  for (const std::string& n : weight_names_) {
    out.push_back(*self->parameter_slot(n));
    // recurrent() takes four (five with projections) per layer and direction, biases undefined
    // when absent.
    if (!options.bias && n.rfind("weight_hh", 0) == 0) {
      out.emplace_back();
      out.emplace_back();
    }
  }
  return out;
}

std::tuple<Tensor, Tensor, Tensor> RNNBase::forward_with_state(const Tensor& x, const Tensor& h0,
                                                               const Tensor& c0) {
  RecurrentOptions ro;
  ro.kind = kind;
  ro.num_layers = options.num_layers;
  ro.proj_size = options.proj_size;
  ro.bidirectional = options.bidirectional;
  ro.batch_first = options.batch_first;
  ro.dropout = options.dropout;
  ro.training = is_training();
  return recurrent(x, h0, c0, flat_weights(), ro);
}

Tensor RNNBase::forward(const Tensor& x) { return std::get<0>(forward_with_state(x)); }

std::string RNNBase::name() const {
  return kind == Kind::Lstm ? "LSTM" : kind == Kind::Gru ? "GRU" : "RNN";
}

std::string RNNBase::extra_repr() const {
  std::ostringstream os;
  os << options.input_size << ", " << options.hidden_size;
  if (options.proj_size != 0) os << ", proj_size=" << options.proj_size;
  if (options.num_layers != 1) os << ", num_layers=" << options.num_layers;
  if (kind == Kind::RnnRelu) os << ", nonlinearity='relu'";
  if (!options.bias) os << ", bias=False";
  if (options.batch_first) os << ", batch_first=True";
  if (options.dropout != 0) os << ", dropout=" << options.dropout;
  if (options.bidirectional) os << ", bidirectional=True";
  return os.str();
}

std::shared_ptr<Module> RNNBase::clone_impl() const {
  return std::make_shared<RNNBase>(kind, options);
}

}  // namespace ember::nn
