// torch.nn.functional (ember.nn.functional) declared by signature (op_table.h): activations,
// linear and convolution, pooling, dropout, normalisation, padding and resizing, and the losses,
// with PyTorch 1.13's parameter names and defaults. Every one computes in C++ (ember/ops,
// ember/nn/functional.h).
#include "ember/nn/attention.h"
#include "ember/ops/activation.h"
#include "ember/ops/attention.h"
#include "ember/ops/interpolate.h"
#include "ember/ops/layer_norm.h"
#include "ember/ops/pad.h"
#include "ember/ops/rnn.h"
#include "ember/ops/tensor_index.h"
#include "op_table.h"

namespace ember::python {
namespace {

namespace F = nn::functional;

// kernel_size=3 or (3, 5): an int[] argument as a pair (one value stands for both).
Pair pair(const Args& a, size_t i) {
  const std::vector<int64_t>& v = a.ints(i);
  EMBER_CHECK_VALUE(v.size() == 1 || v.size() == 2, "expected an int or a pair of ints, got ",
                    v.size(), " values");
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}
std::optional<Pair> opt_pair(const Args& a, size_t i) {
  if (!a.has(i) || a.ints(i).empty()) return std::nullopt;
  return pair(a, i);
}
// A 3-d argument: an int or a triple.
Triple triple(const Args& a, size_t i) {
  const std::vector<int64_t>& v = a.ints(i);
  EMBER_CHECK_VALUE(v.size() == 1 || v.size() == 3, "expected an int or a triple of ints, got ",
                    v.size(), " values");
  return v.size() == 3 ? Triple{v[0], v[1], v[2]} : Triple{v[0], v[0], v[0]};
}
std::optional<Triple> opt_triple(const Args& a, size_t i) {
  if (!a.has(i) || a.ints(i).empty()) return std::nullopt;
  return triple(a, i);
}
// A 1-d argument (kernel_size=3 or (3,)) as the second of a pair whose first is 1.
Pair pair1(const Args& a, size_t i, int64_t first = 1) {
  EMBER_CHECK_VALUE(a.ints(i).size() == 1, "expected an int or a 1-tuple, got ", a.ints(i).size(),
                    " values");
  return {first, a.ints(i)[0]};
}

// reduction from PyTorch's arguments, the legacy size_average and reduce first when given.
F::Reduction reduction(const Args& a, size_t size_average, size_t reduce, size_t reduction) {
  if (a.has(size_average) || a.has(reduce)) {
    bool avg = a.opt_flag(size_average).value_or(true), red = a.opt_flag(reduce).value_or(true);
    return !red ? F::Reduction::None : avg ? F::Reduction::Mean : F::Reduction::Sum;
  }
  return F::reduction_from(a.str(reduction));
}

// An activation that takes inplace=: with inplace, the result is written into the input as the
// op's in-place form (inplace_from: under autograd the op's saved input is a clone, never the
// tensor it overwrites).
template <typename Fn>
py::object maybe_inplace(const Args& a, size_t inplace, const char* name, Fn fn) {
  const Tensor& x = a.tensor(0);
  if (!a.flag(inplace)) return py::cast(nogil([&] { return fn(x); }));
  {
    ReleaseGil no_gil;
    Tensor target = x;
    inplace_from(target, name, any_requires_grad({&x}), fn);
  }
  return py::reinterpret_borrow<py::object>(a.object(0));
}


// conv's padding=: ints (one for conv1d, one or two for conv2d); strings are conv2d's own.
Pair conv_padding(const Args& a, size_t i, int spatial) {
  Shape v = to_shape(a.object(i), "padding");
  EMBER_CHECK_VALUE(!v.empty(), "padding: expected an int or a tuple of ints");
  if (spatial == 1) return {0, v[0]};
  return {v[0], v.size() > 1 ? v[1] : v[0]};
}

// interpolate's size= and scale_factor=: the output size, and the scales to map coordinates
// with (PyTorch uses the scale factors given unless recompute_scale_factor is True).
std::pair<Shape, std::vector<double>> interpolate_size(const Tensor& x, py::handle size,
                                                       py::handle scale, bool recompute) {
  EMBER_CHECK_VALUE(!(size.is_none() && scale.is_none()),
                    "either size or scale_factor should be defined");
  EMBER_CHECK_VALUE(size.is_none() || scale.is_none(),
                    "only one of size or scale_factor should be defined");
  int64_t spatial = std::max<int64_t>(x.dim() - 2, 0);
  if (!size.is_none()) {
    Shape out = to_shape(size, "size");
    if (out.size() == 1) out = Shape(static_cast<size_t>(spatial), out[0]);
    EMBER_CHECK_VALUE(static_cast<int64_t>(out.size()) == spatial,
                      "Input and output must have the same number of spatial dimensions, but got "
                      "input with spatial dimensions of ", spatial, " and output size of ",
                      out.size(), ". Please provide input tensor in (N, C, d1, d2, ...,dK) "
                      "format and output size in (o1, o2, ...,oK) format.");
    return {out, {}};
  }
  std::vector<double> f;
  if (py::isinstance<py::sequence>(scale))
    f = scale.cast<std::vector<double>>();
  else
    f.assign(static_cast<size_t>(spatial), scale.cast<double>());
  Shape out = interpolate_size(x, f);
  return {out, recompute ? std::vector<double>{} : f};
}

Tensor pixel_shuffle(const Tensor& x, int64_t r) {
  EMBER_CHECK(x.dim() >= 3, "[pixel_shuffle] expected an input of at least 3 dims, got ", x.sizes());
  int64_t C = x.size(-3), H = x.size(-2), W = x.size(-1);
  EMBER_CHECK(C % (r * r) == 0, "[pixel_shuffle] expected the channels (", C,
              ") to be divisible by the square of the upscale factor (", r * r, ")");
  Shape lead(x.sizes().begin(), x.sizes().end() - 3);
  Shape s = lead;
  for (int64_t v : {C / (r * r), r, r, H, W}) s.push_back(v);
  Tensor y = x.reshape(s);
  auto n = static_cast<int64_t>(lead.size());
  Shape perm;
  for (int64_t d = 0; d < n; ++d) perm.push_back(d);
  for (int64_t d : {0, 3, 1, 4, 2}) perm.push_back(n + d);
  Shape out = lead;
  for (int64_t v : {C / (r * r), H * r, W * r}) out.push_back(v);
  return y.permute(perm).reshape(out);
}

Tensor pixel_unshuffle(const Tensor& x, int64_t r) {
  int64_t C = x.size(-3), H = x.size(-2), W = x.size(-1);
  EMBER_CHECK(H % r == 0 && W % r == 0, "[pixel_unshuffle] expected height and width divisible "
              "by the downscale factor ", r, ", got ", x.sizes());
  Shape lead(x.sizes().begin(), x.sizes().end() - 3);
  Shape s = lead;
  for (int64_t v : {C, H / r, r, W / r, r}) s.push_back(v);
  auto n = static_cast<int64_t>(lead.size());
  Shape perm;
  for (int64_t d = 0; d < n; ++d) perm.push_back(d);
  for (int64_t d : {0, 2, 4, 1, 3}) perm.push_back(n + d);
  Shape out = lead;
  for (int64_t v : {C * r * r, H / r, W / r}) out.push_back(v);
  return x.reshape(s).permute(perm).reshape(out);
}

// An adaptive pool's output_size: an int, or a pair whose None entries keep the input's size.
Pair adaptive_size(py::handle h, const Tensor& x) {
  EMBER_CHECK(x.dim() >= 2, "adaptive pooling expects an input of at least 2 dims, got ",
              x.sizes());
  Pair in{x.size(-2), x.size(-1)};
  if (!py::isinstance<py::sequence>(h)) {
    int64_t v = py::cast<int64_t>(h);
    return {v, v};
  }
  auto seq = py::reinterpret_borrow<py::sequence>(h);
  EMBER_CHECK_VALUE(py::len(seq) == 2, "output_size must be 2, got ", py::len(seq));
  Pair out;
  for (size_t i = 0; i < 2; ++i)
    out[i] = seq[i].is_none() ? in[i] : py::cast<int64_t>(seq[i]);
  return out;
}

// Adaptive max pooling: each output cell the max over its window (PyTorch's windows); as one
// max_pool2d when the output divides the input.
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& x, Pair out) {
  int64_t H = x.size(-2), W = x.size(-1);
  if (H % out[0] == 0 && W % out[1] == 0) {
    Pair k{H / out[0], W / out[1]};
    return max_pool2d_with_indices(x, k, k);
  }
  std::vector<Tensor> rows, row_idx;
  for (int64_t i = 0; i < out[0]; ++i) {
    int64_t h0 = i * H / out[0], h1 = ((i + 1) * H + out[0] - 1) / out[0];
    std::vector<Tensor> cells, idx;
    for (int64_t j = 0; j < out[1]; ++j) {
      int64_t w0 = j * W / out[1], w1 = ((j + 1) * W + out[1] - 1) / out[1];
      Tensor win = x.narrow(-2, h0, h1 - h0).narrow(-1, w0, w1 - w0);
      Shape flat_shape(win.sizes().begin(), win.sizes().end() - 2);
      flat_shape.push_back(-1);
      Tensor flat = win.reshape(flat_shape);
      auto [v, k] = flat.max(-1, true);
      Tensor kh = floor_divide(k, w1 - w0) + h0, kw = remainder(k, w1 - w0) + w0;
      cells.push_back(v);
      idx.push_back(kh * W + kw);
    }
    rows.push_back(cat(cells, -1).unsqueeze(-2));
    row_idx.push_back(cat(idx, -1).unsqueeze(-2));
  }
  return {cat(rows, -2), cat(row_idx, -2)};
}

}  // namespace

