// The pieces the differential test's case generators and runner share: the random source, inputs
// built identically on both sides, and an op written once for ember and for torch.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "ember/ember.h"

namespace ember::oracle {

/// A shape or dtype as ember prints it, for case names.
template <typename T>
std::string str(const T& value) {
  return detail::str_cat(value);
}

using ETensor = ember::Tensor;
using TTensor = at::Tensor;
using V = std::vector<int64_t>;

at::ScalarType to_torch(DType t);

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g); }
  bool coin(double p = 0.5) { return std::uniform_real_distribution<double>(0, 1)(g) < p; }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g); }
  template <typename T>
  const T& choose(const std::vector<T>& v) {
    return v[static_cast<size_t>(pick(0, static_cast<int64_t>(v.size()) - 1))];
  }
};

/// How the values of an input are drawn: stressing ones find rounding and overflow bugs.
enum class Stress { Normal, Ties, Large, Zeros, Special };

/// One input, the same values and the same layout (strides, offset) on both sides.
struct Input {
  ETensor e;
  TTensor t;
};

struct InputSpec {
  Shape shape;
  DType dtype = kFloat32;
  Stress stress = Stress::Normal;
  bool allow_noncontiguous = true;
};

Input make_input(Rng& r, const InputSpec& spec);
/// Integers in [lo, hi] (int64), contiguous or not: indices and class targets.
Input make_index(Rng& r, const Shape& shape, int64_t lo, int64_t hi);
DType random_dtype(Rng& r, bool with_bool = true);
Shape random_shape(Rng& r, int max_dim = 4, int64_t max_size = 5);
/// A shape that broadcasts with s: leading dims dropped, some sizes set to 1.
Shape broadcastable(Rng& r, const Shape& s);
Stress random_stress(Rng& r);

/// An op's results as a list, whatever it returns.
template <typename T>
std::vector<T> to_list(const T& t) {
  return {t};
}
template <typename T>
std::vector<T> to_list(const std::vector<T>& v) {
  return v;
}
template <typename T>
std::vector<T> to_list(const std::tuple<T, T>& t) {
  return {std::get<0>(t), std::get<1>(t)};
}

struct OpCase {
  std::string family, desc;
  std::vector<Input> inputs;
  std::function<std::vector<ETensor>(const std::vector<ETensor>&)> ember;
  std::function<std::vector<TTensor>(const std::vector<TTensor>&)> torch;
  double rtol_scale = 1;  // multiplies the dtype's tolerance: accumulating ops round more
  bool grad = false;      // inputs are leaves requiring grad; outputs include their gradients
  // When torch raises and ember computes because of a documented deliberate difference.
  std::string deliberate;
  // A documented difference that shows in the results too (not only in torch raising).
  bool deliberate_results = false;
  // Where torch 1.13 itself is broken (corrupts memory): torch is not run, ember must raise.
  std::string torch_broken;
  // The op runs inside CPU bfloat16 autocast on both sides (its loss and backward outside).
  bool autocast = false;
  // A floor under every result's tolerance: bfloat16's where float32 results come from bfloat16.
  double min_tolerance = 0;
};

/// The ops whose names or signatures differ between ember and torch.
struct EApi {
  using T = ETensor;
  struct Autocast {  // CPU bfloat16 autocast for its scope
    amp::autocast guard{kCPU, kBFloat16};
  };
  static T cat(const std::vector<T>& v, int64_t d) { return ember::cat(v, d); }
  static T stack(const std::vector<T>& v, int64_t d) { return ember::stack(v, d); }
  static T conv2d(const T& x, const T& w, const T* b, Pair s, Pair p, Pair d, int64_t g) {
    return ember::conv2d(x, w, b ? *b : T(), s, p, d, g);
  }
  static T max_pool2d(const T& x, Pair k, Pair s, Pair p, Pair d, bool ceil) {
    return ember::max_pool2d(x, k, s, p, d, ceil);
  }
  static T avg_pool2d(const T& x, Pair k, Pair s, Pair p, bool ceil, bool cip) {
    return ember::avg_pool2d(x, k, s, p, ceil, cip);
  }
  static T batch_norm(const T& x, const T* w, const T* b, const T& rm, const T& rv, bool train,
                      double momentum, double eps) {
    return ember::batch_norm(x, rm, rv, w ? *w : T(), b ? *b : T(), train, momentum, eps);
  }
  static T adaptive_avg_pool2d(const T& x, Pair o) { return ember::adaptive_avg_pool2d(x, o); }
  static T interpolate(const T& x, Pair o, bool bilinear, bool align_corners) {
    return nn::functional::interpolate(x, {o[0], o[1]}, bilinear ? "bilinear" : "nearest",
                                       bilinear ? std::optional<bool>(align_corners)
                                                : std::nullopt);
  }
  static T cross_entropy(const T& x, const T& t, const T* w, int64_t ignore, int reduction,
                         double smoothing) {
    return nn::functional::cross_entropy(
        x, t, w ? *w : T(), ignore, static_cast<nn::functional::Reduction>(reduction), smoothing);
  }
  static T nll_loss(const T& x, const T& t, const T* w, int64_t ignore, int reduction) {
    return nn::functional::nll_loss(x, t, w ? *w : T(), ignore,
                                    static_cast<nn::functional::Reduction>(reduction));
  }
  static T mse_loss(const T& x, const T& t, int reduction) {
    return nn::functional::mse_loss(x, t, static_cast<nn::functional::Reduction>(reduction));
  }
  static T weight_like(const T& out) {  // a fixed, distinct weight per element
    return (ember::arange(out.numel(), TensorOptions(kFloat64)) * 0.37 - 1.1).reshape(out.sizes());
  }
  static T leaf(const T& x) { return x.contiguous().detach().requires_grad_(); }
  static T grad(const T& x) { return x.grad(); }
  static void backward(const T& loss) { loss.backward(); }
  static T one_hot(const T& x, int64_t n) { return ember::one_hot(x, n); }
  static T embedding(const T& w, const T& i) { return ember::embedding(w, i); }
  static T clamp(const T& x, std::optional<double> lo, std::optional<double> hi) {
    return ember::clamp(x, lo ? std::optional<Scalar>(*lo) : std::nullopt,
                        hi ? std::optional<Scalar>(*hi) : std::nullopt);
  }
  static T full_like_scalar(const T& x, double v) { return ember::full_like(x, v); }
  static T arg(bool is_max, const T& x, std::optional<int64_t> d, bool keep) {
    return is_max ? x.argmax(d, keep) : x.argmin(d, keep);
  }
  template <typename S>
  static T rsub(const T& x, S v) {
    return v - x;
  }
};

