// Elementwise math as functions and Tensor methods, one declaration each (op_table.h): unary
// functions with their in-place methods, arithmetic with alpha= and out=, comparisons, clamp,
// where, lerp, addcmul/addcdiv and the NaN/inf checks. The operators (x + y) are tensor_math.cpp.
#include "ember/ops/dispatch.h"
#include "ember/ops/tensor_index.h"
#include "op_table.h"

namespace ember::python {
namespace {

using UnaryFn = Tensor (*)(const Tensor&);
using Binary = Tensor (*)(const Tensor&, const Tensor&);

// name(input, *, out=None), Tensor.name(), Tensor.name_() (in place, autograd through copy_).
void unary(OpTable& t, const std::string& name, UnaryFn fn, const char* doc = nullptr) {
  t.def(name + "(Tensor input, *, Tensor? out=None)", [fn](const Args& a) { return fn(a.tensor(0)); },
        kFunctionAndMethod, doc);
  t.def(
      name + "_(Tensor input)",
      [fn, op = name + "_"](const Args& a) {
        return inplace_op(a.tensor(0), op.c_str(), {}, fn);
      },
      kFunctionAndMethod);
}

// A binary op taking a tensor or a number for `other`.
template <typename TT, typename TS>
void binary(OpTable& t, const std::string& name, TT tensor_fn, TS scalar_fn,
            const char* other = "other") {
  t.def(name + "(Tensor input, Tensor " + other + ", *, Tensor? out=None)",
        [tensor_fn](const Args& a) { return tensor_fn(a.tensor(0), a.tensor(1)); });
  t.def(name + "(Tensor input, Scalar " + other + ", *, Tensor? out=None)",
        [scalar_fn](const Args& a) { return scalar_fn(a.tensor(0), a.scalar(1)); });
  t.def(
      name + "_(Tensor input, Tensor " + other + ")",
      [tensor_fn, op = name + "_"](const Args& a) {
        const Tensor& other = a.tensor(1);
        return inplace_op(a.tensor(0), op.c_str(), {&other},
                          [&](const Tensor& x) { return tensor_fn(x, other); });
      },
      kMethod);
  t.def(
      name + "_(Tensor input, Scalar " + other + ")",
      [scalar_fn, op = name + "_"](const Args& a) {
        Scalar other = a.scalar(1);
        return inplace_op(a.tensor(0), op.c_str(), {},
                          [&](const Tensor& x) { return scalar_fn(x, other); });
      },
      kMethod);
}

// A comparison (no in-place variant keeps the input's dtype: x.eq_(y) writes 0/1 in it).
void compare(OpTable& t, const std::string& name, Tensor (*tt)(const Tensor&, const Tensor&),
             Tensor (*ts)(const Tensor&, Scalar)) {
  t.def(name + "(Tensor input, Tensor other, *, Tensor? out=None)",
        [tt](const Args& a) { return tt(a.tensor(0), a.tensor(1)); });
  t.def(name + "(Tensor input, Scalar other, *, Tensor? out=None)",
        [ts](const Args& a) { return ts(a.tensor(0), a.scalar(1)); });
}

Tensor clamp_tensor(const Tensor& x, const Tensor* lo, const Tensor* hi) {
  return clamp(x, lo ? *lo : Tensor(), hi ? *hi : Tensor());
}

}  // namespace

void def_math_ops(OpTable& t) {
  unary(t, "abs", [](const Tensor& x) { return abs(x); }, "|x|, elementwise.");
  unary(t, "absolute", [](const Tensor& x) { return abs(x); });
  unary(t, "neg", [](const Tensor& x) { return neg(x); });
  unary(t, "negative", [](const Tensor& x) { return neg(x); });
  unary(t, "exp", [](const Tensor& x) { return exp(x); });
  unary(t, "exp2", [](const Tensor& x) { return exp2(x); });
  unary(t, "expm1", [](const Tensor& x) { return expm1(x); });
  unary(t, "log", [](const Tensor& x) { return log(x); });
  unary(t, "log2", [](const Tensor& x) { return log2(x); });
  unary(t, "log10", [](const Tensor& x) { return log10(x); });
  unary(t, "log1p", [](const Tensor& x) { return log1p(x); });
  unary(t, "sqrt", [](const Tensor& x) { return sqrt(x); });
  unary(t, "rsqrt", [](const Tensor& x) { return rsqrt(x); });
  unary(t, "square", [](const Tensor& x) { return square(x); });
  unary(t, "reciprocal", [](const Tensor& x) { return reciprocal(x); });
  unary(t, "sign", [](const Tensor& x) { return sign(x); });
  unary(t, "sgn", [](const Tensor& x) { return sgn(x); });
  // Complex numbers (ops/complex.h).
  t.def("angle(Tensor input, *, Tensor? out=None)", [](const Args& a) { return angle(a.tensor(0)); });
  t.def("view_as_real(Tensor input)", [](const Args& a) { return view_as_real(a.tensor(0)); },
        kFunction);
  t.def("view_as_complex(Tensor input)", [](const Args& a) { return view_as_complex(a.tensor(0)); },
        kFunction);
  t.def("real(Tensor input)", [](const Args& a) { return real(a.tensor(0)); }, kFunction);
  t.def("imag(Tensor input)", [](const Args& a) { return imag(a.tensor(0)); }, kFunction);
  t.def("conj(Tensor input)", [](const Args& a) { return conj(a.tensor(0)); });
  t.def("conj_physical(Tensor input, *, Tensor? out=None)",
        [](const Args& a) { return a.tensor(0).is_complex() ? conj(a.tensor(0)) : a.tensor(0).clone(); });
  t.def("resolve_conj(Tensor input)", [](const Args& a) { return a.tensor(0); });
  t.def("is_conj(Tensor input)", [](const Args& a) { return false; });
  t.def("is_complex(Tensor input)", [](const Args& a) { return a.tensor(0).is_complex(); });
  t.def("complex(Tensor real, Tensor imag, *, Tensor? out=None)",
        [](const Args& a) { return complex(a.tensor(0), a.tensor(1)); }, kFunction);
  t.def("polar(Tensor abs, Tensor angle, *, Tensor? out=None)",
        [](const Args& a) { return polar(a.tensor(0), a.tensor(1)); }, kFunction);
  t.def("hypot(Tensor input, Tensor other, *, Tensor? out=None)",
        [](const Args& a) { return hypot(a.tensor(0), a.tensor(1)); });
  unary(t, "floor", [](const Tensor& x) { return floor(x); });
  unary(t, "ceil", [](const Tensor& x) { return ceil(x); });
  unary(t, "trunc", [](const Tensor& x) { return trunc(x); });
  unary(t, "fix", [](const Tensor& x) { return trunc(x); });
  unary(t, "frac", [](const Tensor& x) { return frac(x); });
  unary(t, "sin", [](const Tensor& x) { return sin(x); });
  unary(t, "cos", [](const Tensor& x) { return cos(x); });
  unary(t, "tan", [](const Tensor& x) { return tan(x); });
  unary(t, "asin", [](const Tensor& x) { return asin(x); });
  unary(t, "arcsin", [](const Tensor& x) { return asin(x); });
  unary(t, "acos", [](const Tensor& x) { return acos(x); });
  unary(t, "arccos", [](const Tensor& x) { return acos(x); });
  unary(t, "atan", [](const Tensor& x) { return atan(x); });
  unary(t, "arctan", [](const Tensor& x) { return atan(x); });
  unary(t, "sinh", [](const Tensor& x) { return sinh(x); });
  unary(t, "cosh", [](const Tensor& x) { return cosh(x); });
  unary(t, "tanh", [](const Tensor& x) { return tanh(x); });
  unary(t, "asinh", [](const Tensor& x) { return asinh(x); });
  unary(t, "arcsinh", [](const Tensor& x) { return asinh(x); });
  unary(t, "acosh", [](const Tensor& x) { return acosh(x); });
  unary(t, "arccosh", [](const Tensor& x) { return acosh(x); });
  unary(t, "atanh", [](const Tensor& x) { return atanh(x); });
  unary(t, "arctanh", [](const Tensor& x) { return atanh(x); });
  unary(t, "erf", [](const Tensor& x) { return erf(x); });
  unary(t, "erfc", [](const Tensor& x) { return erfc(x); });
  unary(t, "sigmoid", [](const Tensor& x) { return sigmoid(x); });
  unary(t, "relu", [](const Tensor& x) { return relu(x); });
  unary(t, "logical_not", [](const Tensor& x) { return logical_not(x); });
  unary(t, "deg2rad", [](const Tensor& x) { return x * (3.141592653589793 / 180.0); });
  unary(t, "rad2deg", [](const Tensor& x) { return x * (180.0 / 3.141592653589793); });
  t.def("positive(Tensor input)", [](const Args& a) { return a.tensor(0); });
  t.def("round(Tensor input, *, int decimals=0, Tensor? out=None)", [](const Args& a) {
    int64_t d = a.int64(1);
    if (d == 0) return round(a.tensor(0));
    double scale = std::pow(10.0, static_cast<double>(d));
    return round(a.tensor(0) * scale) / scale;
  });
  t.def(
      "round_(Tensor input, *, int decimals=0)",
      [](const Args& a) {
        int64_t d = a.int64(1);
        double scale = std::pow(10.0, static_cast<double>(d));
        return inplace_op(a.tensor(0), "round_", {}, [&](const Tensor& x) {
          return d == 0 ? round(x) : round(x * scale) / scale;
        });
      },
      kMethod);

  // --- arithmetic ---
  for (const char* name : {"add", "sub", "subtract"}) {
    bool is_add = name[0] == 'a';
    std::string n = name;
    t.def(n + "(Tensor input, Tensor other, *, Scalar alpha=1, Tensor? out=None)",
          [is_add](const Args& a) {
            return is_add ? add(a.tensor(0), a.tensor(1), a.scalar(2))
                          : sub(a.tensor(0), a.tensor(1), a.scalar(2));
          });
    t.def(n + "(Tensor input, Scalar other, *, Scalar alpha=1, Tensor? out=None)",
          [is_add](const Args& a) {
            return is_add ? add(a.tensor(0), a.scalar(1), a.scalar(2))
                          : sub(a.tensor(0), a.scalar(1), a.scalar(2));
          });
    t.def(
        n + "_(Tensor input, Tensor other, *, Scalar alpha=1)",
        [is_add](const Args& a) {
          Tensor x = a.tensor(0);
          is_add ? x.add_(a.tensor(1), a.scalar(2)) : x.sub_(a.tensor(1), a.scalar(2));
          return InPlace{};
        },
        kMethod);
    t.def(
        n + "_(Tensor input, Scalar other, *, Scalar alpha=1)",
        [is_add](const Args& a) {
          Tensor x = a.tensor(0);
          is_add ? x.add_(a.scalar(1), a.scalar(2)) : x.sub_(a.scalar(1), a.scalar(2));
          return InPlace{};
        },
        kMethod);
  }
  t.def("rsub(Tensor input, Tensor other, *, Scalar alpha=1)",
        [](const Args& a) { return sub(a.tensor(1), a.tensor(0), a.scalar(2)); }, kFunction);
  t.def("rsub(Tensor input, Scalar other, *, Scalar alpha=1)",
        [](const Args& a) { return a.scalar(1) - mul(a.tensor(0), a.scalar(2)); }, kFunction);
  for (const char* name : {"mul", "multiply"})
    binary(
        t, name, [](const Tensor& x, const Tensor& y) { return mul(x, y); },
        [](const Tensor& x, Scalar y) { return mul(x, y); });
  for (const char* name : {"div", "divide", "true_divide"}) {
    std::string n = name;
    t.def(n + "(Tensor input, Tensor other, *, str? rounding_mode=None, Tensor? out=None)",
          [](const Args& a) {
            return a.has(2) ? div(a.tensor(0), a.tensor(1), a.str(2)) : div(a.tensor(0), a.tensor(1));
          });
    t.def(n + "(Tensor input, Scalar other, *, str? rounding_mode=None, Tensor? out=None)",
          [](const Args& a) {
            const Tensor& x = a.tensor(0);
            if (!a.has(2)) return div(x, a.scalar(1));
            return div(x, scalar_tensor(a.scalar(1), TensorOptions(a.scalar(1).dtype())
                                                          .with_device(x.device())),
                       a.str(2));
          });
    t.def(
        n + "_(Tensor input, Tensor other, *, str? rounding_mode=None)",
        [](const Args& a) {
          const Tensor& other = a.tensor(1);
          if (a.has(2))
            return inplace_op(a.tensor(0), "div_", {&other},
                              [&](const Tensor& x) { return div(x, other, a.str(2)); });
          Tensor x = a.tensor(0);
          x.div_(other);
          return InPlace{};
        },
        kMethod);
    t.def(
        n + "_(Tensor input, Scalar other, *, str? rounding_mode=None)",
        [](const Args& a) {
          if (a.has(2))
            return inplace_op(a.tensor(0), "div_", {}, [&](const Tensor& x) {
              return div(x, scalar_tensor(a.scalar(1), x.options()), a.str(2));
            });
          Tensor x = a.tensor(0);
          x.div_(a.scalar(1));
          return InPlace{};
        },
        kMethod);
  }
  binary(
      t, "floor_divide", [](const Tensor& x, const Tensor& y) { return floor_divide(x, y); },
      [](const Tensor& x, Scalar y) { return floor_divide(x, y); });
  binary(
      t, "remainder", [](const Tensor& x, const Tensor& y) { return remainder(x, y); },
      [](const Tensor& x, Scalar y) { return remainder(x, y); });
  binary(
      t, "fmod", [](const Tensor& x, const Tensor& y) { return fmod(x, y); },
      [](const Tensor& x, Scalar y) { return fmod(x, y); });
  // The bitwise ops: a number beside a tensor takes the tensor's dtype (PyTorch's wrapped number).
  for (auto [name, fn] : std::initializer_list<std::pair<const char*, Binary>>{
           {"bitwise_and", &bitwise_and},
           {"bitwise_or", &bitwise_or},
           {"bitwise_xor", &bitwise_xor},
           {"bitwise_left_shift", &bitwise_left_shift},
           {"bitwise_right_shift", &bitwise_right_shift}}) {
    Binary f = fn;
    binary(
        t, name, [f](const Tensor& x, const Tensor& y) { return f(x, y); },
        [f](const Tensor& x, Scalar y) { return f(x, scalar_tensor(y, x.options())); });
  }
  unary(t, "bitwise_not", [](const Tensor& x) { return bitwise_not(x); });
  binary(
      t, "pow", [](const Tensor& x, const Tensor& y) { return pow(x, y); },
      [](const Tensor& x, Scalar y) { return pow(x, y); }, "exponent");
  t.def("pow(Scalar self, Tensor exponent, *, Tensor? out=None)",
        [](const Args& a) { return pow(a.scalar(0), a.tensor(1)); }, kFunction);
  // In float64, or complex128 where either side is complex.
  t.def("float_power(Tensor input, Tensor exponent, *, Tensor? out=None)", [](const Args& a) {
    DType d = a.tensor(0).is_complex() || a.tensor(1).is_complex() ? kComplex128 : kFloat64;
    return pow(a.tensor(0).to(d), a.tensor(1).to(d));
  });
  t.def("float_power(Tensor input, Scalar exponent, *, Tensor? out=None)", [](const Args& a) {
    DType d = a.tensor(0).is_complex() || a.scalar(1).is_complex() ? kComplex128 : kFloat64;
    return pow(a.tensor(0).to(d), a.scalar(1));
  });
  for (const char* name : {"atan2", "arctan2"})
    t.def(std::string(name) + "(Tensor input, Tensor other, *, Tensor? out=None)",
          [](const Args& a) { return atan2(a.tensor(0), a.tensor(1)); });
  t.def("maximum(Tensor input, Tensor other, *, Tensor? out=None)",
        [](const Args& a) { return maximum(a.tensor(0), a.tensor(1)); });
  t.def("minimum(Tensor input, Tensor other, *, Tensor? out=None)",
        [](const Args& a) { return minimum(a.tensor(0), a.tensor(1)); });
  t.def("fmax(Tensor input, Tensor other, *, Tensor? out=None)", [](const Args& a) {
    const Tensor &x = a.tensor(0), &y = a.tensor(1);
    return where(isnan(x), y, where(isnan(y), x, maximum(x, y)));
  });
  t.def("fmin(Tensor input, Tensor other, *, Tensor? out=None)", [](const Args& a) {
    const Tensor &x = a.tensor(0), &y = a.tensor(1);
    return where(isnan(x), y, where(isnan(y), x, minimum(x, y)));
  });
  t.def("hypot(Tensor input, Tensor other, *, Tensor? out=None)", [](const Args& a) {
    return sqrt(a.tensor(0) * a.tensor(0) + a.tensor(1) * a.tensor(1));
  });
  t.def("logaddexp(Tensor input, Tensor other, *, Tensor? out=None)", [](const Args& a) {
    Tensor m = maximum(a.tensor(0), a.tensor(1));
    // Where both are the same infinity the difference is NaN: the sum is that infinity.
    Tensor r = m + log1p(exp(-abs(a.tensor(0) - a.tensor(1))));
    return where(isinf(m), m, r);
  });

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
  t.def("logical_and(Tensor input, Tensor other, *, Tensor? out=None)",
        [](const Args& a) { return logical_and(a.tensor(0), a.tensor(1)); });
  t.def("logical_or(Tensor input, Tensor other, *, Tensor? out=None)",
        [](const Args& a) { return logical_or(a.tensor(0), a.tensor(1)); });
  t.def("logical_xor(Tensor input, Tensor other, *, Tensor? out=None)",
        [](const Args& a) { return logical_xor(a.tensor(0), a.tensor(1)); });
  t.def("isnan(Tensor input)", [](const Args& a) { return isnan(a.tensor(0)); });
  t.def("isinf(Tensor input)", [](const Args& a) { return isinf(a.tensor(0)); });
  t.def("isposinf(Tensor input, *, Tensor? out=None)", [](const Args& a) { return isposinf(a.tensor(0)); });
  t.def("isneginf(Tensor input, *, Tensor? out=None)", [](const Args& a) { return isneginf(a.tensor(0)); });
  t.def("isfinite(Tensor input)", [](const Args& a) { return isfinite(a.tensor(0)); });
  t.def("isreal(Tensor input)", [](const Args& a) {
    const Tensor& x = a.tensor(0);
    return x.is_complex() ? eq(imag(x), 0.0) : ones_like(x, kBool);
  });
  t.def("is_nonzero(Tensor input)", [](const Args& a) {
    EMBER_CHECK(a.tensor(0).numel() == 1, "[is_nonzero] Boolean value of Tensor with ",
                a.tensor(0).numel() == 0 ? "no values" : "more than one value",
                " is ambiguous");
    return a.tensor(0).item().to<bool>();
  });
  t.def("isclose(Tensor input, Tensor other, float rtol=1e-05, float atol=1e-08, "
        "bool equal_nan=False)",
        [](const Args& a) {
          return isclose(a.tensor(0), a.tensor(1), a.real(2), a.real(3), a.flag(4));
        });
  t.def("allclose(Tensor input, Tensor other, float rtol=1e-05, float atol=1e-08, "
        "bool equal_nan=False)",
        [](const Args& a) {
          return all(isclose(a.tensor(0), a.tensor(1), a.real(2), a.real(3), a.flag(4)))
              .item<bool>();
        });
  t.def("equal(Tensor input, Tensor other)", [](const Args& a) {
    const Tensor &x = a.tensor(0), &y = a.tensor(1);
    return x.sizes() == y.sizes() && (x.numel() == 0 || all(eq(x, y)).item<bool>());
  });
  t.def("nan_to_num(Tensor input, float? nan=0.0, float? posinf=None, float? neginf=None, *, "
        "Tensor? out=None)",
        [](const Args& a) {
          return nan_to_num(a.tensor(0), a.opt_real(1), a.opt_real(2), a.opt_real(3));
        });
  t.def(
      "nan_to_num_(Tensor input, float? nan=0.0, float? posinf=None, float? neginf=None)",
      [](const Args& a) {
        return inplace_op(a.tensor(0), "nan_to_num_", {}, [&](const Tensor& x) {
          return nan_to_num(x, a.opt_real(1), a.opt_real(2), a.opt_real(3));
        });
      },
      kMethod);

  // --- clamp, where, interpolation, fused updates ---
  for (const char* name : {"clamp", "clip"}) {
    std::string n = name;
    // Tensor bounds first: a 0-dim tensor would bind as a Scalar too, and lose its gradient.
    t.def(n + "(Tensor input, Tensor? min=None, Tensor? max=None, *, Tensor? out=None)",
          [](const Args& a) { return clamp_tensor(a.tensor(0), a.opt_tensor(1), a.opt_tensor(2)); });
    t.def(n + "(Tensor input, Scalar? min=None, Scalar? max=None, *, Tensor? out=None)",
          [](const Args& a) { return clamp(a.tensor(0), a.opt_scalar(1), a.opt_scalar(2)); });
    t.def(
        n + "_(Tensor input, Scalar? min=None, Scalar? max=None)",
        [](const Args& a) {
          Tensor x = a.tensor(0);
          x.clamp_(a.opt_scalar(1), a.opt_scalar(2));
          return InPlace{};
        },
        kFunctionAndMethod);
    t.def(
        n + "_(Tensor input, Tensor? min=None, Tensor? max=None)",
        [](const Args& a) {
          const Tensor* lo = a.opt_tensor(1);
          const Tensor* hi = a.opt_tensor(2);
          Tensor none;
          return inplace_op(a.tensor(0), "clamp_", {lo ? lo : &none, hi ? hi : &none},
                            [&](const Tensor& x) { return clamp_tensor(x, lo, hi); });
        },
        kFunctionAndMethod);
  }
  t.def("clamp_min(Tensor input, Tensor min)",
        [](const Args& a) { return clamp(a.tensor(0), a.tensor(1), Tensor()); });
  t.def("clamp_min(Tensor input, Scalar min)",
        [](const Args& a) { return clamp(a.tensor(0), a.scalar(1), std::nullopt); });
  t.def("clamp_max(Tensor input, Tensor max)",
        [](const Args& a) { return clamp(a.tensor(0), Tensor(), a.tensor(1)); });
  t.def("clamp_max(Tensor input, Scalar max)",
        [](const Args& a) { return clamp(a.tensor(0), std::nullopt, a.scalar(1)); });
  t.def(
      "clamp_min_(Tensor input, Scalar min)",
      [](const Args& a) {
        Tensor x = a.tensor(0);
        x.clamp_(a.scalar(1), std::nullopt);
        return InPlace{};
      },
      kMethod);
  t.def(
      "clamp_max_(Tensor input, Scalar max)",
      [](const Args& a) {
        Tensor x = a.tensor(0);
        x.clamp_(std::nullopt, a.scalar(1));
        return InPlace{};
      },
      kMethod);
  t.def("where(Tensor condition, Tensor input, Tensor other, *, Tensor? out=None)",
        [](const Args& a) { return where(a.tensor(0), a.tensor(1), a.tensor(2)); }, kFunction);
  t.def("where(Tensor condition, Tensor input, Scalar other, *, Tensor? out=None)",
        [](const Args& a) { return where(a.tensor(0), a.tensor(1), a.scalar(2)); }, kFunction);
  t.def("where(Tensor condition, Scalar input, Tensor other, *, Tensor? out=None)",
        [](const Args& a) {
          const Tensor& o = a.tensor(2);
          return where(a.tensor(0), scalar_tensor(a.scalar(1), TensorOptions(result_type(o, a.scalar(1)))
                                                                  .with_device(o.device())),
                       o);
        },
        kFunction);
  t.def("where(Tensor condition, Scalar input, Scalar other)",
        [](const Args& a) {
          const Tensor& c = a.tensor(0);
          DType dt = promote_types(a.scalar(1).dtype(), a.scalar(2).dtype());
          TensorOptions o = TensorOptions(dt).with_device(c.device());
          return where(c, scalar_tensor(a.scalar(1), o), scalar_tensor(a.scalar(2), o));
        },
        kFunction);
  t.def("where(Tensor condition)",
        [](const Args& a) { return nonzero(a.tensor(0)).unbind(1); }, kFunction);
  // x.where(condition, y): self is the values where condition holds.
  t.def("where(Tensor input, Tensor condition, Tensor other)",
        [](const Args& a) { return where(a.tensor(1), a.tensor(0), a.tensor(2)); }, kMethod);
  t.def("where(Tensor input, Tensor condition, Scalar other)",
        [](const Args& a) { return where(a.tensor(1), a.tensor(0), a.scalar(2)); }, kMethod);
  t.def("lerp(Tensor input, Tensor end, Scalar weight, *, Tensor? out=None)",
        [](const Args& a) { return lerp(a.tensor(0), a.tensor(1), a.scalar(2)); });
  t.def("lerp(Tensor input, Tensor end, Tensor weight, *, Tensor? out=None)",
        [](const Args& a) { return lerp(a.tensor(0), a.tensor(1), a.tensor(2)); });
  t.def(
      "lerp_(Tensor input, Tensor end, Scalar weight)",
      [](const Args& a) {
        Tensor x = a.tensor(0);
        x.lerp_(a.tensor(1), a.scalar(2));
        return InPlace{};
      },
      kMethod);
  for (const char* name : {"addcmul", "addcdiv"}) {
    bool mul_op = std::string(name) == "addcmul";
    std::string n = name;
    t.def(n + "(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value=1, "
              "Tensor? out=None)",
          [mul_op](const Args& a) {
            return mul_op ? addcmul(a.tensor(0), a.tensor(1), a.tensor(2), a.scalar(3))
                          : addcdiv(a.tensor(0), a.tensor(1), a.tensor(2), a.scalar(3));
          });
    t.def(
        n + "_(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value=1)",
        [mul_op](const Args& a) {
          Tensor x = a.tensor(0);
          mul_op ? x.addcmul_(a.tensor(1), a.tensor(2), a.scalar(3))
                 : x.addcdiv_(a.tensor(1), a.tensor(2), a.scalar(3));
          return InPlace{};
        },
        kMethod);
  }
}

}  // namespace ember::python
