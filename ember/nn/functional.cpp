#include "ember/nn/functional.h"

#include <cmath>

#include "ember/core/grad_mode.h"
#include "ember/ops/copy.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/factory.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/reduce.h"

namespace ember::nn::functional {

Tensor dropout(const Tensor& x, double p, bool training) {
  EMBER_OP(dropout, x, p, training);
  EMBER_CHECK(p >= 0 && p <= 1, "[dropout] dropout probability has to be between 0 and 1, but got ",
              p);
  if (!training || p == 0) return x;
  if (p == 1) return x * 0.0;
  Tensor keep = bernoulli(x, 1 - p);
  return x * keep * (1.0 / (1 - p));
}

std::tuple<Tensor, Tensor> native_dropout(const Tensor& x, double p, std::optional<bool> train) {
  EMBER_OP(native_dropout, x, p, train);
  EMBER_CHECK(p >= 0 && p <= 1, "[native_dropout] dropout probability has to be between 0 and 1, "
              "but got ", p);
  if (train.has_value() && !*train)
    return {x.clone(), ones(x.sizes(), x.options().with_dtype(kBool))};
  Tensor mask = bernoulli(x, 1 - p).to(kBool);
  double scale = p == 1 ? 0.0 : 1.0 / (1 - p);  // p = 1 gives zeros, not NaN
  return {x * mask * scale, mask};
}

Tensor norm_except_dim(const Tensor& v, int64_t pow, int64_t dim) {
  EMBER_OP(norm_except_dim, v, pow, dim);
  if (dim == -1) return norm(v, Scalar(pow));
  EMBER_CHECK(dim >= 0 && dim < v.dim(), "[norm_except_dim] dim ", dim, " is out of range for a ",
              v.dim(), "-D tensor");
  Dims others;
  for (int64_t d = 0; d < v.dim(); ++d)
    if (d != dim) others.push_back(d);
  return norm(v, Scalar(pow), others, /*keepdim=*/true);
}

Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::None:
      return loss;
    case Reduction::Sum:
      return loss.sum();
    case Reduction::Mean:
      return loss.mean();
  }
  return loss;
}

Reduction reduction_from(const std::string& r) {
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  if (r == "none") return Reduction::None;
  EMBER_CHECK_VALUE(false, r, " is not a valid value for reduction");
  return Reduction::Mean;
}

Tensor feature_dropout(const Tensor& x, double p, bool training, int64_t spatial) {
  EMBER_OP(feature_dropout, x, p, training, spatial);
  EMBER_CHECK_VALUE(p >= 0 && p <= 1,
                    "[dropout] dropout probability has to be between 0 and 1, but got ", p);
  EMBER_CHECK(x.dim() == spatial + 1 || x.dim() == spatial + 2, "[dropout", spatial,
              "d] expected a ", spatial + 1, "-D or ", spatial + 2, "-D input, got shape ",
              x.sizes());
  if (!training || p == 0) return x;
  if (p == 1) return x * 0.0;
  // One draw per channel, broadcast over the spatial dims.
  Shape mask_shape = x.sizes();
  for (int64_t d = x.dim() - spatial; d < x.dim(); ++d) mask_shape[static_cast<size_t>(d)] = 1;
  Tensor keep = bernoulli(empty(mask_shape, x.options()), 1 - p);
  return x * keep * (1.0 / (1 - p));
}

Tensor alpha_dropout(const Tensor& x, double p, bool training) {
  EMBER_OP(alpha_dropout, x, p, training);
  EMBER_CHECK_VALUE(p >= 0 && p <= 1,
                    "[alpha_dropout] dropout probability has to be between 0 and 1, but got ", p);
  if (!training || p == 0) return x;
  if (p == 1) return x * 0.0;
  // SELU's saturation value, and the affine map that restores the mean and variance.
  const double alpha_p = -1.7580993408473766;
  double a = 1.0 / std::sqrt((alpha_p * alpha_p * p + 1) * (1 - p));
  double b = -a * alpha_p * p;
  Tensor keep = bernoulli(x, 1 - p);
  return (x * keep + (1.0 - keep) * alpha_p) * a + b;
}

