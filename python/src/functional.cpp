// ember.nn.functional: activations, convolution, pooling, normalisation, dropout and losses.
#include "bind.h"

namespace ember::python {
namespace {

namespace F = nn::functional;

F::Reduction reduction(const std::string& r) {
  if (r == "mean") return F::Reduction::Mean;
  if (r == "sum") return F::Reduction::Sum;
  if (r == "none") return F::Reduction::None;
  throw py::value_error(r +
                        " is not a valid value for reduction (expected 'mean', 'sum' or 'none')");
}

Tensor optional_tensor(py::handle h) { return h.is_none() ? Tensor() : as_tensor(h); }

}  // namespace

void bind_functional(py::module_& m) {
  py::module_ f = m.def_submodule("_functional", "ember.nn.functional's C++ part");
  f.def(
      "relu", [](const Tensor& x, bool) { return nogil([&] { return relu(x); }); }, "input"_a,
      "inplace"_a = false);
  f.def(
      "sigmoid", [](const Tensor& x) { return nogil([&] { return sigmoid(x); }); }, "input"_a);
  f.def(
      "tanh", [](const Tensor& x) { return nogil([&] { return tanh(x); }); }, "input"_a);
  f.def(
      "softmax",
      [](const Tensor& x, int64_t dim, py::handle dtype) {
        std::optional<DType> dt;
        if (!dtype.is_none()) dt = to_dtype(dtype);
        return nogil([&] { return softmax(x, dim, dt); });
      },
      "input"_a, "dim"_a, "dtype"_a = py::none());
  f.def(
      "log_softmax",
      [](const Tensor& x, int64_t dim, py::handle dtype) {
        std::optional<DType> dt;
        if (!dtype.is_none()) dt = to_dtype(dtype);
        return nogil([&] { return log_softmax(x, dim, dt); });
      },
      "input"_a, "dim"_a, "dtype"_a = py::none());
  f.def(
      "dropout",
      [](const Tensor& x, double p, bool training, bool) {
        return nogil([&] { return F::dropout(x, p, training); });
      },
      "input"_a, "p"_a = 0.5, "training"_a = true, "inplace"_a = false);
  f.def(
      "linear",
      [](const Tensor& x, const Tensor& w, py::handle b) {
        Tensor bias = optional_tensor(b);
        return nogil([&] { return linear(x, w, bias); });
      },
      "input"_a, "weight"_a, "bias"_a = py::none());
  f.def(
      "conv2d",
      [](const Tensor& x, const Tensor& w, py::handle b, py::handle stride, py::handle padding,
         py::handle dilation, int64_t groups) {
        Tensor bias = optional_tensor(b);
        Pair s = to_pair(stride, "stride"), p = to_pair(padding, "padding"),
             d = to_pair(dilation, "dilation");
        return nogil([&] { return conv2d(x, w, bias, s, p, d, groups); });
      },
      "input"_a, "weight"_a, "bias"_a = py::none(), "stride"_a = 1, "padding"_a = 0,
      "dilation"_a = 1, "groups"_a = 1);
  f.def(
      "max_pool2d",
      [](const Tensor& x, py::handle k, py::handle stride, py::handle padding, py::handle dilation,
         bool ceil_mode) {
        std::optional<Pair> s;
        if (!stride.is_none()) s = to_pair(stride, "stride");
        Pair kk = to_pair(k, "kernel_size"), p = to_pair(padding, "padding"),
             d = to_pair(dilation, "dilation");
        return nogil([&] { return max_pool2d(x, kk, s, p, d, ceil_mode); });
      },
      "input"_a, "kernel_size"_a, "stride"_a = py::none(), "padding"_a = 0, "dilation"_a = 1,
      "ceil_mode"_a = false);
  f.def(
      "avg_pool2d",
      [](const Tensor& x, py::handle k, py::handle stride, py::handle padding, bool ceil_mode,
         bool count_include_pad) {
        std::optional<Pair> s;
        if (!stride.is_none()) s = to_pair(stride, "stride");
        Pair kk = to_pair(k, "kernel_size"), p = to_pair(padding, "padding");
        return nogil([&] { return avg_pool2d(x, kk, s, p, ceil_mode, count_include_pad); });
      },
      "input"_a, "kernel_size"_a, "stride"_a = py::none(), "padding"_a = 0, "ceil_mode"_a = false,
      "count_include_pad"_a = true);
  f.def(
      "adaptive_avg_pool2d",
      [](const Tensor& x, py::handle size) {
        Pair out = to_pair(size, "output_size");
        return nogil([&] { return adaptive_avg_pool2d(x, out); });
      },
      "input"_a, "output_size"_a);
  f.def(
      "interpolate",
      [](const Tensor& x, py::handle size, py::handle scale_factor, const std::string& mode,
         std::optional<bool> align_corners) {
        EMBER_CHECK_VALUE(size.is_none() != scale_factor.is_none(),
                          "interpolate: give either size or scale_factor");
        Pair out;
        if (!size.is_none()) {
          out = to_pair(size, "size");
        } else {
          EMBER_CHECK_VALUE(x.dim() == 4, "interpolate: expected a 4-d input (N, C, H, W), got ",
                            x.dim(), " dims");
          auto f = py::isinstance<py::sequence>(scale_factor)
                       ? scale_factor.cast<std::pair<double, double>>()
                       : std::make_pair(scale_factor.cast<double>(), scale_factor.cast<double>());
          out = {static_cast<int64_t>(static_cast<double>(x.size(2)) * f.first),
                 static_cast<int64_t>(static_cast<double>(x.size(3)) * f.second)};
        }
        bool ac = align_corners.value_or(false);
        return nogil([&] { return F::interpolate(x, out, mode, ac); });
      },
      "input"_a, "size"_a = py::none(), "scale_factor"_a = py::none(), "mode"_a = "nearest",
      "align_corners"_a = py::none());
  f.def(
      "batch_norm",
      [](const Tensor& x, py::handle running_mean, py::handle running_var, py::handle weight,
         py::handle bias, bool training, double momentum, double eps) {
        Tensor rm = optional_tensor(running_mean), rv = optional_tensor(running_var),
               w = optional_tensor(weight), b = optional_tensor(bias);
        return nogil([&] { return F::batch_norm(x, rm, rv, w, b, training, momentum, eps); });
      },
      "input"_a, "running_mean"_a, "running_var"_a, "weight"_a = py::none(), "bias"_a = py::none(),
      "training"_a = false, "momentum"_a = 0.1, "eps"_a = 1e-5);
  f.def(
      "cross_entropy",
      [](const Tensor& input, const Tensor& target, py::handle weight, int64_t ignore_index,
         const std::string& r, double label_smoothing) {
        Tensor w = optional_tensor(weight);
        F::Reduction red = reduction(r);
        return nogil(
            [&] { return F::cross_entropy(input, target, w, ignore_index, red, label_smoothing); });
      },
      "input"_a, "target"_a, "weight"_a = py::none(), "ignore_index"_a = -100,
      "reduction"_a = "mean", "label_smoothing"_a = 0.0);
  f.def(
      "nll_loss",
      [](const Tensor& input, const Tensor& target, py::handle weight, int64_t ignore_index,
         const std::string& r) {
        Tensor w = optional_tensor(weight);
        F::Reduction red = reduction(r);
        return nogil([&] { return F::nll_loss(input, target, w, ignore_index, red); });
      },
      "input"_a, "target"_a, "weight"_a = py::none(), "ignore_index"_a = -100,
      "reduction"_a = "mean");
  f.def(
      "mse_loss",
      [](const Tensor& input, const Tensor& target, const std::string& r) {
        F::Reduction red = reduction(r);
        return nogil([&] { return F::mse_loss(input, target, red); });
      },
      "input"_a, "target"_a, "reduction"_a = "mean");
  f.def(
      "one_hot", [](const Tensor& x, int64_t n) { return nogil([&] { return one_hot(x, n); }); },
      "input"_a, "num_classes"_a = -1);
  f.def(
      "embedding",
      [](const Tensor& input, const Tensor& weight) {
        return nogil([&] { return embedding(weight, input); });
      },
      "input"_a, "weight"_a);
}

}  // namespace ember::python