void def_nn_ops(OpTable& t) {
  // --- activations ---
  t.def("relu", [](const Args& a) {
    return maybe_inplace(a, 1, "relu_", [](const Tensor& x) { return relu(x); });
  });
  t.def("relu6", [](const Args& a) {
    return maybe_inplace(a, 1, "relu6_", [](const Tensor& x) { return relu6(x); });
  });
  t.def("elu", [](const Args& a) {
    double alpha = a.real(1);
    return maybe_inplace(a, 2, "elu_", [alpha](const Tensor& x) { return elu(x, alpha); });
  });
  t.def("selu", [](const Args& a) {
    return maybe_inplace(a, 1, "selu_", [](const Tensor& x) { return selu(x); });
  });
  t.def("celu", [](const Args& a) {
    double alpha = a.real(1);
    return maybe_inplace(a, 2, "celu_", [alpha](const Tensor& x) { return celu(x, alpha); });
  });
  t.def("leaky_relu",
        [](const Args& a) {
          double s = a.real(1);
          return maybe_inplace(a, 2, "leaky_relu_", [s](const Tensor& x) { return leaky_relu(x, s); });
        });
  t.def("gelu",
        [](const Args& a) { return gelu(a.tensor(0), a.str(1)); });
  t.def("silu", [](const Args& a) {
    return maybe_inplace(a, 1, "silu_", [](const Tensor& x) { return silu(x); });
  });
  t.def("mish", [](const Args& a) {
    return maybe_inplace(a, 1, "mish_", [](const Tensor& x) { return mish(x); });
  });
  t.def("softplus",
        [](const Args& a) { return softplus(a.tensor(0), a.real(1), a.real(2)); });
  t.def("hardtanh",
        [](const Args& a) {
          Scalar lo = a.scalar(1), hi = a.scalar(2);
          return maybe_inplace(a, 3, "hardtanh_", [lo, hi](const Tensor& x) { return hardtanh(x, lo, hi); });
        });
  t.def("hardswish", [](const Args& a) {
    return maybe_inplace(a, 1, "hardswish_", [](const Tensor& x) { return hardswish(x); });
  });
  t.def("hardsigmoid", [](const Args& a) {
    return maybe_inplace(a, 1, "hardsigmoid_", [](const Tensor& x) { return hardsigmoid(x); });
  });
  t.def("logsigmoid", [](const Args& a) { return logsigmoid(a.tensor(0)); });
  t.def("softsign", [](const Args& a) { return softsign(a.tensor(0)); });
  t.def("tanhshrink", [](const Args& a) { return tanhshrink(a.tensor(0)); });
  t.def("threshold",
        [](const Args& a) {
          double th = a.real(1), v = a.real(2);
          return maybe_inplace(a, 3, "threshold_", [th, v](const Tensor& x) { return threshold(x, th, v); });
        });
  t.def("prelu",
        [](const Args& a) { return prelu(a.tensor(0), a.tensor(1)); });
  t.def("glu", [](const Args& a) { return glu(a.tensor(0), a.int64(1)); });
  t.def("sigmoid", [](const Args& a) { return sigmoid(a.tensor(0)); });
  t.def("tanh", [](const Args& a) { return tanh(a.tensor(0)); });
  t.def("softmax",
        [](const Args& a) {
          const Tensor& x = a.tensor(0);
          // PyTorch's implicit dim for a missing one: 0 for 0-, 1- and 3-D input, else 1.
          int64_t d = a.opt_int(1).value_or(x.dim() == 0 || x.dim() == 1 || x.dim() == 3 ? 0 : 1);
          return softmax(x, d, a.dtype(3));
        });
  t.def("softmin",
        [](const Args& a) {
          const Tensor& x = a.tensor(0);
          int64_t d = a.opt_int(1).value_or(x.dim() == 0 || x.dim() == 1 || x.dim() == 3 ? 0 : 1);
          return softmax(-x, d, a.dtype(3));
        });
  t.def("log_softmax",
        [](const Args& a) {
          const Tensor& x = a.tensor(0);
          int64_t d = a.opt_int(1).value_or(x.dim() == 0 || x.dim() == 1 || x.dim() == 3 ? 0 : 1);
          return log_softmax(x, d, a.dtype(3));
        });
  t.def("normalize",
        [](const Args& a) { return F::normalize(a.tensor(0), a.real(1), a.int64(2), a.real(3)); });

  // --- linear, convolution ---
  t.def("linear", [](const Args& a) {
    return linear(a.tensor(0), a.tensor(1), a.tensor_or_undefined(2));
  });
  t.def("bilinear",
        [](const Args& a) {
          return bilinear(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor_or_undefined(3));
        });
  t.def("conv2d",
        [](const Args& a) -> py::object {
          const Tensor &x = a.tensor(0), &w = a.tensor(1);
          Pair d = pair(a, 5), s = pair(a, 3);
          Tensor b = a.tensor_or_undefined(2);
          int64_t g = a.int64(6);
          if (py::isinstance<py::str>(a.object(4))) {
            std::string pad = py::str(a.object(4));
            return py::cast(nogil([&] { return conv2d(x, w, b, s, pad, d, g); }));
          }
          Pair pad = conv_padding(a, 4, 2);
          return py::cast(nogil([&] { return conv2d(x, w, b, s, pad, d, g); }));
        });
  t.def("conv1d",
        [](const Args& a) -> py::object {
          const Tensor &x = a.tensor(0), &w = a.tensor(1);
          Pair d = pair1(a, 5), s = pair1(a, 3);
          Tensor b = a.tensor_or_undefined(2);
          int64_t g = a.int64(6);
          bool named = py::isinstance<py::str>(a.object(4));
          std::string name = named ? std::string(py::str(a.object(4))) : "";
          Pair pad = named ? Pair{0, 0} : conv_padding(a, 4, 1);
          return py::cast(nogil([&] {
            // (N, C, L) as (N, C, 1, L).
            Tensor xs = x.unsqueeze(-2), ws = w.unsqueeze(-2);
            Tensor y = named ? conv2d(xs, ws, b, s, name, d, g) : conv2d(xs, ws, b, s, pad, d, g);
            return y.squeeze(-2);
          }));
        });
  t.def("conv_transpose2d",
        [](const Args& a) {
          return conv_transpose2d(a.tensor(0), a.tensor(1), a.tensor_or_undefined(2), pair(a, 3),
                                  pair(a, 4), pair(a, 5), a.int64(6), pair(a, 7));
        });
  t.def("conv_transpose1d",
        [](const Args& a) {
          return conv_transpose2d(a.tensor(0).unsqueeze(-2), a.tensor(1).unsqueeze(-2),
                                  a.tensor_or_undefined(2), pair1(a, 3), pair1(a, 4, 0),
                                  pair1(a, 5, 0), a.int64(6), pair1(a, 7))
              .squeeze(-2);
        });

  t.def("conv3d",
        [](const Args& a) {
          return conv3d(a.tensor(0), a.tensor(1), a.tensor_or_undefined(2), triple(a, 3),
                        triple(a, 4), triple(a, 5), a.int64(6));
        });
  t.def("conv3d.padding",
        [](const Args& a) {
          return conv3d(a.tensor(0), a.tensor(1), a.tensor_or_undefined(2), triple(a, 3),
                        a.str(4), triple(a, 5), a.int64(6));
        });
  t.def("conv_transpose3d",
        [](const Args& a) {
          return conv_transpose3d(a.tensor(0), a.tensor(1), a.tensor_or_undefined(2),
                                  triple(a, 3), triple(a, 4), triple(a, 5), a.int64(6),
                                  triple(a, 7));
        });

  // --- pooling ---
  t.def("max_pool3d",
        [](const Args& a) -> py::object {
          const Tensor& x = a.tensor(0);
          Triple k = triple(a, 1), p = triple(a, 3), d = triple(a, 4);
          std::optional<Triple> s = opt_triple(a, 2);
          bool ceil = a.flag(5);
          auto r = nogil_any([&] { return max_pool3d_with_indices(x, k, s, p, d, ceil); });
          if (a.flag(6)) return py::make_tuple(std::get<0>(r), std::get<1>(r));
          return py::cast(std::get<0>(r));
        });
  t.def("avg_pool3d",
        [](const Args& a) {
          return avg_pool3d(a.tensor(0), triple(a, 1), opt_triple(a, 2), triple(a, 3), a.flag(4),
                            a.flag(5), a.opt_int(6));
        });
  t.def("adaptive_avg_pool3d", [](const Args& a) {
    const Tensor& x = a.tensor(0);
    EMBER_CHECK(x.dim() >= 3, "adaptive_avg_pool3d: expected 4-D or 5-D input, got ", x.sizes());
    Triple out;
    py::handle h = a.object(1);
    if (py::isinstance<py::sequence>(h)) {
      auto seq = py::reinterpret_borrow<py::sequence>(h);
      EMBER_CHECK_VALUE(py::len(seq) == 3, "output_size must be 3, got ", py::len(seq));
      for (size_t i = 0; i < 3; ++i)
        out[i] = seq[i].is_none() ? x.size(static_cast<int64_t>(i) - 3) : py::cast<int64_t>(seq[i]);
    } else {
      out.fill(py::cast<int64_t>(h));
    }
    return py::cast(nogil([&] { return adaptive_avg_pool3d(x, out); }));
  });
  t.def("max_pool2d",
        [](const Args& a) -> py::object {
          const Tensor& x = a.tensor(0);
          Pair k = pair(a, 1), p = pair(a, 3), d = pair(a, 4);
          std::optional<Pair> s = opt_pair(a, 2);
          bool ceil = a.flag(5);
          auto r = nogil_any([&] { return max_pool2d_with_indices(x, k, s, p, d, ceil); });
          if (a.flag(6)) return py::make_tuple(std::get<0>(r), std::get<1>(r));
          return py::cast(std::get<0>(r));
        });
  t.def("max_pool1d",
        [](const Args& a) -> py::object {
          const Tensor& x = a.tensor(0);
          Pair k = pair1(a, 1), p = pair1(a, 3, 0), d = pair1(a, 4);
          std::optional<Pair> s;
          if (a.has(2) && !a.ints(2).empty()) s = pair1(a, 2);
          bool ceil = a.flag(5);
          auto r = nogil_any(
              [&] { return max_pool2d_with_indices(x.unsqueeze(-2), k, s, p, d, ceil); });
          Tensor v = std::get<0>(r).squeeze(-2), i = std::get<1>(r).squeeze(-2);
          if (a.flag(6)) return py::make_tuple(v, i);
          return py::cast(v);
        });
  t.def("avg_pool2d",
        [](const Args& a) {
          return avg_pool2d(a.tensor(0), pair(a, 1), opt_pair(a, 2), pair(a, 3), a.flag(4),
                            a.flag(5), a.opt_int(6));
        });
  t.def("avg_pool1d",
        [](const Args& a) {
          std::optional<Pair> s;
          if (a.has(2) && !a.ints(2).empty()) s = pair1(a, 2);
          return avg_pool2d(a.tensor(0).unsqueeze(-2), pair1(a, 1), s, pair1(a, 3, 0), a.flag(4),
                            a.flag(5))
              .squeeze(-2);
        });
  t.def("adaptive_avg_pool2d", [](const Args& a) {
    const Tensor& x = a.tensor(0);
    Pair out = adaptive_size(a.object(1), x);
    return py::cast(nogil([&] { return adaptive_avg_pool2d(x, out); }));
  });
  t.def("adaptive_avg_pool1d", [](const Args& a) {
    return adaptive_avg_pool2d(a.tensor(0).unsqueeze(-2), pair1(a, 1)).squeeze(-2);
  });
  t.def("adaptive_max_pool2d",
        [](const Args& a) -> py::object {
          const Tensor& x = a.tensor(0);
          Pair out = adaptive_size(a.object(1), x);
          auto r = nogil_any([&] { return adaptive_max_pool2d(x, out); });
          if (a.flag(2)) return py::make_tuple(std::get<0>(r), std::get<1>(r));
          return py::cast(std::get<0>(r));
        });
  t.def("adaptive_max_pool1d",
        [](const Args& a) -> py::object {
          const Tensor& x = a.tensor(0);
          Pair out = pair1(a, 1);
          auto r = nogil_any([&] { return adaptive_max_pool2d(x.unsqueeze(-2), out); });
          Tensor v = std::get<0>(r).squeeze(-2), i = std::get<1>(r).squeeze(-2);
          if (a.flag(2)) return py::make_tuple(v, i);
          return py::cast(v);
        });

  // --- dropout ---
  t.def("dropout",
        [](const Args& a) {
          double p = a.real(1);
          bool training = a.flag(2);
          return maybe_inplace(a, 3, "dropout_", [p, training](const Tensor& x) {
            return F::dropout(x, p, training);
          });
        });
  // PyTorch 1.13's channel-wise dropouts, with its rules for other ranks: dropout1d takes 2-D
  // (C, L) or 3-D (N, C, L) only; dropout2d warns off 3-D and 4-D but drops per (N, C) entry
  // whatever the rank (a 3-D input is (N, C, L)); dropout3d takes anything but 5-D as unbatched.
  for (int dims : {1, 2, 3}) {
    t.def("dropout" + std::to_string(dims) + "d",
          [dims](const Args& a) {
            double p = a.real(1);
            bool training = a.flag(2);
            int64_t rank = a.tensor(0).dim();
            int64_t spatial = dims;
            if (dims == 1) {
              if (rank != 2 && rank != 3)
                throw std::runtime_error("dropout1d: Expected 2D or 3D input, but received a " +
                                         std::to_string(rank) +
                                         "D input. Note that dropout1d exists to provide "
                                         "channel-wise dropout on inputs with 1 spatial dimension, "
                                         "a channel dimension, and an optional batch dimension "
                                         "(i.e. 2D or 3D inputs).");
            } else if (rank != dims + 1 && rank != dims + 2) {
              std::string msg = "dropout" + std::to_string(dims) + "d: Received a " +
                                std::to_string(rank) + "-D input to dropout" +
                                std::to_string(dims) +
                                "d, which is deprecated and will result in an error in a future "
                                "release. To retain the behavior and silence this warning, "
                                "please use dropout instead.";
              if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) != 0)
                throw py::error_already_set();
              spatial = dims == 2 ? std::max<int64_t>(rank - 2, 0) : std::max<int64_t>(rank - 1, 0);
            } else if (dims == 2 && rank == 3) {
              spatial = 1;  // (N, C, L), as 1.13 reads it
            }
            return maybe_inplace(a, 3, "feature_dropout_", [p, training, spatial](const Tensor& x) {
              return F::feature_dropout(x, p, training, spatial);
            });
          });
  }
  t.def("alpha_dropout",
        [](const Args& a) {
          double p = a.real(1);
          bool training = a.flag(2);
          return maybe_inplace(a, 3, "alpha_dropout_", [p, training](const Tensor& x) {
            return F::alpha_dropout(x, p, training);
          });
        });

  // --- embedding, one-hot ---
  t.def("embedding",
        [](const Args& a) -> py::object {
          const Tensor &idx = a.tensor(0), &w = a.tensor(1);
          std::optional<int64_t> pad = a.opt_int(2);
          std::optional<double> max_norm = a.opt_real(3);
          double norm_type = a.real(4);
          return py::cast(nogil([&] {
            if (max_norm) {  // rows looked up are renormalised in place, as PyTorch's
              Tensor target = w;
              embedding_renorm_(target, idx, *max_norm, norm_type);
            }
            Tensor out = embedding(w, idx);
            if (pad && w.requires_grad() && GradMode::is_enabled()) {
              // The padding row gets no gradient: its lookups are taken through a detached row.
              int64_t p = *pad < 0 ? *pad + w.size(0) : *pad;
              Tensor mask = eq(idx, p).unsqueeze(-1);
              out = where(mask, embedding(w.detach(), idx), out);
            }
            return out;
          }));
        });
  t.def("one_hot",
        [](const Args& a) { return one_hot(a.tensor(0), a.int64(1)); });

  // --- normalisation ---
  t.def("batch_norm",
        [](const Args& a) {
          return F::batch_norm(a.tensor(0), a.tensor_or_undefined(1), a.tensor_or_undefined(2),
                               a.tensor_or_undefined(3), a.tensor_or_undefined(4), a.flag(5),
                               a.real(6), a.real(7));
        });
  t.def("layer_norm",
        [](const Args& a) {
          return F::layer_norm(a.tensor(0), a.shape(1), a.tensor_or_undefined(2),
                               a.tensor_or_undefined(3), a.real(4));
        });
  // --- attention ---
  // PyTorch 2's signature (1.13 had only a private variant): nanoGPT and torch.nn's Transformer
  // layers look for this name and take the fused path when it is there.
  t.def("scaled_dot_product_attention",
        [](const Args& a) {
          return scaled_dot_product_attention(a.tensor(0), a.tensor(1), a.tensor(2),
                                              a.tensor_or_undefined(3), a.real(4), a.flag(5),
                                              a.opt_real(6), a.flag(7));
        });
  // The weights too, as nn.MultiheadAttention(need_weights=True) returns them.
  t.def("_attention_math",
        [](const Args& a) {
          return attention_math(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor_or_undefined(3),
                                a.real(4), a.flag(5), a.opt_real(6));
        });
  t.def("rms_norm",
        [](const Args& a) {
          return F::rms_norm(a.tensor(0), a.shape(1), a.tensor_or_undefined(2), a.opt_real(3));
        });
  t.def("group_norm",
        [](const Args& a) {
          return F::group_norm(a.tensor(0), a.int64(1), a.tensor_or_undefined(2),
                               a.tensor_or_undefined(3), a.real(4));
        });
  t.def("instance_norm",
        [](const Args& a) {
          return F::instance_norm(a.tensor(0), a.tensor_or_undefined(1), a.tensor_or_undefined(2),
                                  a.tensor_or_undefined(3), a.tensor_or_undefined(4), a.flag(5),
                                  a.real(6), a.real(7));
        });
  t.def("local_response_norm",
        [](const Args& a) {
          return F::local_response_norm(a.tensor(0), a.int64(1), a.real(2), a.real(3), a.real(4));
        });

  // --- padding, resizing, rearranging ---
  t.def("pad",
        [](const Args& a) {
          return pad(a.tensor(0), a.shape(1), a.str(2), a.opt_real(3).value_or(0.0));
        });
  for (const char* name : {"interpolate", "upsample"}) {
    t.def(name,
          [](const Args& a) -> py::object {
            const Tensor& x = a.tensor(0);
            auto [out, scales] =
                interpolate_size(x, a.object(1), a.object(2), a.opt_flag(5).value_or(false));
            std::string mode = a.str(3);
            std::optional<bool> ac = a.opt_flag(4);
            EMBER_CHECK_VALUE(!a.flag(6), "interpolate: antialias=True is not supported by ember "
                              "yet");
            return py::cast(nogil([&] { return interpolate(x, out, mode, ac, scales); }));
          });
  }
  t.def("pixel_shuffle",
        [](const Args& a) { return pixel_shuffle(a.tensor(0), a.int64(1)); });
  t.def("pixel_unshuffle",
        [](const Args& a) { return pixel_unshuffle(a.tensor(0), a.int64(1)); });

  // --- recurrent layers (ember.nn.RNN/LSTM/GRU and the cells call these) ---
  t.def("_recurrent",
        [](const Args& a) {
          RecurrentOptions o;
          std::string mode = a.str(5);
          o.kind = mode == "LSTM"       ? RecurrentOptions::Kind::Lstm
                   : mode == "GRU"      ? RecurrentOptions::Kind::Gru
                   : mode == "RNN_RELU" ? RecurrentOptions::Kind::RnnRelu
                                        : RecurrentOptions::Kind::RnnTanh;
          EMBER_CHECK_VALUE(mode == "LSTM" || mode == "GRU" || mode == "RNN_RELU" ||
                                mode == "RNN_TANH",
                            "Unknown recurrent mode '", mode, "'");
          o.num_layers = a.int64(6);
          o.bidirectional = a.flag(7);
          o.batch_first = a.flag(8);
          o.dropout = a.real(9);
          o.training = a.flag(10);
          o.proj_size = a.int64(12);
          // Weights come as (w_ih, w_hh[, b_ih, b_hh][, w_hr]) per layer and direction.
          std::vector<Tensor> w;
          const std::vector<Tensor>& given = a.tensors(3);
          const bool bias = a.flag(4), proj = o.proj_size > 0;
          const size_t per = (bias ? 4 : 2) + (proj ? 1 : 0);
          for (size_t i = 0; i + per <= given.size(); i += per) {
            w.push_back(given[i]);
            w.push_back(given[i + 1]);
            w.push_back(bias ? given[i + 2] : Tensor());
            w.push_back(bias ? given[i + 3] : Tensor());
            if (proj) w.push_back(given[i + per - 1]);
          }
          auto [out, h, c] = recurrent(a.tensor(0), a.tensor_or_undefined(1),
                                       a.tensor_or_undefined(2), w, o, a.tensor_or_undefined(11));
          return std::make_tuple(out, h, c.defined() ? c : h);
        });

  // --- losses ---
  t.def("cross_entropy",
        [](const Args& a) {
          return F::cross_entropy(a.tensor(0), a.tensor(1), a.tensor_or_undefined(2), a.int64(4),
                                  reduction(a, 3, 5, 6), a.real(7));
        });
  t.def("nll_loss",
        [](const Args& a) {
          return F::nll_loss(a.tensor(0), a.tensor(1), a.tensor_or_undefined(2), a.int64(4),
                             reduction(a, 3, 5, 6));
        });
  t.def("mse_loss", [](const Args& a) {
    return F::mse_loss(a.tensor(0), a.tensor(1), reduction(a, 2, 3, 4));
  });
  t.def("l1_loss", [](const Args& a) {
    return F::l1_loss(a.tensor(0), a.tensor(1), reduction(a, 2, 3, 4));
  });
  t.def("smooth_l1_loss",
        [](const Args& a) {
          return F::smooth_l1_loss(a.tensor(0), a.tensor(1), reduction(a, 2, 3, 4), a.real(5));
        });
  t.def("huber_loss",
        [](const Args& a) {
          return F::huber_loss(a.tensor(0), a.tensor(1), F::reduction_from(a.str(2)), a.real(3));
        });
  t.def("binary_cross_entropy",
        [](const Args& a) {
          return F::binary_cross_entropy(a.tensor(0), a.tensor(1), a.tensor_or_undefined(2),
                                         reduction(a, 3, 4, 5));
        });
  t.def("binary_cross_entropy_with_logits",
        [](const Args& a) {
          return F::binary_cross_entropy_with_logits(a.tensor(0), a.tensor(1),
                                                     a.tensor_or_undefined(2),
                                                     reduction(a, 3, 4, 5),
                                                     a.tensor_or_undefined(6));
        });
  t.def("kl_div",
        [](const Args& a) {
          std::string r = a.str(4);
          if (a.has(2) || a.has(3)) {
            F::Reduction red = reduction(a, 2, 3, 4);
            r = red == F::Reduction::None ? "none" : red == F::Reduction::Sum ? "sum" : "mean";
          }
          return F::kl_div(a.tensor(0), a.tensor(1), r, a.flag(5));
        });
  t.def("margin_ranking_loss",
        [](const Args& a) {
          return F::margin_ranking_loss(a.tensor(0), a.tensor(1), a.tensor(2), a.real(3),
                                        reduction(a, 4, 5, 6));
        });
  t.def("hinge_embedding_loss",
        [](const Args& a) {
          return F::hinge_embedding_loss(a.tensor(0), a.tensor(1), a.real(2),
                                         reduction(a, 3, 4, 5));
        });
  t.def("soft_margin_loss", [](const Args& a) {
    return F::soft_margin_loss(a.tensor(0), a.tensor(1), reduction(a, 2, 3, 4));
  });
  t.def("multilabel_soft_margin_loss",
        [](const Args& a) {
          return F::multilabel_soft_margin_loss(a.tensor(0), a.tensor(1),
                                                a.tensor_or_undefined(2), reduction(a, 3, 4, 5));
        });
  t.def("cosine_embedding_loss",
        [](const Args& a) {
          return F::cosine_embedding_loss(a.tensor(0), a.tensor(1), a.tensor(2), a.real(3),
                                          reduction(a, 4, 5, 6));
        });
  t.def("triplet_margin_loss",
        [](const Args& a) {
          return F::triplet_margin_loss(a.tensor(0), a.tensor(1), a.tensor(2), a.real(3),
                                        a.real(4), a.real(5), a.flag(6), reduction(a, 7, 8, 9));
        });
  t.def("poisson_nll_loss",
        [](const Args& a) {
          return F::poisson_nll_loss(a.tensor(0), a.tensor(1), a.flag(2), a.flag(3), a.real(5),
                                     reduction(a, 4, 6, 7));
        });
  t.def("gaussian_nll_loss",
        [](const Args& a) {
          return F::gaussian_nll_loss(a.tensor(0), a.tensor(1), a.tensor(2), a.flag(3),
                                      a.real(4), F::reduction_from(a.str(5)));
        });
  t.def("cosine_similarity",
        [](const Args& a) {
          return F::cosine_similarity(a.tensor(0), a.tensor(1), a.int64(2), a.real(3));
        });
  t.def("pairwise_distance",
        [](const Args& a) {
          return F::pairwise_distance(a.tensor(0), a.tensor(1), a.real(2), a.real(3), a.flag(4));
        });
}

