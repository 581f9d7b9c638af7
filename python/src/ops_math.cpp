// Elementwise math as functions and Tensor methods, one declaration each (op_table.h): unary
// functions with their in-place methods, arithmetic with alpha= and out=, comparisons, clamp,
// where, lerp, addcmul/addcdiv and the NaN/inf checks. The operators (x + y) are tensor_math.cpp.
#include <tuple>

#include "ember/ops/dispatch.h"
#include "ember/ops/tensor_index.h"
#include "op_table.h"

namespace ember::python {
namespace {

using Binary = Tensor (*)(const Tensor&, const Tensor&);

// The C++ in-place forms of a binary op (pow_, remainder_, bitwise_and_, ...).
struct BinaryInplace {
  std::function<Tensor&(Tensor&, const Tensor&)> tensor;
  std::function<Tensor&(Tensor&, Scalar)> scalar;
};

// A binary op taking a tensor or a number for `other`; its in-place variants call C++'s
// in-place forms where `inplace` has them, else copy the result back (autograd through copy_).
template <typename TT, typename TS>
void binary(OpTable& t, const std::string& name, TT tensor_fn, TS scalar_fn,
            BinaryInplace inplace = {}) {
  t.def(name + ".Tensor",
        [tensor_fn](const Args& a) { return tensor_fn(a.tensor(0), a.tensor(1)); });
  t.def(name + ".Scalar",
        [scalar_fn](const Args& a) { return scalar_fn(a.tensor(0), a.scalar(1)); });
  if (inplace.tensor) {
    t.def(name + "_.Tensor", [f = inplace.tensor](const Args& a) {
      Tensor x = a.tensor(0);
      f(x, a.tensor(1));
      return InPlace{};
    });
    t.def(name + "_.Scalar", [f = inplace.scalar](const Args& a) {
      Tensor x = a.tensor(0);
      f(x, a.scalar(1));
      return InPlace{};
    });
    return;
  }
  t.def(
      name + "_.Tensor",
      [tensor_fn, op = name + "_"](const Args& a) {
        const Tensor& other = a.tensor(1);
        return inplace_op(a.tensor(0), op.c_str(), {&other},
                          [&](const Tensor& x) { return tensor_fn(x, other); });
      });
  t.def(
      name + "_.Scalar",
      [scalar_fn, op = name + "_"](const Args& a) {
        Scalar other = a.scalar(1);
        return inplace_op(a.tensor(0), op.c_str(), {},
                          [&](const Tensor& x) { return scalar_fn(x, other); });
      });
}

// A comparison (no in-place variant keeps the input's dtype: x.eq_(y) writes 0/1 in it).
void compare(OpTable& t, const std::string& name, Tensor (*tt)(const Tensor&, const Tensor&),
             Tensor (*ts)(const Tensor&, Scalar)) {
  t.def(name + ".Tensor",
        [tt](const Args& a) { return tt(a.tensor(0), a.tensor(1)); });
  t.def(name + ".Scalar",
        [ts](const Args& a) { return ts(a.tensor(0), a.scalar(1)); });
}

Tensor clamp_tensor(const Tensor& x, const Tensor* lo, const Tensor* hi) {
  return clamp(x, lo ? *lo : Tensor(), hi ? *hi : Tensor());
}

}  // namespace

void def_math_ops(OpTable& t) {
  def_unary(t, "abs", [](const Tensor& x) { return abs(x); }, &ember::abs_, "|x|, elementwise.");
  def_unary(t, "absolute", [](const Tensor& x) { return abs(x); }, &ember::abs_);
  def_unary(t, "neg", [](const Tensor& x) { return neg(x); }, &ember::neg_);
  def_unary(t, "negative", [](const Tensor& x) { return neg(x); }, &ember::neg_);
  def_unary(t, "exp", [](const Tensor& x) { return exp(x); }, &ember::exp_);
  def_unary(t, "exp2", [](const Tensor& x) { return exp2(x); }, &ember::exp2_);
  def_unary(t, "expm1", [](const Tensor& x) { return expm1(x); }, &ember::expm1_);
  def_unary(t, "log", [](const Tensor& x) { return log(x); }, &ember::log_);
  def_unary(t, "log2", [](const Tensor& x) { return log2(x); }, &ember::log2_);
  def_unary(t, "log10", [](const Tensor& x) { return log10(x); }, &ember::log10_);
  def_unary(t, "log1p", [](const Tensor& x) { return log1p(x); }, &ember::log1p_);
  def_unary(t, "sqrt", [](const Tensor& x) { return sqrt(x); }, &ember::sqrt_);
  def_unary(t, "rsqrt", [](const Tensor& x) { return rsqrt(x); }, &ember::rsqrt_);
  def_unary(t, "square", [](const Tensor& x) { return square(x); }, &ember::square_);
  def_unary(t, "reciprocal", [](const Tensor& x) { return reciprocal(x); }, &ember::reciprocal_);
  def_unary(t, "sign", [](const Tensor& x) { return sign(x); }, &ember::sign_);
  def_unary(t, "sgn", [](const Tensor& x) { return sgn(x); }, nullptr);
  // Complex numbers (ops/complex.h).
  t.def("angle", [](const Args& a) { return angle(a.tensor(0)); });
  t.def("view_as_real", [](const Args& a) { return view_as_real(a.tensor(0)); });
  t.def("view_as_complex", [](const Args& a) { return view_as_complex(a.tensor(0)); });
  t.def("real", [](const Args& a) { return real(a.tensor(0)); });
  t.def("imag", [](const Args& a) { return imag(a.tensor(0)); });
  t.def("conj", [](const Args& a) { return conj(a.tensor(0)); });
  t.def("conj_physical",
        [](const Args& a) { return a.tensor(0).is_complex() ? conj(a.tensor(0)) : a.tensor(0).clone(); });
  t.def("resolve_conj", [](const Args& a) { return a.tensor(0); });
  t.def("is_conj", [](const Args& a) { return false; });
  t.def("is_complex", [](const Args& a) { return a.tensor(0).is_complex(); });
  t.def("complex",
        [](const Args& a) { return complex(a.tensor(0), a.tensor(1)); });
  t.def("polar",
        [](const Args& a) { return polar(a.tensor(0), a.tensor(1)); });
  t.def("hypot",
        [](const Args& a) { return hypot(a.tensor(0), a.tensor(1)); });
  def_unary(t, "floor", [](const Tensor& x) { return floor(x); }, &ember::floor_);
  def_unary(t, "ceil", [](const Tensor& x) { return ceil(x); }, &ember::ceil_);
  def_unary(t, "trunc", [](const Tensor& x) { return trunc(x); }, &ember::trunc_);
  def_unary(t, "fix", [](const Tensor& x) { return trunc(x); }, &ember::trunc_);
  def_unary(t, "frac", [](const Tensor& x) { return frac(x); }, nullptr);
  def_unary(t, "sin", [](const Tensor& x) { return sin(x); }, &ember::sin_);
  def_unary(t, "cos", [](const Tensor& x) { return cos(x); }, &ember::cos_);
  def_unary(t, "tan", [](const Tensor& x) { return tan(x); }, &ember::tan_);
  def_unary(t, "asin", [](const Tensor& x) { return asin(x); }, &ember::asin_);
  def_unary(t, "arcsin", [](const Tensor& x) { return asin(x); }, &ember::asin_);
  def_unary(t, "acos", [](const Tensor& x) { return acos(x); }, &ember::acos_);
  def_unary(t, "arccos", [](const Tensor& x) { return acos(x); }, &ember::acos_);
  def_unary(t, "atan", [](const Tensor& x) { return atan(x); }, &ember::atan_);
  def_unary(t, "arctan", [](const Tensor& x) { return atan(x); }, &ember::atan_);
  def_unary(t, "sinh", [](const Tensor& x) { return sinh(x); }, &ember::sinh_);
  def_unary(t, "cosh", [](const Tensor& x) { return cosh(x); }, &ember::cosh_);
  def_unary(t, "tanh", [](const Tensor& x) { return tanh(x); }, &ember::tanh_);
  def_unary(t, "asinh", [](const Tensor& x) { return asinh(x); }, &ember::asinh_);
  def_unary(t, "arcsinh", [](const Tensor& x) { return asinh(x); }, &ember::asinh_);
  def_unary(t, "acosh", [](const Tensor& x) { return acosh(x); }, &ember::acosh_);
  def_unary(t, "arccosh", [](const Tensor& x) { return acosh(x); }, &ember::acosh_);
  def_unary(t, "atanh", [](const Tensor& x) { return atanh(x); }, &ember::atanh_);
  def_unary(t, "arctanh", [](const Tensor& x) { return atanh(x); }, &ember::atanh_);
  def_unary(t, "erf", [](const Tensor& x) { return erf(x); }, &ember::erf_);
  def_unary(t, "erfc", [](const Tensor& x) { return erfc(x); }, &ember::erfc_);
  def_unary(t, "sigmoid", [](const Tensor& x) { return sigmoid(x); }, &ember::sigmoid_);
  def_unary(t, "relu", [](const Tensor& x) { return relu(x); }, &ember::relu_);
  def_unary(t, "logical_not", [](const Tensor& x) { return logical_not(x); }, nullptr);
  def_unary(t, "deg2rad", [](const Tensor& x) { return deg2rad(x); }, nullptr);
  def_unary(t, "rad2deg", [](const Tensor& x) { return rad2deg(x); }, nullptr);
  t.def("positive", [](const Args& a) { return a.tensor(0); });
  t.def("round", [](const Args& a) {
    int64_t d = a.int64(1);
    if (d == 0) return round(a.tensor(0));
    double scale = std::pow(10.0, static_cast<double>(d));
    return round(a.tensor(0) * scale) / scale;
  });
  t.def(
      "round_",
      [](const Args& a) {
        int64_t d = a.int64(1);
        double scale = std::pow(10.0, static_cast<double>(d));
        return inplace_op(a.tensor(0), "round_", {}, [&](const Tensor& x) {
          return d == 0 ? round(x) : round(x * scale) / scale;
        });
      });

  // --- arithmetic ---
  for (const char* name : {"add", "sub", "subtract"}) {
    bool is_add = name[0] == 'a';
    std::string n = name;
    t.def(n + ".Tensor",
          [is_add](const Args& a) {
            return is_add ? add(a.tensor(0), a.tensor(1), a.scalar(2))
                          : sub(a.tensor(0), a.tensor(1), a.scalar(2));
          });
    t.def(n + ".Scalar",
          [is_add](const Args& a) {
            return is_add ? add(a.tensor(0), a.scalar(1), a.scalar(2))
                          : sub(a.tensor(0), a.scalar(1), a.scalar(2));
          });
    t.def(
        n + "_.Tensor",
        [is_add](const Args& a) {
          Tensor x = a.tensor(0);
          is_add ? x.add_(a.tensor(1), a.scalar(2)) : x.sub_(a.tensor(1), a.scalar(2));
          return InPlace{};
        });
    t.def(
        n + "_.Scalar",
        [is_add](const Args& a) {
          Tensor x = a.tensor(0);
          is_add ? x.add_(a.scalar(1), a.scalar(2)) : x.sub_(a.scalar(1), a.scalar(2));
          return InPlace{};
        });
  }
  t.def("rsub.Tensor",
        [](const Args& a) { return sub(a.tensor(1), a.tensor(0), a.scalar(2)); });
  t.def("rsub.Scalar",
        [](const Args& a) { return a.scalar(1) - mul(a.tensor(0), a.scalar(2)); });
  for (const char* name : {"mul", "multiply"})
    binary(
        t, name, [](const Tensor& x, const Tensor& y) { return mul(x, y); },
        [](const Tensor& x, Scalar y) { return mul(x, y); },
        {[](Tensor& x, const Tensor& y) -> Tensor& { return x.mul_(y); },
         [](Tensor& x, Scalar y) -> Tensor& { return x.mul_(y); }});
  for (const char* name : {"div", "divide", "true_divide"}) {
    std::string n = name;
    t.def(n + ".Tensor",
          [](const Args& a) {
            return a.has(2) ? div(a.tensor(0), a.tensor(1), a.str(2)) : div(a.tensor(0), a.tensor(1));
          });
    t.def(n + ".Scalar",
          [](const Args& a) {
            const Tensor& x = a.tensor(0);
            if (!a.has(2)) return div(x, a.scalar(1));
            return div(x, scalar_tensor(a.scalar(1), TensorOptions(a.scalar(1).dtype())
                                                          .with_device(x.device())),
                       a.str(2));
          });
    t.def(
        n + "_.Tensor",
        [](const Args& a) {
          const Tensor& other = a.tensor(1);
          if (a.has(2))
            return inplace_op(a.tensor(0), "div_", {&other},
                              [&](const Tensor& x) { return div(x, other, a.str(2)); });
          Tensor x = a.tensor(0);
          x.div_(other);
          return InPlace{};
        });
    t.def(
        n + "_.Scalar",
        [](const Args& a) {
          if (a.has(2))
            return inplace_op(a.tensor(0), "div_", {}, [&](const Tensor& x) {
              return div(x, scalar_tensor(a.scalar(1), x.options()), a.str(2));
            });
          Tensor x = a.tensor(0);
          x.div_(a.scalar(1));
          return InPlace{};
        });
  }
#define EMBER_MODULO(fname)                                                                   \
  binary(                                                                                     \
      t, #fname, [](const Tensor& x, const Tensor& y) { return fname(x, y); },                \
      [](const Tensor& x, Scalar y) { return fname(x, y); },                                  \
      {[](Tensor& x, const Tensor& y) -> Tensor& { return fname##_(x, y); },                  \
       [](Tensor& x, Scalar y) -> Tensor& { return fname##_(x, y); }});
  EMBER_MODULO(floor_divide)
  EMBER_MODULO(remainder)
  EMBER_MODULO(fmod)
#undef EMBER_MODULO
  // The bitwise ops: a number beside a tensor takes the tensor's dtype (PyTorch's wrapped number).
  using BinaryInto = Tensor& (*)(Tensor&, const Tensor&);
  for (auto [name, fn, into] : std::initializer_list<std::tuple<const char*, Binary, BinaryInto>>{
           {"bitwise_and", &bitwise_and, &bitwise_and_},
           {"bitwise_or", &bitwise_or, &bitwise_or_},
           {"bitwise_xor", &bitwise_xor, &bitwise_xor_},
           {"bitwise_left_shift", &bitwise_left_shift, &bitwise_left_shift_},
           {"bitwise_right_shift", &bitwise_right_shift, &bitwise_right_shift_}}) {
    Binary f = fn;
    BinaryInto g = into;
    binary(
        t, name, [f](const Tensor& x, const Tensor& y) { return f(x, y); },
        [f](const Tensor& x, Scalar y) { return f(x, scalar_tensor(y, x.options())); },
        {g, [g](Tensor& x, Scalar y) -> Tensor& { return g(x, scalar_tensor(y, x.options())); }});
  }
  def_unary(t, "bitwise_not", [](const Tensor& x) { return bitwise_not(x); }, nullptr);
  binary(
      t, "pow", [](const Tensor& x, const Tensor& y) { return pow(x, y); },
      [](const Tensor& x, Scalar y) { return pow(x, y); },
      {[](Tensor& x, const Tensor& y) -> Tensor& { return x.pow_(y); },
       [](Tensor& x, Scalar y) -> Tensor& { return x.pow_(y); }});
  t.def("pow.Scalar_Tensor", [](const Args& a) { return pow(a.scalar(0), a.tensor(1)); });
  // In float64, or complex128 where either side is complex.
  t.def("float_power.Tensor", [](const Args& a) {
    DType d = a.tensor(0).is_complex() || a.tensor(1).is_complex() ? kComplex128 : kFloat64;
    return pow(a.tensor(0).to(d), a.tensor(1).to(d));
  });
  t.def("float_power.Scalar", [](const Args& a) {
    DType d = a.tensor(0).is_complex() || a.scalar(1).is_complex() ? kComplex128 : kFloat64;
    return pow(a.tensor(0).to(d), a.scalar(1));
  });
  for (const char* name : {"atan2", "arctan2"})
    t.def(name,
          [](const Args& a) { return atan2(a.tensor(0), a.tensor(1)); });
  t.def("maximum",
        [](const Args& a) { return maximum(a.tensor(0), a.tensor(1)); });
  t.def("minimum",
        [](const Args& a) { return minimum(a.tensor(0), a.tensor(1)); });
  t.def("fmax", [](const Args& a) { return fmax(a.tensor(0), a.tensor(1)); });
  t.def("fmin", [](const Args& a) { return fmin(a.tensor(0), a.tensor(1)); });
  t.def("logaddexp", [](const Args& a) { return logaddexp(a.tensor(0), a.tensor(1)); });

  // --- comparisons and logic ---
  compare(t, "eq", eq, eq);
  compare(t, "ne", ne, ne);
  compare(t, "not_equal", ne, ne);
  compare(t, "lt", lt, lt);
  compare(t, "less", lt, lt);
  compare(t, "le", le, le);
  compare(t, "less_equal", le, le);
  compare(t, "gt", gt, gt);
  compare(t, "greater", gt, gt);
  compare(t, "ge", ge, ge);
  compare(t, "greater_equal", ge, ge);
  t.def("logical_and",
        [](const Args& a) { return logical_and(a.tensor(0), a.tensor(1)); });
  t.def("logical_or",
        [](const Args& a) { return logical_or(a.tensor(0), a.tensor(1)); });
  t.def("logical_xor",
        [](const Args& a) { return logical_xor(a.tensor(0), a.tensor(1)); });
  t.def("isnan", [](const Args& a) { return isnan(a.tensor(0)); });
  t.def("isinf", [](const Args& a) { return isinf(a.tensor(0)); });
  t.def("isposinf", [](const Args& a) { return isposinf(a.tensor(0)); });
  t.def("isneginf", [](const Args& a) { return isneginf(a.tensor(0)); });
  t.def("isfinite", [](const Args& a) { return isfinite(a.tensor(0)); });
  t.def("isreal", [](const Args& a) {
    const Tensor& x = a.tensor(0);
    return x.is_complex() ? eq(imag(x), 0.0) : ones_like(x, kBool);
  });
  t.def("is_nonzero", [](const Args& a) {
    EMBER_CHECK(a.tensor(0).numel() == 1, "[is_nonzero] Boolean value of Tensor with ",
                a.tensor(0).numel() == 0 ? "no values" : "more than one value",
                " is ambiguous");
    return a.tensor(0).item().to<bool>();
  });
  t.def("isclose",
        [](const Args& a) {
          return isclose(a.tensor(0), a.tensor(1), a.real(2), a.real(3), a.flag(4));
        });
  t.def("allclose",
        [](const Args& a) {
          return all(isclose(a.tensor(0), a.tensor(1), a.real(2), a.real(3), a.flag(4)))
              .item<bool>();
        });
  t.def("equal", [](const Args& a) {
    const Tensor &x = a.tensor(0), &y = a.tensor(1);
    return x.sizes() == y.sizes() && (x.numel() == 0 || all(eq(x, y)).item<bool>());
  });
  t.def("nan_to_num",
        [](const Args& a) {
          return nan_to_num(a.tensor(0), a.opt_real(1), a.opt_real(2), a.opt_real(3));
        });
  t.def(
      "nan_to_num_",
      [](const Args& a) {
        return inplace_op(a.tensor(0), "nan_to_num_", {}, [&](const Tensor& x) {
          return nan_to_num(x, a.opt_real(1), a.opt_real(2), a.opt_real(3));
        });
      });

  // --- clamp, where, interpolation, fused updates ---
  for (const char* name : {"clamp", "clip"}) {
    std::string n = name;
    // Tensor bounds first: a 0-dim tensor would bind as a Scalar too, and lose its gradient.
    t.def(n + ".Tensor",
          [](const Args& a) { return clamp_tensor(a.tensor(0), a.opt_tensor(1), a.opt_tensor(2)); });
    t.def(n + ".Scalar",
          [](const Args& a) { return clamp(a.tensor(0), a.opt_scalar(1), a.opt_scalar(2)); });
    t.def(
        n + "_.Scalar",
        [](const Args& a) {
          Tensor x = a.tensor(0);
          x.clamp_(a.opt_scalar(1), a.opt_scalar(2));
          return InPlace{};
        });
    t.def(
        n + "_.Tensor",
        [](const Args& a) {
          const Tensor* lo = a.opt_tensor(1);
          const Tensor* hi = a.opt_tensor(2);
          Tensor none;
          return inplace_op(a.tensor(0), "clamp_", {lo ? lo : &none, hi ? hi : &none},
                            [&](const Tensor& x) { return clamp_tensor(x, lo, hi); });
        });
  }
  t.def("clamp_min.Tensor",
        [](const Args& a) { return clamp(a.tensor(0), a.tensor(1), Tensor()); });
  t.def("clamp_min.Scalar",
        [](const Args& a) { return clamp(a.tensor(0), a.scalar(1), std::nullopt); });
  t.def("clamp_max.Tensor",
        [](const Args& a) { return clamp(a.tensor(0), Tensor(), a.tensor(1)); });
  t.def("clamp_max.Scalar",
        [](const Args& a) { return clamp(a.tensor(0), std::nullopt, a.scalar(1)); });
  t.def(
      "clamp_min_",
      [](const Args& a) {
        Tensor x = a.tensor(0);
        x.clamp_(a.scalar(1), std::nullopt);
        return InPlace{};
      });
  t.def(
      "clamp_max_",
      [](const Args& a) {
        Tensor x = a.tensor(0);
        x.clamp_(std::nullopt, a.scalar(1));
        return InPlace{};
      });
  t.def("where.self_Tensor_Tensor",
        [](const Args& a) { return where(a.tensor(0), a.tensor(1), a.tensor(2)); });
  t.def("where.ScalarOther_Tensor_Scalar",
        [](const Args& a) { return where(a.tensor(0), a.tensor(1), a.scalar(2)); });
  t.def("where.ScalarSelf",
        [](const Args& a) {
          const Tensor& o = a.tensor(2);
          return where(a.tensor(0), scalar_tensor(a.scalar(1), TensorOptions(result_type(o, a.scalar(1)))
                                                                  .with_device(o.device())),
                       o);
        });
  t.def("where.Scalar",
        [](const Args& a) {
          const Tensor& c = a.tensor(0);
          DType dt = promote_types(a.scalar(1).dtype(), a.scalar(2).dtype());
          TensorOptions o = TensorOptions(dt).with_device(c.device());
          return where(c, scalar_tensor(a.scalar(1), o), scalar_tensor(a.scalar(2), o));
        });
  t.def("where",
        [](const Args& a) { return nonzero(a.tensor(0)).unbind(1); });
  // x.where(condition, y): self is the values where condition holds.
  t.def("where.self",
        [](const Args& a) { return where(a.tensor(1), a.tensor(0), a.tensor(2)); });
  t.def("where.ScalarOther",
        [](const Args& a) { return where(a.tensor(1), a.tensor(0), a.scalar(2)); });
  t.def("lerp.Scalar",
        [](const Args& a) { return lerp(a.tensor(0), a.tensor(1), a.scalar(2)); });
  t.def("lerp.Tensor",
        [](const Args& a) { return lerp(a.tensor(0), a.tensor(1), a.tensor(2)); });
  t.def(
      "lerp_",
      [](const Args& a) {
        Tensor x = a.tensor(0);
        x.lerp_(a.tensor(1), a.scalar(2));
        return InPlace{};
      });
  for (const char* name : {"addcmul", "addcdiv"}) {
    bool mul_op = std::string(name) == "addcmul";
    std::string n = name;
    t.def(n,
          [mul_op](const Args& a) {
            return mul_op ? addcmul(a.tensor(0), a.tensor(1), a.tensor(2), a.scalar(3))
                          : addcdiv(a.tensor(0), a.tensor(1), a.tensor(2), a.scalar(3));
          });
    t.def(
        n + "_",
        [mul_op](const Args& a) {
          Tensor x = a.tensor(0);
          mul_op ? x.addcmul_(a.tensor(1), a.tensor(2), a.scalar(3))
                 : x.addcdiv_(a.tensor(1), a.tensor(2), a.scalar(3));
          return InPlace{};
        });
  }
}

}  // namespace ember::python
