#include "ember/nn/modules/layers.h"

#include <sstream>

#include "ember/nn/functional.h"
#include "ember/ops/activation.h"

namespace ember::nn {

Tensor ReLU::forward(const Tensor& x) { return relu(x); }
Tensor Sigmoid::forward(const Tensor& x) { return sigmoid(x); }
Tensor Tanh::forward(const Tensor& x) { return tanh(x); }
GELU::GELU(std::string approx) : approximate(std::move(approx)) {
  EMBER_CHECK_VALUE(approximate == "none" || approximate == "tanh",
                    "[GELU] approximate must be 'none' or 'tanh', got '", approximate, "'");
}
Tensor GELU::forward(const Tensor& x) { return gelu(x, approximate); }
Tensor Softmax::forward(const Tensor& x) { return softmax(x, dim); }
Tensor LogSoftmax::forward(const Tensor& x) { return log_softmax(x, dim); }

namespace {
std::string pair_str(Pair p) {
  return p[0] == p[1] ? std::to_string(p[0])
                      : "(" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ")";
}
}  // namespace

MaxPool2d::MaxPool2d(Pair k, std::optional<Pair> s, Pair p, Pair d, bool ceil)
    : kernel_size(k), stride(s ? *s : k), padding(p), dilation(d), ceil_mode(ceil) {}
Tensor MaxPool2d::forward(const Tensor& x) {
  return max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode);
}
std::tuple<Tensor, Tensor> MaxPool2d::forward_with_indices(const Tensor& x) {
  return max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode);
}
std::string MaxPool2d::extra_repr() const {
  return "kernel_size=" + pair_str(kernel_size) + ", stride=" + pair_str(stride) +
         ", padding=" + pair_str(padding) + ", dilation=" + pair_str(dilation) +
         ", ceil_mode=" + (ceil_mode ? "True" : "False");
}
std::shared_ptr<Module> MaxPool2d::clone_impl() const {
  auto copy = std::make_shared<MaxPool2d>(kernel_size, stride, padding, dilation, ceil_mode);
  copy->return_indices = return_indices;
  return copy;
}

AvgPool2d::AvgPool2d(Pair k, std::optional<Pair> s, Pair p, bool ceil, bool include_pad)
    : kernel_size(k),
      stride(s ? *s : k),
      padding(p),
      ceil_mode(ceil),
      count_include_pad(include_pad) {}
Tensor AvgPool2d::forward(const Tensor& x) {
  return avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad);
}
std::string AvgPool2d::extra_repr() const {
  return "kernel_size=" + pair_str(kernel_size) + ", stride=" + pair_str(stride) +
         ", padding=" + pair_str(padding);
}
std::shared_ptr<Module> AvgPool2d::clone_impl() const {
  return std::make_shared<AvgPool2d>(kernel_size, stride, padding, ceil_mode, count_include_pad);
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& x) { return adaptive_avg_pool2d(x, output_size); }
std::string AdaptiveAvgPool2d::extra_repr() const { return "output_size=" + pair_str(output_size); }

Dropout::Dropout(double prob) : p(prob) {
  EMBER_CHECK(p >= 0 && p <= 1, "[Dropout] dropout probability has to be between 0 and 1, but got ",
              p);
}
Tensor Dropout::forward(const Tensor& x) { return functional::dropout(x, p, is_training()); }
std::string Dropout::extra_repr() const {
  std::ostringstream os;
  os << "p=" << p << ", inplace=False";
  return os.str();
}

}  // namespace ember::nn