/// torch.nn.functional.multi_head_attention_forward, with its 24 parameters (more than an op
/// table signature takes), all given by the Python wrapper (ember/nn/modules/attention.py).
// torch's own names for nn's ATen ops (torch.lstm_cell, torch.batch_norm_stats, ...): functions
// of ember, not of ember.nn.functional, as in PyTorch.
void def_nn_top_level(OpTable& t) {
  // --- recurrent cells (ember.nn.RNNCell, LSTMCell and GRUCell call these) ---
  t.def("lstm_cell",
        [](const Args& a) {
          const std::vector<Tensor>& hx = a.tensors(1);
          EMBER_CHECK_VALUE(hx.size() == 2, "lstm_cell: hx must be (h, c)");
          auto [h, c] = lstm_cell(a.tensor(0), hx[0], hx[1], a.tensor(2), a.tensor(3),
                                  a.tensor_or_undefined(4), a.tensor_or_undefined(5));
          return std::make_tuple(h, c);
        });
  t.def("gru_cell",
        [](const Args& a) {
          return gru_cell(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3),
                          a.tensor_or_undefined(4), a.tensor_or_undefined(5));
        });
  for (const char* name : {"rnn_tanh_cell", "rnn_relu_cell"}) {
    bool relu = std::string(name) == "rnn_relu_cell";
    t.def(name,
          [relu](const Args& a) {
            return rnn_cell(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3),
                            a.tensor_or_undefined(4), a.tensor_or_undefined(5), relu);
          });
  }

  // --- batch norm's pieces (SyncBatchNorm's steps) ---
  t.def("batch_norm_stats",
        [](const Args& a) { return batch_norm_stats(a.tensor(0), a.real(1)); });
  t.def("batch_norm_elemt",
        [](const Args& a) {
          return batch_norm_elemt(a.tensor(0), a.tensor_or_undefined(1), a.tensor_or_undefined(2),
                                  a.tensor(3), a.tensor(4), a.real(5));
        });
  t.def("batch_norm_gather_stats_with_counts",
        [](const Args& a) {
          return batch_norm_gather_stats_with_counts(
              a.tensor(0), a.tensor(1), a.tensor(2), a.tensor_or_undefined(3),
              a.tensor_or_undefined(4), a.real(5), a.real(6), a.tensor(7));
        });
  t.def("batch_norm_gather_stats",
        [](const Args& a) {
          // Every rank's statistics over the same count.
          const Tensor& mean = a.tensor(1);
          Tensor counts = full({mean.size(0)}, static_cast<double>(a.int64(7)), mean.options());
          return batch_norm_gather_stats_with_counts(
              a.tensor(0), mean, a.tensor(2), a.tensor_or_undefined(3), a.tensor_or_undefined(4),
              a.real(5), a.real(6), counts);
        });
  t.def("batch_norm_update_stats",
        [](const Args& a) {
          return batch_norm_update_stats(a.tensor(0), a.tensor_or_undefined(1),
                                         a.tensor_or_undefined(2), a.real(3));
        });
  t.def("batch_norm_backward_reduce",
        [](const Args& a) {
          return batch_norm_backward_reduce(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3),
                                            a.tensor_or_undefined(4), a.flag(5), a.flag(6),
                                            a.flag(7));
        });
  t.def("batch_norm_backward_elemt",
        [](const Args& a) {
          // count: each rank's number of elements per channel; the formula takes their total.
          double total = a.tensor(7).sum().item<double>();
          return batch_norm_backward_elemt(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor(3),
                                           a.tensor_or_undefined(4), a.tensor(5), a.tensor(6),
                                           total);
        });

  // --- ATen's dropout and weight norm pieces ---
  t.def("native_dropout",
        [](const Args& a) { return F::native_dropout(a.tensor(0), a.real(1), a.opt_flag(2)); });
  t.def("norm_except_dim",
        [](const Args& a) { return F::norm_except_dim(a.tensor(0), a.int64(1), a.int64(2)); });
}

