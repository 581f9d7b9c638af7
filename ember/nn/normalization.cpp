#include "ember/nn/normalization.h"

#include "ember/core/dtype.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/batch_norm.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/join.h"
#include "ember/ops/layer_norm.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/pointwise.h"
#include "ember/ops/pooling.h"
#include "ember/ops/reduce.h"

namespace ember::nn::functional {
namespace {

// The dims normalised over: the last `n` of x, which must have the given shape.
Dims last_dims(const Tensor& x, const Shape& normalized_shape, const char* op) {
  auto n = static_cast<int64_t>(normalized_shape.size());
  EMBER_CHECK(n >= 1 && x.dim() >= n, "[", op, "] expected an input with at least ", n,
              " dims for normalized_shape ", normalized_shape, ", got shape ", x.sizes());
  Dims dims;
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = x.dim() - n + i;
    EMBER_CHECK(x.size(d) == normalized_shape[static_cast<size_t>(i)], "[", op,
                "] Given normalized_shape=", normalized_shape, ", expected input with shape [*, ",
                normalized_shape, "], but got input of size ", x.sizes());
    dims.push_back(d);
  }
  return dims;
}

double machine_epsilon(DType t) {
  switch (t) {
    case kFloat16:
      return 0.0009765625;
    case kBFloat16:
      return 0.0078125;
    case kFloat64:
      return 2.220446049250313e-16;
    default:
      return 1.1920928955078125e-07;
  }
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  EMBER_OP(layer_norm, x, normalized_shape, weight, bias, eps);
  last_dims(x, normalized_shape, "layer_norm");
  return ember::layer_norm(x, static_cast<int64_t>(normalized_shape.size()), weight, bias, eps);
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                std::optional<double> eps) {
  EMBER_OP(rms_norm, x, normalized_shape, weight, eps);
  Dims dims = last_dims(x, normalized_shape, "rms_norm");
  Tensor xf = x.dtype() == kFloat16 || x.dtype() == kBFloat16 ? x.to(kFloat32) : x;
  Tensor y = xf * rsqrt(mean(xf * xf, dims, true) + eps.value_or(machine_epsilon(x.dtype())));
  y = y.to(x.dtype());
  return weight.defined() ? y * weight : y;
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  EMBER_OP(group_norm, x, num_groups, weight, bias, eps);
  EMBER_CHECK(x.dim() >= 2, "[group_norm] expected an input of at least 2 dims (N, C, *), got ",
              x.sizes());
  int64_t N = x.size(0), C = x.size(1);
  EMBER_CHECK(num_groups > 0 && C % num_groups == 0, "[group_norm] Expected number of channels in "
              "input to be divisible by num_groups, but got input of shape ", x.sizes(),
              " and num_groups=", num_groups);
  // Each group as one row: the statistics of (N, G, rest) (rest spelled out: N may be 0).
  int64_t rest = C / num_groups;
  for (int64_t d = 2; d < x.dim(); ++d) rest *= x.size(d);
  Tensor g = x.reshape({N, num_groups, rest});
  Tensor m = mean(g, {2}, true);
  Tensor v = var(g, {2}, false, true);
  Tensor y = ((g - m) * rsqrt(v + eps)).reshape(x.sizes());
  Shape per_channel(static_cast<size_t>(x.dim()), 1);
  per_channel[1] = C;
  if (weight.defined()) y = y * weight.reshape(per_channel);
  if (bias.defined()) y = y + bias.reshape(per_channel);
  return y;
}

Tensor instance_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                     const Tensor& weight, const Tensor& bias, bool use_input_stats,
                     double momentum, double eps) {
  EMBER_OP(instance_norm, x, running_mean, running_var, weight, bias, use_input_stats, momentum,
           eps);
  EMBER_CHECK(x.dim() >= 3, "[instance_norm] expected an input of at least 3 dims (N, C, *), got ",
              x.sizes());
  // As PyTorch's: batch norm of the (1, N * C, ...) view, whose channels are the instances, with
  // the per-channel tensors repeated N times; the running statistics take the mean over the
  // samples of the repeated ones' update. One kernel and one rounding for 16-bit inputs.
  int64_t N = x.size(0), C = x.size(1);
  Shape shape = x.sizes();
  shape[0] = 1;
  shape[1] = N * C;
  auto repeated = [N](const Tensor& t) { return t.defined() ? repeat(t, {N}) : t; };
  Tensor rm = repeated(running_mean), rv = repeated(running_var);
  Tensor y = batch_norm(x.contiguous().view(shape), rm, rv, repeated(weight), repeated(bias),
                        use_input_stats, momentum, eps);
  {
    NoGradGuard no_grad;
    Tensor out_mean = running_mean, out_var = running_var;  // the caller's buffers, updated
    if (out_mean.defined()) out_mean.copy_(rm.view({N, C}).mean({0}));
    if (out_var.defined()) out_var.copy_(rv.view({N, C}).mean({0}));
  }
  return y.view(x.sizes());
}

Tensor normalize(const Tensor& x, double p, int64_t dim, double eps) {
  EMBER_OP(normalize, x, p, dim, eps);
  Tensor n = norm(x, p, Dims{dim}, true);
  return x / clamp(n, Scalar(eps), std::nullopt).expand_as(x);
}

Tensor local_response_norm(const Tensor& x, int64_t size, double alpha, double beta, double k) {
  EMBER_OP(local_response_norm, x, size, alpha, beta, k);
  EMBER_CHECK(x.dim() >= 3, "[local_response_norm] expected 3D or higher dimensionality input, got ",
              x.dim(), " dims");
  // The mean of x^2 over a window of `size` channels, via a padded running sum along channels.
  int64_t C = x.size(1);
  Tensor sq = x * x;
  Shape pad_shape = sq.sizes();
  pad_shape[1] = size / 2;
  Shape pad_after = sq.sizes();
  pad_after[1] = (size - 1) / 2;
  Tensor padded = cat({zeros(pad_shape, x.options()), sq, zeros(pad_after, x.options())}, 1);
  Tensor acc = padded.narrow(1, 0, C);
  for (int64_t i = 1; i < size; ++i) acc = acc + padded.narrow(1, i, C);
  // PyTorch averages with an avg_pool, which divides integers with truncation, then scales.
  Tensor count = scalar_tensor(Scalar(size), acc.options());
  Tensor mean = is_floating_point(x.dtype()) ? acc / count : div(acc, count, "trunc");
  return x / pow(mean * alpha + k, beta);
}

}  // namespace ember::nn::functional