namespace {

// (N, C, d1, ...) -> (N * d1 * ..., C): the classes last, every other dim in the batch.
Tensor classes_last(const Tensor& t) {
  Shape perm{0};
  for (int64_t d = 2; d < t.dim(); ++d) perm.push_back(d);
  perm.push_back(1);
  return t.permute(perm).reshape({-1, t.size(1)});
}
Shape without_class_dim(const Tensor& t) {
  Shape s = t.sizes();
  s.erase(s.begin() + 1);
  return s;
}

void check_class_weight(const char* op, const Tensor& weight, int64_t classes) {
  EMBER_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == classes), "[", op,
              "] the class weight must have one entry per class (", classes, "), got shape ",
              weight.sizes());
}
}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                int64_t ignore_index, Reduction reduction) {
  EMBER_OP(nll_loss, input, target, weight, ignore_index, reduction);
  if (input.dim() > 2) {  // (N, C, d1, ...): per-element losses in the target's shape
    Shape rest = without_class_dim(input);
    EMBER_CHECK(target.sizes() == rest, "[nll_loss] expected a target of shape ", rest,
                " for an input of shape ", input.sizes(), ", got ", target.sizes());
    Tensor loss =
        nll_loss(classes_last(input), target.reshape({-1}), weight, ignore_index, reduction);
    return reduction == Reduction::None ? loss.reshape(rest) : loss;
  }
  EMBER_CHECK(input.dim() == 1 || input.dim() == 2,
              "[nll_loss] expected a 1-D (C), 2-D (N, C) or (N, C, d1, ...) input, got ",
              input.sizes());
  EMBER_CHECK(target.dtype() == kInt64,
              "[nll_loss] expected an int64 target of class indices, got ", target.dtype());
  bool batched = input.dim() == 2;
  Tensor logp = batched ? input : input.unsqueeze(0);
  Tensor tgt = batched ? target : target.reshape({1});
  EMBER_CHECK(tgt.dim() == 1 && tgt.size(0) == logp.size(0),
              "[nll_loss] expected a target of shape [", logp.size(0), "], got ", target.sizes());
  check_same_device("nll_loss", {&input, &target, &weight});
  int64_t C = logp.size(1);
  check_class_weight("nll_loss", weight, C);
  Tensor valid = ne(tgt, ignore_index);
  Tensor safe = where(valid, tgt, scalar_tensor(0, kInt64).to(tgt.device()));
  if (tgt.is_cpu() && tgt.numel() > 0) {
    // Out-of-range classes are an error naming the class (the GPU reports it from the kernel).
    Tensor bad = logical_and(valid, logical_or(lt(tgt, 0), ge(tgt, C)));
    if (any(bad).item<bool>()) {
      int64_t idx = argmax(bad.to(kInt32)).item<int64_t>();
      detail::throw_index_error(detail::str_cat("[nll_loss] target ", tgt[idx].item<int64_t>(),
                                                " is out of bounds for ", C, " classes (sample ",
                                                idx, ")"));
    }
  }
  Tensor picked = -logp.gather(1, safe.unsqueeze(1)).squeeze(1);
  Tensor w = valid.to(logp.dtype());
  if (weight.defined()) w = w * weight.to(logp.dtype()).index_select(0, safe);
  // Ignored targets contribute 0, even where their picked log-probability is -inf (0 * inf).
  Tensor loss = where(valid, picked * w, scalar_tensor(0, picked.options()));
  if (reduction == Reduction::Mean) return loss.sum() / w.sum();
  Tensor r = reduce(loss, reduction);
  return batched || reduction != Reduction::None ? r : r.squeeze(0);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     int64_t ignore_index, Reduction reduction, double label_smoothing) {
  EMBER_OP(cross_entropy, input, target, weight, ignore_index, reduction,
                label_smoothing);
  EMBER_CHECK(label_smoothing >= 0 && label_smoothing <= 1,
              "[cross_entropy] label_smoothing must be between 0.0 and 1.0, got ", label_smoothing);
  if (input.dim() > 2) {
    // (N, C, d1, ...): the classes moved last and the rest flattened into the batch give the 2-D
    // case, whose per-sample losses come back in the target's (N, d1, ...) shape.
    Shape rest = without_class_dim(input);
    Tensor tgt;
    if (target.is_floating_point()) {
      EMBER_CHECK(target.sizes() == input.sizes(),
                  "[cross_entropy] class-probability targets must have the input's shape ",
                  input.sizes(), ", got ", target.sizes());
      tgt = classes_last(target);
    } else {
      EMBER_CHECK(target.sizes() == rest, "[cross_entropy] expected a target of shape ", rest,
                  " for an input of shape ", input.sizes(), ", got ", target.sizes());
      tgt = target.reshape({-1});
    }
    Tensor loss =
        cross_entropy(classes_last(input), tgt, weight, ignore_index, reduction, label_smoothing);
    return reduction == Reduction::None ? loss.reshape(rest) : loss;
  }
  int64_t class_dim = input.dim() == 1 ? 0 : 1;
  Tensor logp = log_softmax(input, class_dim);
  int64_t C = input.size(class_dim);
  if (target.is_floating_point()) {
    EMBER_CHECK(
        ignore_index == -100,
        "[cross_entropy] ignore_index is not supported for floating point (probability) targets, got ",
        ignore_index);
    check_class_weight("cross_entropy", weight, C);
    EMBER_CHECK(target.sizes() == input.sizes(),
                "[cross_entropy] class-probability targets must have the input's shape ",
                input.sizes(), ", got ", target.sizes());
    Tensor t = label_smoothing > 0 ? target * (1 - label_smoothing) + label_smoothing / C : target;
    Tensor per = -(logp * t);
    if (weight.defined()) per = per * weight.view(class_dim == 1 ? Shape{1, C} : Shape{C});
    return reduce(per.sum({class_dim}), reduction);
  }
  Tensor nll = nll_loss(logp, target, weight, ignore_index, reduction);
  if (label_smoothing == 0) return nll;
  // Smoothing mixes in the mean negative log-probability over all classes.
  Tensor batched = input.dim() == 1 ? logp.unsqueeze(0) : logp;
  Tensor tgt = input.dim() == 1 ? target.reshape({1}) : target;
  Tensor is_valid = ne(tgt, ignore_index);
  Tensor valid = is_valid.to(logp.dtype());
  // where, not a product with valid: an ignored row's sum may be -inf, and -inf * 0 is NaN.
  Tensor zero = scalar_tensor(0, logp.options());
  Tensor smooth = where(is_valid, -batched.sum({1}), zero);
  // The mean divides by the total weight of the counted targets, as nll_loss's does.
  Tensor total = valid.sum();
  if (weight.defined()) {
    smooth = where(is_valid, -(batched * weight.view({1, C})).sum({1}), zero);
    total = (weight.index_select(0, where(is_valid, tgt, 0)) * valid).sum();
  }
  Tensor smooth_loss =
      reduction == Reduction::Mean ? smooth.sum() / total : reduce(smooth, reduction);
  if (input.dim() == 1 && reduction == Reduction::None) smooth_loss = smooth_loss.squeeze(0);
  return nll * (1 - label_smoothing) + smooth_loss * (label_smoothing / C);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  EMBER_OP(mse_loss, input, target, reduction);
  Tensor d = input - target;
  return reduce(d * d, reduction);
}

}  // namespace ember::nn::functional