void def_nn_functions(py::module_& functional) {
  auto opt = [](const py::object& o) { return o.is_none() ? Tensor() : o.cast<Tensor>(); };
  functional.def(
      "_multi_head_attention_forward",
      [opt](const Tensor& query, const Tensor& key, const Tensor& value, int64_t embed_dim,
            int64_t num_heads, const py::object& in_proj_weight, const py::object& in_proj_bias,
            const py::object& bias_k, const py::object& bias_v, bool add_zero_attn,
            double dropout_p, const Tensor& out_proj_weight, const py::object& out_proj_bias,
            bool training, const py::object& key_padding_mask, bool need_weights,
            const py::object& attn_mask, bool use_separate_proj_weight,
            const py::object& q_proj_weight, const py::object& k_proj_weight,
            const py::object& v_proj_weight, const py::object& static_k, const py::object& static_v,
            bool average_attn_weights) {
        F::MultiheadAttentionWeights w;
        if (use_separate_proj_weight) {
          w.q_proj_weight = opt(q_proj_weight);
          w.k_proj_weight = opt(k_proj_weight);
          w.v_proj_weight = opt(v_proj_weight);
        } else {
          w.in_proj_weight = opt(in_proj_weight);
        }
        w.in_proj_bias = opt(in_proj_bias);
        w.bias_k = opt(bias_k);
        w.bias_v = opt(bias_v);
        w.out_proj_weight = out_proj_weight;
        w.out_proj_bias = opt(out_proj_bias);
        F::MultiheadAttentionArgs a;
        a.key_padding_mask = opt(key_padding_mask);
        a.attn_mask = opt(attn_mask);
        a.need_weights = need_weights;
        a.average_attn_weights = average_attn_weights;
        a.add_zero_attn = add_zero_attn;
        a.dropout_p = dropout_p;
        a.training = training;
        a.static_k = opt(static_k);
        a.static_v = opt(static_v);
        ReleaseGil no_gil;
        return F::multi_head_attention_forward(query, key, value, embed_dim, num_heads, w, a);
      });
}

}  // namespace ember::python
