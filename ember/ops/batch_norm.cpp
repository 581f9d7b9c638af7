#include "ember/ops/batch_norm.h"

#include "ember/ops/autograd_support.h"
#include "ember/ops/copy.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/reduce.h"

namespace ember {
namespace {

DType stats_dtype(const Tensor& x) { return x.dtype() == kFloat64 ? kFloat64 : kFloat32; }

// A per-channel tensor as the kernels take it: contiguous, in the statistics dtype.
Tensor per_channel(const Tensor& t, DType dtype) {
  return t.defined() ? t.to(dtype).contiguous() : t;
}

Tensor empty_channels(const Tensor& x) {
  return empty({x.size(1)}, TensorOptions(stats_dtype(x)).with_device(x.device()));
}

void check_input(const char* op, const Tensor& x) {
  check_defined(op, x);
  EMBER_CHECK(x.dim() >= 2, "[", op, "] expected an input with at least 2 dims (N, C, ...), got ",
              x.sizes());
  EMBER_CHECK(x.is_floating_point(), "[", op, "] expected a floating point input, got ", x.dtype());
}

void check_per_channel(const char* op, const Tensor& x,
                       std::initializer_list<const Tensor*> per_channel_tensors) {
  for (const Tensor* t : per_channel_tensors) {
    if (!t->defined()) continue;
    check_same_device(op, {&x, t});
    EMBER_CHECK(t->numel() == x.size(1), "[", op, "] expected per-channel tensors of ", x.size(1),
                " elements, got ", t->sizes());
  }
}

// Elements per channel: N times the product of the dims after C.
int64_t channel_count(const Tensor& x) { return x.size(1) ? x.numel() / x.size(1) : 0; }

Shape channel_view(const Tensor& x) {
  Shape s(static_cast<size_t>(x.dim()), 1);
  s[1] = x.size(1);
  return s;
}

Shape reduced_dims(const Tensor& x) {
  Shape dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  return dims;
}

// running = (1 - momentum) * running + momentum * batch, in place, for each running statistic
// given; the variance's update is the unbiased one (count elements per channel).
void update_running(const Tensor& running_mean, const Tensor& running_var, const Tensor& mean,
                    const Tensor& var, double momentum, int64_t count) {
  NoGradGuard no_grad;
  Tensor rm = running_mean, rv = running_var;
  if (rm.defined()) rm.mul_(1 - momentum).add_(mean * momentum);
  if (rv.defined())
    rv.mul_(1 - momentum).add_(var * (momentum * static_cast<double>(count) / (count - 1)));
}

// x contiguous -> (mean, biased variance) per channel.
std::pair<Tensor, Tensor> mean_var(const Tensor& x) {
  Tensor mean = empty_channels(x), var = empty_channels(x);
  EMBER_DISPATCH_DEVICE(x.device(), batch_norm_stats, x, mean, var);
  return {mean, var};
}

Tensor elemt(const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& weight,
             const Tensor& bias) {
  Tensor out = empty(x.sizes(), x.options());
  DType st = stats_dtype(x);
  EMBER_DISPATCH_DEVICE(x.device(), batch_norm_elemt, x, per_channel(mean, st),
                        per_channel(invstd, st), per_channel(weight, st), per_channel(bias, st),
                        out);
  return out;
}

std::pair<Tensor, Tensor> backward_sums(const Tensor& grad_out, const Tensor& x,
                                        const Tensor& mean) {
  Tensor sum_dy = empty_channels(x), sum_dy_xmu = empty_channels(x);
  EMBER_DISPATCH_DEVICE(x.device(), batch_norm_backward_reduce, grad_out, x,
                        per_channel(mean, stats_dtype(x)), sum_dy, sum_dy_xmu);
  return {sum_dy, sum_dy_xmu};
}

Tensor backward_elemt(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                      const Tensor& invstd, const Tensor& weight, const Tensor& sum_dy,
                      const Tensor& sum_dy_xmu, double count) {
  Tensor gx = empty(x.sizes(), x.options());
  DType st = stats_dtype(x);
  EMBER_DISPATCH_DEVICE(x.device(), batch_norm_backward_elemt, grad_out, x, per_channel(mean, st),
                        per_channel(invstd, st), per_channel(weight, st), per_channel(sum_dy, st),
                        per_channel(sum_dy_xmu, st), count, gx);
  return gx;
}

// The backward with create_graph: the same formulas from differentiable ops, so that the
// gradient has a graph of its own (the kernels' results would have none). In training, mean and
// invstd are recomputed from x, on which they depend.
TensorList differentiable_backward(const Tensor& g, const Tensor& x, const Tensor& weight,
                                   const Tensor& mean, const Tensor& invstd, bool training,
                                   double eps) {
  Shape dims = reduced_dims(x), view = channel_view(x);
  Tensor m = mean.view(view), is = invstd.view(view);
  if (training) {
    m = x.mean(dims, true);
    is = rsqrt(x.var(dims, /*unbiased=*/false, true) + eps);
  }
  Tensor xhat = (x - m) * is;
  Tensor scale = weight.defined() ? is * weight.view(view) : is;
  Tensor gx =
      training ? (g - g.mean(dims, true) - xhat * (g * xhat).mean(dims, true)) * scale : g * scale;
  return {gx, (g * xhat).sum(dims), g.sum(dims)};
}

}  // namespace

Tensor batch_norm(const Tensor& x_in, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps) {
  EMBER_OP(batch_norm, x_in, running_mean, running_var, weight, bias, training, momentum, eps);
  if (x_in.defined() && x_in.numel() == 0) {
    // Nothing to normalise (any shape, as PyTorch's): still a result autograd follows to input,
    // weight and bias.
    Tensor out = x_in.clone();
    if (weight.defined() && weight.numel() > 0) out = out * weight.select(0, 0);
    if (bias.defined() && bias.numel() > 0) out = out + bias.select(0, 0);
    return out;
  }
  check_input("batch_norm", x_in);
  check_per_channel("batch_norm", x_in, {&running_mean, &running_var, &weight, &bias});
  Tensor x = x_in.contiguous();
  int64_t count = channel_count(x);
  Tensor mean, invstd;
  if (training) {
    EMBER_CHECK(
        count > 1,
        "[batch_norm] expected more than 1 value per channel when training, got input size ",
        x.sizes());
    Tensor var;
    std::tie(mean, var) = mean_var(x);
    invstd = rsqrt(var + eps);
    update_running(running_mean, running_var, mean, var, momentum, count);
  } else {
    EMBER_CHECK(running_mean.defined() && running_var.defined(),
                "[batch_norm] running_mean and running_var must be defined in evaluation mode");
    NoGradGuard no_grad;
    mean = per_channel(running_mean, stats_dtype(x));
    invstd = rsqrt(per_channel(running_var, stats_dtype(x)) + eps);
  }
  Tensor y = elemt(x, mean, invstd, weight, bias);
  if (any_requires_grad({&x, &weight, &bias})) {
    record("NativeBatchNormBackward0", {&y}, {&x, &weight, &bias},
           [sx = SavedTensor(x), sw = SavedTensor(weight), mean, invstd, training, eps, count](
               const Tensor& g, const Node& n) -> TensorList {
             const Tensor& x = sx.get();
             const Tensor& w = sw.get();
             if (GradMode::is_enabled())
               return differentiable_backward(g, x, w, mean, invstd, training, eps);
             Tensor gc = g.contiguous();
             Tensor gx, gw, gb, sum_dy, sum_dy_xmu;
             // Evaluation-mode statistics are constants: the input's gradient needs no sums.
             if (training || n.needs_input_grad(1) || n.needs_input_grad(2))
               std::tie(sum_dy, sum_dy_xmu) = backward_sums(gc, x, mean);
             if (n.needs_input_grad(0))
               gx = training ? backward_elemt(gc, x, mean, invstd, w, sum_dy, sum_dy_xmu,
                                              static_cast<double>(count))
                             : backward_elemt(gc, x, mean, invstd, w, Tensor(), Tensor(), 1);
             if (w.defined() && n.needs_input_grad(1)) gw = (sum_dy_xmu * invstd).to(w.dtype());
             if (n.needs_input_grad(2)) gb = sum_dy.to(w.defined() ? w.dtype() : sum_dy.dtype());
             return {gx, gw, gb};
           });
  }
  return y;
}

std::tuple<Tensor, Tensor> batch_norm_stats(const Tensor& x_in, double eps) {
  EMBER_OP(batch_norm_stats, x_in, eps);
  check_input("batch_norm_stats", x_in);
  Tensor x = x_in.contiguous();
  auto [mean, var] = mean_var(x);
  return {mean, rsqrt(var + eps)};
}

std::tuple<Tensor, Tensor> batch_norm_update_stats(const Tensor& x_in, const Tensor& running_mean,
                                                   const Tensor& running_var, double momentum) {
  EMBER_OP(batch_norm_update_stats, x_in, running_mean, running_var, momentum);
  check_input("batch_norm_update_stats", x_in);
  check_per_channel("batch_norm_update_stats", x_in, {&running_mean, &running_var});
  Tensor x = x_in.contiguous();
  auto [mean, var] = mean_var(x);
  update_running(running_mean, running_var, mean, var, momentum, channel_count(x));
  return {mean, var};
}

Tensor batch_norm_elemt(const Tensor& x, const Tensor& weight, const Tensor& bias,
                        const Tensor& mean, const Tensor& invstd, double eps) {
  EMBER_OP(batch_norm_elemt, x, weight, bias, mean, invstd, eps);
  check_input("batch_norm_elemt", x);
  check_defined("batch_norm_elemt", mean, "mean");
  check_defined("batch_norm_elemt", invstd, "invstd");
  check_per_channel("batch_norm_elemt", x, {&weight, &bias, &mean, &invstd});
  return elemt(x.contiguous(), mean, invstd, weight, bias);
}

std::tuple<Tensor, Tensor> batch_norm_gather_stats_with_counts(
    const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& running_mean,
    const Tensor& running_var, double momentum, double eps, const Tensor& counts) {
  EMBER_OP(batch_norm_gather_stats_with_counts, x, mean, invstd, running_mean, running_var,
           momentum, eps, counts);
  check_input("batch_norm_gather_stats_with_counts", x);
  EMBER_CHECK(mean.dim() == 2 && invstd.sizes() == mean.sizes() && mean.size(1) == x.size(1) &&
                  counts.dim() == 1 && counts.size(0) == mean.size(0),
              "[batch_norm_gather_stats_with_counts] expected mean and invstd of shape (W, ",
              x.size(1), ") and counts of shape (W), got ", mean.sizes(), ", ", invstd.sizes(),
              " and ", counts.sizes());
  NoGradGuard no_grad;
  // Chan et al.'s parallel variance: the union's M2 is the batches' M2 plus each batch's
  // count * (its mean - the union's mean)^2.
  DType st = stats_dtype(x);
  Tensor n = counts.to(st).view({-1, 1});
  Tensor total = n.sum();
  Tensor m = mean.to(st), var = invstd.to(st).pow(-2) - eps;
  Tensor union_mean = (m * n).sum({0}) / total;
  Tensor m2 = (var * n).sum({0}) + (n * (m - union_mean).square()).sum({0});
  Tensor union_var = m2 / total;
  if (running_mean.defined() && running_var.defined()) {
    Tensor rm = running_mean, rv = running_var;
    rm.mul_(1 - momentum).add_(union_mean * momentum);
    rv.mul_(1 - momentum).add_(m2 / (total - 1) * momentum);
  }
  return {union_mean, rsqrt(union_var + eps)};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> batch_norm_backward_reduce(
    const Tensor& grad_out, const Tensor& x_in, const Tensor& mean, const Tensor& invstd,
    const Tensor& weight, bool input_g, bool weight_g, bool bias_g) {
  EMBER_OP(batch_norm_backward_reduce, grad_out, x_in, mean, invstd, weight, input_g, weight_g,
           bias_g);
  check_input("batch_norm_backward_reduce", x_in);
  EMBER_CHECK(grad_out.sizes() == x_in.sizes(),
              "[batch_norm_backward_reduce] expected grad_out of the input's shape ", x_in.sizes(),
              ", got ", grad_out.sizes());
  check_per_channel("batch_norm_backward_reduce", x_in, {&mean, &invstd, &weight});
  Tensor x = x_in.contiguous();
  auto [sum_dy, sum_dy_xmu] = backward_sums(grad_out.to(x.dtype()).contiguous(), x, mean);
  Tensor gw = weight_g && weight.defined() ? (sum_dy_xmu * invstd).to(weight.dtype()) : Tensor();
  Tensor gb = bias_g ? sum_dy : Tensor();
  if (!input_g) sum_dy = sum_dy_xmu = Tensor();
  return {sum_dy, sum_dy_xmu, gw, gb};
}

Tensor batch_norm_backward_elemt(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                                 const Tensor& invstd, const Tensor& weight, const Tensor& sum_dy,
                                 const Tensor& sum_dy_xmu, double count) {
  EMBER_OP(batch_norm_backward_elemt, grad_out, x, mean, invstd, weight, sum_dy, sum_dy_xmu, count);
  check_input("batch_norm_backward_elemt", x);
  EMBER_CHECK(grad_out.sizes() == x.sizes(),
              "[batch_norm_backward_elemt] expected grad_out of the input's shape ", x.sizes(),
              ", got ", grad_out.sizes());
  EMBER_CHECK(count > 0, "[batch_norm_backward_elemt] expected a positive count, got ", count);
  check_per_channel("batch_norm_backward_elemt", x,
                    {&mean, &invstd, &weight, &sum_dy, &sum_dy_xmu});
  return backward_elemt(grad_out.to(x.dtype()).contiguous(), x.contiguous(), mean, invstd, weight,
                        sum_dy, sum_dy_xmu, count);
}

}  // namespace ember