struct TApi {
  using T = TTensor;
  struct Autocast {  // what torch.autocast("cpu", torch.bfloat16)'s __enter__ and __exit__ do
    bool enabled = at::autocast::is_cpu_enabled();
    at::ScalarType dtype = at::autocast::get_autocast_cpu_dtype();
    Autocast() {
      at::autocast::set_cpu_enabled(true);
      at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
      at::autocast::increment_nesting();
    }
    ~Autocast() {
      if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
      at::autocast::set_cpu_enabled(enabled);
      at::autocast::set_autocast_cpu_dtype(dtype);
    }
  };
  static T cat(const std::vector<T>& v, int64_t d) { return at::cat(v, d); }
  static T stack(const std::vector<T>& v, int64_t d) { return at::stack(v, d); }
  static T conv2d(const T& x, const T& w, const T* b, Pair s, Pair p, Pair d, int64_t g) {
    return at::conv2d(x, w, b ? c10::optional<T>(*b) : c10::nullopt, s, p, d, g);
  }
  static T max_pool2d(const T& x, Pair k, Pair s, Pair p, Pair d, bool ceil) {
    return at::max_pool2d(x, k, s, p, d, ceil);
  }
  static T avg_pool2d(const T& x, Pair k, Pair s, Pair p, bool ceil, bool cip) {
    return at::avg_pool2d(x, k, s, p, ceil, cip);
  }
  static T batch_norm(const T& x, const T* w, const T* b, const T& rm, const T& rv, bool train,
                      double momentum, double eps) {
    return at::batch_norm(x, w ? c10::optional<T>(*w) : c10::nullopt,
                          b ? c10::optional<T>(*b) : c10::nullopt, rm, rv, train, momentum, eps,
                          /*cudnn_enabled=*/false);
  }
  static T adaptive_avg_pool2d(const T& x, Pair o) { return at::adaptive_avg_pool2d(x, o); }
  static T interpolate(const T& x, Pair o, bool bilinear, bool align_corners) {
    return bilinear ? at::upsample_bilinear2d(x, o, align_corners) : at::upsample_nearest2d(x, o);
  }
  static T cross_entropy(const T& x, const T& t, const T* w, int64_t ignore, int reduction,
                         double smoothing) {
    return at::cross_entropy_loss(x, t, w ? c10::optional<T>(*w) : c10::nullopt,
                                  torch_reduction(reduction), ignore, smoothing);
  }
  static T nll_loss(const T& x, const T& t, const T* w, int64_t ignore, int reduction) {
    return at::nll_loss_nd(x, t, w ? c10::optional<T>(*w) : c10::nullopt,
                           torch_reduction(reduction), ignore);
  }
  static T mse_loss(const T& x, const T& t, int reduction) {
    return at::mse_loss(x, t, torch_reduction(reduction));
  }
  static T weight_like(const T& out) {
    return (at::arange(out.numel(), at::kDouble) * 0.37 - 1.1).reshape(out.sizes());
  }
  static T leaf(const T& x) { return x.contiguous().detach().requires_grad_(); }
  static T grad(const T& x) { return x.grad(); }
  static void backward(const T& loss) { loss.backward(); }
  static T one_hot(const T& x, int64_t n) { return at::one_hot(x, n); }
  static T embedding(const T& w, const T& i) { return at::embedding(w, i); }
  static T clamp(const T& x, std::optional<double> lo, std::optional<double> hi) {
    return at::clamp(x, lo ? c10::optional<at::Scalar>(*lo) : c10::nullopt,
                     hi ? c10::optional<at::Scalar>(*hi) : c10::nullopt);
  }
  static T full_like_scalar(const T& x, double v) { return at::full_like(x, v); }
  static T arg(bool is_max, const T& x, std::optional<int64_t> d, bool keep) {
    c10::optional<int64_t> cd = d ? c10::optional<int64_t>(*d) : c10::nullopt;
    return is_max ? x.argmax(cd, keep) : x.argmin(cd, keep);
  }
  // Python's `v - x` (at::operator-(Scalar, Tensor) keeps x's dtype instead of promoting).
  template <typename S>
  static T rsub(const T& x, S v) {
    return at::rsub(x, v);
  }
  // ember's Reduction is {None, Mean, Sum}; torch's {None, Mean, Sum} too, as 0, 1, 2.
  static int64_t torch_reduction(int r) { return r; }
};

/// Sets both sides of `c` from one generic lambda f(api, inputs).
template <typename F>
void set_op(OpCase& c, F f) {
  c.ember = [f](const std::vector<ETensor>& in) { return to_list(f(EApi{}, in)); };
  c.torch = [f](const std::vector<TTensor>& in) { return to_list(f(TApi{}, in)); };
}

/// One random case of the given family (see differential_cases.cpp for the list).
OpCase make_case(Rng& r, int family);
int family_count();

}  // namespace ember::oracle
