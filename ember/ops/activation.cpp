#include "ember/ops/activation.h"

#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/pointwise.h"
#include "ember/ops/views.h"

namespace ember {
namespace {

// An activation's forward kernel and its backward, a lambda of (g, x) giving the input's gradient.
template <typename Backward>
Tensor activation(UnaryOp op, const char* node, const Tensor& x, const UnaryParams& p,
                  Backward backward) {
  Tensor out = detail::unary(op, x, p);
  if (any_requires_grad({&x}))
    record(node, {&out}, {&x}, [sx = SavedTensor(x), backward](const Tensor& g) {
      return TensorList{backward(g, sx.get())};
    });
  return out;
}

Tensor zero_like(const Tensor& g) { return scalar_tensor(0, g.options()); }

}  // namespace

Tensor gelu(const Tensor& x, const std::string& approximate) {
  EMBER_OP(gelu, x, approximate);
  EMBER_CHECK_VALUE(approximate == "none" || approximate == "tanh",
                    "[gelu] approximate must be 'none' or 'tanh', got '", approximate, "'");
  if (approximate == "none")
    return activation(UnaryOp::Gelu, "GeluBackward0", x, {}, [](const Tensor& g, const Tensor& x) {
      if (!GradMode::is_enabled()) return detail::binary(BinaryOp::GeluBackward, g, x);
      // Under create_graph, as differentiable ops: Phi(x) + x phi(x).
      constexpr double kInvSqrt2 = 0.7071067811865476, kInvSqrt2Pi = 0.3989422804014327;
      return g * ((erf(x * kInvSqrt2) + 1.0) * 0.5 + x * exp(x * x * -0.5) * kInvSqrt2Pi);
    });
  return activation(UnaryOp::GeluTanh, "GeluBackward0", x, {}, [](const Tensor& g, const Tensor& x) {
    // d/dx 0.5 x (1 + tanh(u)), u = k (x + c x^3): 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2).
    constexpr double k = 0.7978845608028654, c = 0.044715;
    Tensor t = tanh((x + x * x * x * c) * k);
    return g * ((t + 1.0) * 0.5 + x * 0.5 * (1.0 - t * t) * ((x * x * (3 * c) + 1.0) * k));
  });
}

Tensor silu(const Tensor& x) {
  EMBER_OP(silu, x);
  return activation(UnaryOp::Silu, "SiluBackward0", x, {}, [](const Tensor& g, const Tensor& x) {
    if (!GradMode::is_enabled()) return detail::binary(BinaryOp::SiluBackward, g, x);
    Tensor s = sigmoid(x);  // under create_graph, as differentiable ops
    return g * s * (1.0 + x * (1.0 - s));
  });
}

Tensor mish(const Tensor& x) {
  EMBER_OP(mish, x);
  return activation(UnaryOp::Mish, "MishBackward0", x, {}, [](const Tensor& g, const Tensor& x) {
    Tensor t = tanh(softplus(x));
    return g * (t + x * (1.0 - t * t) * sigmoid(x));
  });
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  EMBER_OP(softplus, x, beta, threshold);
  return activation(UnaryOp::Softplus, "SoftplusBackward0", x, {beta, threshold},
                    [beta, threshold](const Tensor& g, const Tensor& x) {
                      Tensor bx = x * beta;
                      return where(gt(bx, threshold), g, g * sigmoid(bx));
                    });
}

Tensor elu(const Tensor& x, double alpha, double scale) {
  EMBER_OP(elu, x, alpha, scale);
  return activation(UnaryOp::Elu, "EluBackward0", x, {alpha, scale},
                    [alpha, scale](const Tensor& g, const Tensor& x) {
                      return where(gt(x, 0), g * scale, g * (exp(x) * (alpha * scale)));
                    });
}

Tensor selu(const Tensor& x) { return elu(x, 1.6732632423543772, 1.0507009873554805); }

Tensor celu(const Tensor& x, double alpha) {
  EMBER_OP(celu, x, alpha);
  EMBER_CHECK_VALUE(alpha != 0, "[celu] ZeroDivisionError: alpha must not be 0");
  // celu(x) = max(0, x) + min(0, alpha (exp(x / alpha) - 1)) = elu(x / alpha) * alpha where x < 0.
  return where(gt(x, 0), x, elu(x / alpha, 1.0, alpha));
}

Tensor leaky_relu(const Tensor& x, double slope) {
  EMBER_OP(leaky_relu, x, slope);
  return activation(UnaryOp::LeakyRelu, "LeakyReluBackward0", x, {slope},
                    [slope](const Tensor& g, const Tensor& x) {
                      return where(gt(x, 0), g, g * slope);
                    });
}

Tensor hardtanh(const Tensor& x, Scalar min_val, Scalar max_val) {
  EMBER_OP(hardtanh, x, min_val, max_val);
  // Integer inputs stay integers (PyTorch's int Scalars: relu6 of ints is ints).
  Tensor out;
  {
    NoGradGuard no_grad;
    out = x.is_floating_point() ? clamp(x, min_val, max_val)
                                : clamp(x, Scalar(min_val.to<int64_t>()),
                                        Scalar(max_val.to<int64_t>()));
  }
  if (any_requires_grad({&x}))
    record("HardtanhBackward0", {&out}, {&x},
           [sx = SavedTensor(x), lo = min_val.to_double(), hi = max_val.to_double()](
               const Tensor& g) {
             const Tensor& x = sx.get();
             return TensorList{where(logical_and(gt(x, lo), lt(x, hi)), g, zero_like(g))};
           });
  return out;
}

Tensor relu6(const Tensor& x) { return hardtanh(x, 0, 6); }

Tensor hardsigmoid(const Tensor& x) {
  EMBER_OP(hardsigmoid, x);
  return activation(UnaryOp::Hardsigmoid, "HardsigmoidBackward0", x, {},
                    [](const Tensor& g, const Tensor& x) {
                      return where(logical_and(gt(x, -3.0), lt(x, 3.0)), g / 6.0, zero_like(g));
                    });
}

Tensor hardswish(const Tensor& x) {
  EMBER_OP(hardswish, x);
  return activation(UnaryOp::Hardswish, "HardswishBackward0", x, {},
                    [](const Tensor& g, const Tensor& x) {
                      return where(lt(x, -3.0), zero_like(g),
                                   where(le(x, 3.0), g * ((x * 2.0 + 3.0) / 6.0), g));
                    });
}

Tensor logsigmoid(const Tensor& x) {
  EMBER_OP(logsigmoid, x);
  return activation(UnaryOp::Logsigmoid, "LogSigmoidBackward0", x, {},
                    [](const Tensor& g, const Tensor& x) { return g * sigmoid(-x); });
}

Tensor softsign(const Tensor& x) {
  EMBER_OP(softsign, x);
  return x / (abs(x) + 1.0);
}

Tensor tanhshrink(const Tensor& x) {
  EMBER_OP(tanhshrink, x);
  return x - tanh(x);
}

Tensor threshold(const Tensor& x, double threshold_, double value) {
  EMBER_OP(threshold, x, threshold_, value);  // a parameter called threshold would hide the op
  return where(gt(x, threshold_), x, scalar_tensor(value, x.options()));
}

Tensor prelu(const Tensor& x, const Tensor& weight) {
  EMBER_OP(prelu, x, weight);
  check_defined("prelu", weight, "weight");
  Tensor w = weight;
  if (weight.numel() != 1) {
    EMBER_CHECK(x.dim() >= 2 && weight.numel() == x.size(1), "[prelu] weight has ",
                weight.numel(), " elements but the input has ", x.dim() >= 2 ? x.size(1) : 1,
                " channels (dim 1)");
    Shape s(static_cast<size_t>(x.dim()), 1);
    s[1] = weight.numel();
    w = weight.reshape(s);
  }
  return where(gt(x, 0), x, x * w);
}

Tensor glu(const Tensor& x, int64_t dim) {
  EMBER_OP(glu, x, dim);
  int64_t d = wrap_dim(dim, x.dim(), "glu");
  EMBER_CHECK(x.size(d) % 2 == 0, "[glu] halving dimension must be even, but dimension ", d,
              " is size ", x.size(d));
  int64_t half = x.size(d) / 2;
  return x.narrow(d, 0, half) * sigmoid(x.narrow(d, half, half));
}

}  // namespace ember
