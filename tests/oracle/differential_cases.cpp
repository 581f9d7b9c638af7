// The differential test's case generators, one per op family. Each op is written once, as a
// generic lambda that runs on ember's tensors and on torch's (ADL picks ember::add or at::add).
#include <sstream>

#include "tests/oracle/differential_internal.h"

namespace ember::oracle {
namespace {

// A scalar argument as the C++ type that makes it an int, a float or a bool Scalar on both sides.
struct SVal {
  int kind = 0;  // 0 int, 1 float, 2 bool
  double v = 0;
  std::string str() const {
    return kind == 2   ? (v != 0 ? "true" : "false")
           : kind == 0 ? std::to_string(int64_t(v))
                       : std::to_string(v);
  }
};
SVal random_scalar(Rng& r) {
  SVal s;
  s.kind = static_cast<int>(r.pick(0, 2));
  s.v = s.kind == 2   ? static_cast<double>(r.coin())
        : s.kind == 0 ? static_cast<double>(r.pick(-3, 3))
                      : r.pick(-10, 10) / 4.0;
  return s;
}
template <typename F>
auto with_scalar(const SVal& s, F f) {
  if (s.kind == 0) return f(static_cast<int64_t>(s.v));
  if (s.kind == 1) return f(s.v);
  return f(s.v != 0);
}

Input input(Rng& r, const Shape& s, DType t, bool noncontig = true) {
  return make_input(r, {s, t, random_stress(r), noncontig});
}

const char* kBinary[] = {"add", "sub",         "mul",        "div",       "maximum", "minimum",
                         "eq",  "ne",          "lt",         "le",        "gt",      "ge",
                         "pow", "logical_and", "logical_or", "add_alpha", "where"};

template <typename T>
T binary(int op, const T& a, const T& b, const SVal& alpha) {
  switch (op) {
    case 0:
      return a.add(b);
    case 1:
      return a.sub(b);
    case 2:
      return a.mul(b);
    case 3:
      return a.div(b);
    case 4:
      return a.maximum(b);
    case 5:
      return a.minimum(b);
    case 6:
      return a.eq(b);
    case 7:
      return a.ne(b);
    case 8:
      return a.lt(b);
    case 9:
      return a.le(b);
    case 10:
      return a.gt(b);
    case 11:
      return a.ge(b);
    case 12:
      return a.pow(b);
    case 13:
      return logical_and(a, b);
    case 14:
      return logical_or(a, b);
    case 15:
      return with_scalar(alpha, [&](auto v) { return a.add(b, v); });
    default:
      return where(a.ne(0), a, b);
  }
}

OpCase binary_case(Rng& r) {
  OpCase c;
  c.family = "binary";
  int op = static_cast<int>(r.pick(0, 16));
  Shape sa = random_shape(r), sb = r.coin(0.2) ? Shape{} : broadcastable(r, sa);
  if (r.coin()) std::swap(sa, sb);
  DType ta = random_dtype(r), tb = r.coin(0.4) ? ta : random_dtype(r);
  c.inputs = {input(r, sa, ta), input(r, sb, tb)};
  SVal alpha = random_scalar(r);
  c.desc = std::string(kBinary[op]) + "(" + str(ta) + str(sa) + ", " + str(tb) + str(sb) +
           (op == 15 ? ", alpha=" + alpha.str() : "") + ")";
  set_op(c, [op, alpha](auto, const auto& in) { return binary(op, in[0], in[1], alpha); });
  return c;
}

const char* kScalarOps[] = {"add", "sub", "mul", "div",  "pow",
                            "eq",  "lt",  "ge",  "rsub", "add_alpha"};

OpCase scalar_case(Rng& r) {
  OpCase c;
  c.family = "binary_scalar";
  int op = static_cast<int>(r.pick(0, 9));
  Shape s = random_shape(r);
  DType t = random_dtype(r);
  c.inputs = {input(r, s, t)};
  SVal b = random_scalar(r), alpha = random_scalar(r);
  c.desc = std::string(kScalarOps[op]) + "(" + str(t) + str(s) + ", " + b.str() +
           (op == 9 ? ", alpha=" + alpha.str() : "") + ")";
  set_op(c, [op, b, alpha](auto api, const auto& in) {
    using A = decltype(api);
    const auto& x = in[0];
    return with_scalar(b, [&](auto v) {
      switch (op) {
        case 0:
          return x.add(v);
        case 1:
          return x.sub(v);
        case 2:
          return x.mul(v);
        case 3:
          return x.div(v);
        case 4:
          return x.pow(v);
        case 5:
          return x.eq(v);
        case 6:
          return x.lt(v);
        case 7:
          return x.ge(v);
        case 8:
          return A::rsub(x, v);
        default:
          return with_scalar(alpha, [&](auto a) { return x.add(v, a); });
      }
    });
  });
  return c;
}

const char* kUnary[] = {"neg",     "abs",  "exp",   "log",   "sqrt",   "rsqrt",       "tanh",
                        "sigmoid", "relu", "sin",   "cos",   "square", "reciprocal",  "sign",
                        "floor",   "ceil", "round", "log1p", "expm1",  "logical_not", "clamp"};

OpCase unary_case(Rng& r) {
  OpCase c;
  c.family = "unary";
  int op = static_cast<int>(r.pick(0, 20));
  Shape s = random_shape(r);
  DType t = random_dtype(r);
  c.inputs = {input(r, s, t)};
  std::optional<double> lo, hi;
  if (r.coin(0.7)) lo = r.pick(-8, 4) / 4.0;
  if (r.coin(0.7) || !lo) hi = r.pick(-4, 8) / 4.0;
  c.desc = std::string(kUnary[op]) + "(" + str(t) + str(s) + ")";
  set_op(c, [op, lo, hi](auto api, const auto& in) {
    using A = decltype(api);
    const auto& x = in[0];
    switch (op) {
      case 0:
        return x.neg();
      case 1:
        return x.abs();
      case 2:
        return x.exp();
      case 3:
        return x.log();
      case 4:
        return x.sqrt();
      case 5:
        return x.rsqrt();
      case 6:
        return x.tanh();
      case 7:
        return x.sigmoid();
      case 8:
        return relu(x);
      case 9:
        return x.sin();
      case 10:
        return x.cos();
      case 11:
        return x.square();
      case 12:
        return x.reciprocal();
      case 13:
        return x.sign();
      case 14:
        return x.floor();
      case 15:
        return x.ceil();
      case 16:
        return x.round();
      case 17:
        return x.log1p();
      case 18:
        return x.expm1();
      case 19:
        return logical_not(x);
      default:
        return A::clamp(x, lo, hi);
    }
  });
  return c;
}

const char* kReduce[] = {"sum",     "mean",    "prod",    "amax",   "amin",      "max_dim",
                         "min_dim", "max",     "min",     "argmax", "argmin",    "var",
                         "std",     "all_dim", "any_dim", "norm",   "logsumexp", "sum_all"};

OpCase reduce_case(Rng& r) {
  OpCase c;
  c.family = "reduce";
  int op = static_cast<int>(r.pick(0, 17));
  Shape s = random_shape(r);
  DType t = random_dtype(r);
  c.inputs = {input(r, s, t)};
  int64_t nd = static_cast<int64_t>(s.size());
  int64_t range = std::max<int64_t>(nd, 1);
  V dims;
  int64_t k = r.pick(0, std::min<int64_t>(range, 2));
  for (int64_t i = 0; i < k; ++i) dims.push_back(r.pick(-range, range - 1));
  if (r.coin(0.05)) dims.push_back(range);  // out of range
  int64_t dim = dims.empty() ? r.pick(-range, range - 1) : dims[0];
  bool keep = r.coin(), unbiased = r.coin();
  double p = r.choose(std::vector<double>{2, 1, 3, 0, INFINITY, -INFINITY, 0.5});
  c.rtol_scale = 8;
  if (op == 16 && dims.empty())
    c.deliberate = "logsumexp over an empty dim list reduces every dim (torch 1.13 raises)";
  std::ostringstream d;
  d << kReduce[op] << "(" << str(t) << str(s) << ", dims=" << str(Shape(dims)) << ", dim=" << dim
    << ", keepdim=" << keep << ", unbiased=" << unbiased << ", p=" << p << ")";
  c.desc = d.str();
  set_op(c, [=](auto api, const auto& in) {
    using A = decltype(api);
    using T = std::decay_t<decltype(in[0])>;
    const T& x = in[0];
    switch (op) {
      case 0:
        return to_list(x.sum(dims, keep));
      case 1:
        return to_list(x.mean(dims, keep));
      case 2:
        return to_list(x.prod(dim, keep));
      case 3:
        return to_list(x.amax(dims, keep));
      case 4:
        return to_list(x.amin(dims, keep));
      case 5:
        return to_list(std::tuple<T, T>(x.max(dim, keep)));
      case 6:
        return to_list(std::tuple<T, T>(x.min(dim, keep)));
      case 7:
        return to_list(x.max());
      case 8:
        return to_list(x.min());
      case 9:
      case 10:
        return to_list(
            A::arg(op == 9, x, dims.empty() ? std::nullopt : std::optional<int64_t>(dim), keep));
      case 11:
        return to_list(x.var(dims, unbiased, keep));
      case 12:
        return to_list(x.std(dims, unbiased, keep));
      case 13:
        return to_list(all(x, dim, keep));
      case 14:
        return to_list(any(x, dim, keep));
      case 15:
        return to_list(x.norm(p));
      case 16:
        return to_list(x.logsumexp(dims, keep));
      default:
        return to_list(x.sum());
    }
  });
  return c;
}

}  // namespace

OpCase views_case(Rng& r);
OpCase matmul_case(Rng& r);
OpCase softmax_case(Rng& r);
OpCase conv_case(Rng& r);
OpCase pool_case(Rng& r);
OpCase cat_case(Rng& r);
OpCase index_case(Rng& r);
OpCase loss_case(Rng& r);
OpCase grad_case(Rng& r);
OpCase autocast_case(Rng& r);
OpCase nn_layers_case(Rng& r);
OpCase sequence_ops_case(Rng& r);
OpCase attention_case(Rng& r);

int family_count() { return 17; }

OpCase make_case(Rng& r, int family) {
  switch (family) {
    case 0:
      return binary_case(r);
    case 1:
      return scalar_case(r);
    case 2:
      return unary_case(r);
    case 3:
      return reduce_case(r);
    case 4:
      return views_case(r);
    case 5:
      return matmul_case(r);
    case 6:
      return softmax_case(r);
    case 7:
      return conv_case(r);
    case 8:
      return pool_case(r);
    case 9:
      return cat_case(r);
    case 10:
      return index_case(r);
    case 11:
      return loss_case(r);
    case 13:
      return nn_layers_case(r);
    case 14:
      return autocast_case(r);
    case 15:
      return sequence_ops_case(r);
    case 16:
      return attention_case(r);
    default:
      return grad_case(r);
  }
}

}  // namespace ember::oracle
