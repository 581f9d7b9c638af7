#include "ember/ops/random.h"

#include <limits>

#include "ember/core/grad_mode.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/reduce.h"
#include "ember/ops/sort.h"

namespace ember {

Tensor bernoulli(const Tensor& p, Generator* gen) {
  EMBER_OP(bernoulli, p, gen);
  check_defined("bernoulli", p);
  Tensor out;
  {
    NoGradGuard no_grad;
    Tensor pf = p.is_floating_point() ? p : p.to(kDefaultFloat);
    Tensor u = rand(p.sizes(), TensorOptions(pf.dtype()).with_device(p.device()), gen);
    out = lt(u, pf).to(p.dtype());
  }
  // A draw does not move with its probabilities: autograd follows it with zero gradients, as
  // PyTorch's (normal's likewise; rsample-style gradients are the distributions' business).
  if (any_requires_grad({&p}))
    record("BernoulliBackward0", {&out}, {&p}, [](const Tensor& g) {
      return TensorList{zeros_like(g)};
    });
  return out;
}

Tensor& bernoulli_(Tensor& t, double p, Generator* gen) {
  EMBER_OP(bernoulli_, t, p, gen);
  NoGradGuard no_grad;
  t.copy_(bernoulli(t, p, gen));
  return t;
}

Tensor& bernoulli_(Tensor& t, const Tensor& p, Generator* gen) {
  EMBER_OP(bernoulli_, t, p, gen);
  NoGradGuard no_grad;
  t.copy_(bernoulli(p.expand(t.sizes()).contiguous(), gen));
  return t;
}

Tensor& exponential_(Tensor& t, double lambd, Generator* gen) {
  EMBER_OP(exponential_, t, lambd, gen);
  EMBER_CHECK(lambd > 0, "[exponential_] expects lambda > 0.0, but found lambda=", lambd);
  NoGradGuard no_grad;
  // -log(1 - u) / lambd; 1 - u is in (0, 1], so the draw is finite.
  Tensor u = rand(t.sizes(), TensorOptions(kFloat64).with_device(t.device()), gen);
  t.copy_(log1p(-u) / -lambd);
  return t;
}

Tensor& random_(Tensor& t, int64_t from, std::optional<int64_t> to, Generator* gen) {
  EMBER_OP(random_, t, from, to, gen);
  int64_t hi;
  if (to) {
    hi = *to;
  } else {
    switch (t.dtype()) {
      case kFloat16: hi = int64_t{1} << 11; break;
      case kBFloat16: hi = int64_t{1} << 8; break;
      case kFloat32: hi = int64_t{1} << 24; break;
      case kFloat64: hi = int64_t{1} << 53; break;
      case kBool: hi = 2; break;
      case kUInt8: hi = 256; break;
      case kInt8:
      case kInt16:
      case kInt32: hi = integral_max(t.dtype()); break;
      default: hi = std::numeric_limits<int64_t>::max(); break;
    }
  }
  EMBER_CHECK(from < hi, "[random_] expects 'from' to be less than 'to', but got from=", from,
              " >= to=", hi);
  NoGradGuard no_grad;
  t.copy_(randint(from, hi, t.sizes(), TensorOptions(kInt64).with_device(t.device()), gen));
  return t;
}

Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen) {
  EMBER_OP(normal, mean, std, gen);
  check_same_device("normal", {&mean, &std});
  Tensor out;
  {
    NoGradGuard no_grad;
    Tensor m = mean.is_floating_point() ? mean : mean.to(kDefaultFloat);
    Shape s = broadcast_shapes(m.sizes(), std.sizes(), "normal");
    out = m + std * randn(s, TensorOptions(m.dtype()).with_device(m.device()), gen);
  }
  if (any_requires_grad({&mean, &std}))
    record("NormalBackward3", {&out}, {&mean, &std},
           [sm = mean.sizes(), ss = std.sizes()](const Tensor& g) {
             return TensorList{zeros(sm, g.options()), zeros(ss, g.options())};
           });
  return out;
}

Tensor multinomial(const Tensor& probs, int64_t n, bool replacement, Generator* gen) {
  EMBER_OP(multinomial, probs, n, replacement, gen);
  check_defined("multinomial", probs);
  EMBER_CHECK(probs.dim() == 1 || probs.dim() == 2, "[multinomial] prob_dist must be 1 or 2 dim, "
              "got shape ", probs.sizes());
  EMBER_CHECK(probs.is_floating_point(), "[multinomial] only supports floating-point dtypes for "
              "input, got ", probs.dtype());
  int64_t k = probs.size(-1);
  EMBER_CHECK(n > 0, "[multinomial] cannot sample n_sample <= 0 samples");
  EMBER_CHECK(replacement || n <= k, "[multinomial] cannot sample n_sample > prob_dist.size(-1) "
              "samples without replacement");
  NoGradGuard no_grad;
  Tensor p = (probs.dim() == 1 ? probs.unsqueeze(0) : probs).to(kFloat64);
  EMBER_CHECK(all(ge(p, 0)).item<bool>() && all(isfinite(p)).item<bool>(),
              "[multinomial] probability tensor contains either `inf`, `nan` or element < 0");
  Tensor total = sum(p, {1}, true);
  EMBER_CHECK(all(gt(total, 0)).item<bool>(), "[multinomial] invalid multinomial distribution "
              "(sum of probabilities <= 0)");
  TensorOptions o = TensorOptions(kFloat64).with_device(p.device());
  Tensor out;
  if (replacement) {
    // Inverse transform: the first category whose cumulative probability exceeds a uniform draw
    // (counted as the categories whose cumulative probability is at most the draw).
    Tensor cdf = cumsum(p / total, 1);
    Tensor u = rand({p.size(0), n}, o, gen);
    Tensor idx = sum(le(cdf.unsqueeze(1), u.unsqueeze(2)), {2});
    out = clamp(idx, std::nullopt, Scalar(k - 1)).to(kInt64);
  } else {
    // Without replacement, PyTorch's way: the n largest p / q with q exponential draws (a
    // Gumbel top-k); zero-probability categories come last.
    Tensor q = empty(p.sizes(), o);
    exponential_(q, 1, gen);
    out = std::get<1>(topk(p / q, n, 1, true, true));
  }
  return probs.dim() == 1 ? out.squeeze(0) : out;
}

}  // namespace ember
