// ember.Tensor's elementwise math (x.exp(), x.add_(y, alpha=2), ...) and its operators.
#include "bind.h"

namespace ember::python {
namespace {

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

// a (op) b for b a tensor or a number; NotImplemented otherwise, so Python tries b's reflection.
template <typename TF, typename SF>
py::object binary(const Tensor& a, py::handle b, TF tensor_fn, SF scalar_fn) {
  if (is_tensor(b)) {
    const Tensor& tb = as_tensor(b);
    return py::cast(nogil([&] { return tensor_fn(a, tb); }));
  }
  if (std::optional<Scalar> s = as_scalar(b))
    return py::cast(nogil([&] { return scalar_fn(a, *s); }));
  return not_implemented();
}

template <typename TF, typename SF>
py::object binary_inplace(py::object self, py::handle b, TF tensor_fn, SF scalar_fn) {
  if (is_tensor(b)) {
    const Tensor& tb = as_tensor(b);
    return inplace(self, [&](Tensor& t) { tensor_fn(t, tb); });
  }
  if (std::optional<Scalar> s = as_scalar(b))
    return inplace(self, [&](Tensor& t) { scalar_fn(t, *s); });
  return not_implemented();
}

}  // namespace

void bind_tensor_math(py::class_<Tensor>& t) {
  // --- elementwise math: x.op(...), x.op_(...) ---
#define EMBER_PY_UNARY(name)                                                     \
  t.def(#name, [](const Tensor& x) { return nogil([&] { return x.name(); }); }); \
  t.def(#name "_", [](py::object self) { return inplace(self, [](Tensor& x) { x.name##_(); }); });
  EMBER_PY_UNARY(neg)
  EMBER_PY_UNARY(abs)
  EMBER_PY_UNARY(exp)
  EMBER_PY_UNARY(log)
  EMBER_PY_UNARY(sqrt)
  EMBER_PY_UNARY(rsqrt)
  EMBER_PY_UNARY(tanh)
  EMBER_PY_UNARY(sigmoid)
  EMBER_PY_UNARY(relu)
  EMBER_PY_UNARY(sin)
  EMBER_PY_UNARY(cos)
  EMBER_PY_UNARY(square)
  EMBER_PY_UNARY(reciprocal)
  EMBER_PY_UNARY(sign)
  EMBER_PY_UNARY(floor)
  EMBER_PY_UNARY(ceil)
  EMBER_PY_UNARY(round)
  EMBER_PY_UNARY(log1p)
  EMBER_PY_UNARY(expm1)
  EMBER_PY_UNARY(logical_not)
#undef EMBER_PY_UNARY
  t.def("negative", [](const Tensor& x) { return nogil([&] { return x.neg(); }); });

  // Binary methods taking a tensor or a number (add/sub with alpha=).
#define EMBER_PY_ALPHA(name)                                                            \
  t.def(                                                                                \
      #name,                                                                            \
      [](const Tensor& a, py::handle b, py::handle alpha) {                             \
        Scalar al = to_scalar(alpha, #name);                                            \
        py::object r = binary(                                                          \
            a, b, [&](const Tensor& x, const Tensor& y) { return x.name(y, al); },      \
            [&](const Tensor& x, Scalar y) { return x.name(y, al); });                  \
        if (r.ptr() == Py_NotImplemented)                                               \
          throw py::type_error(#name "(): expected a tensor or a number for 'other'");  \
        return r;                                                                       \
      },                                                                                \
      "other"_a, py::kw_only(), "alpha"_a = 1);                                         \
  t.def(                                                                                \
      #name "_",                                                                        \
      [](py::object self, py::handle b, py::handle alpha) {                             \
        Scalar al = to_scalar(alpha, #name "_");                                        \
        py::object r = binary_inplace(                                                  \
            self, b, [&](Tensor& x, const Tensor& y) { x.name##_(y, al); },             \
            [&](Tensor& x, Scalar y) { x.name##_(y, al); });                            \
        if (r.ptr() == Py_NotImplemented)                                               \
          throw py::type_error(#name "_(): expected a tensor or a number for 'other'"); \
        return r;                                                                       \
      },                                                                                \
      "other"_a, py::kw_only(), "alpha"_a = 1);
  EMBER_PY_ALPHA(add)
  EMBER_PY_ALPHA(sub)
#undef EMBER_PY_ALPHA
#define EMBER_PY_BINARY(name, method)                                              \
  t.def(#name, [](const Tensor& a, py::handle b) {                                 \
    py::object r = binary(                                                         \
        a, b, [](const Tensor& x, const Tensor& y) { return x.method(y); },        \
        [](const Tensor& x, Scalar y) { return x.method(y); });                    \
    if (r.ptr() == Py_NotImplemented)                                              \
      throw py::type_error(#name "(): expected a tensor or a number for 'other'"); \
    return r;                                                                      \
  });
  EMBER_PY_BINARY(mul, mul)
  EMBER_PY_BINARY(multiply, mul)
  EMBER_PY_BINARY(div, div)
  EMBER_PY_BINARY(divide, div)
  EMBER_PY_BINARY(true_divide, div)
  EMBER_PY_BINARY(pow, pow)
  EMBER_PY_BINARY(eq, eq)
  EMBER_PY_BINARY(ne, ne)
  EMBER_PY_BINARY(lt, lt)
  EMBER_PY_BINARY(le, le)
  EMBER_PY_BINARY(gt, gt)
  EMBER_PY_BINARY(ge, ge)
#undef EMBER_PY_BINARY
#define EMBER_PY_BINARY_INPLACE(name, method)                                      \
  t.def(#name, [](py::object self, py::handle b) {                                 \
    py::object r = binary_inplace(                                                 \
        self, b, [](Tensor& x, const Tensor& y) { x.method(y); },                  \
        [](Tensor& x, Scalar y) { x.method(y); });                                 \
    if (r.ptr() == Py_NotImplemented)                                              \
      throw py::type_error(#name "(): expected a tensor or a number for 'other'"); \
    return r;                                                                      \
  });
  EMBER_PY_BINARY_INPLACE(mul_, mul_)
  EMBER_PY_BINARY_INPLACE(div_, div_)
  EMBER_PY_BINARY_INPLACE(pow_, pow_)
#undef EMBER_PY_BINARY_INPLACE
  t.def("maximum",
        [](const Tensor& a, const Tensor& b) { return nogil([&] { return a.maximum(b); }); })
      .def("minimum",
           [](const Tensor& a, const Tensor& b) { return nogil([&] { return a.minimum(b); }); })
      .def("logical_and",
           [](const Tensor& a, const Tensor& b) { return nogil([&] { return a.logical_and(b); }); })
      .def("logical_or",
           [](const Tensor& a, const Tensor& b) { return nogil([&] { return a.logical_or(b); }); })
      .def(
          "addcmul",
          [](const Tensor& x, const Tensor& a, const Tensor& b, py::handle v) {
            Scalar s = to_scalar(v, "addcmul");
            return nogil([&] { return x.addcmul(a, b, s); });
          },
          "tensor1"_a, "tensor2"_a, py::kw_only(), "value"_a = 1)
      .def(
          "addcmul_",
          [](py::object self, const Tensor& a, const Tensor& b, py::handle v) {
            Scalar s = to_scalar(v, "addcmul_");
            return inplace(self, [&](Tensor& x) { x.addcmul_(a, b, s); });
          },
          "tensor1"_a, "tensor2"_a, py::kw_only(), "value"_a = 1)
      .def(
          "addcdiv",
          [](const Tensor& x, const Tensor& a, const Tensor& b, py::handle v) {
            Scalar s = to_scalar(v, "addcdiv");
            return nogil([&] { return x.addcdiv(a, b, s); });
          },
          "tensor1"_a, "tensor2"_a, py::kw_only(), "value"_a = 1)
      .def(
          "addcdiv_",
          [](py::object self, const Tensor& a, const Tensor& b, py::handle v) {
            Scalar s = to_scalar(v, "addcdiv_");
            return inplace(self, [&](Tensor& x) { x.addcdiv_(a, b, s); });
          },
          "tensor1"_a, "tensor2"_a, py::kw_only(), "value"_a = 1)
      .def(
          "lerp",
          [](const Tensor& x, const Tensor& end, py::handle w) {
            Scalar s = to_scalar(w, "lerp");
            return nogil([&] { return x.lerp(end, s); });
          },
          "end"_a, "weight"_a)
      .def(
          "lerp_",
          [](py::object self, const Tensor& end, py::handle w) {
            Scalar s = to_scalar(w, "lerp_");
            return inplace(self, [&](Tensor& x) { x.lerp_(end, s); });
          },
          "end"_a, "weight"_a)
      .def(
          "clamp",
          [](const Tensor& x, py::handle min, py::handle max) {
            std::optional<Scalar> lo, hi;
            if (!min.is_none()) lo = to_scalar(min, "clamp");
            if (!max.is_none()) hi = to_scalar(max, "clamp");
            return nogil([&] { return x.clamp(lo, hi); });
          },
          "min"_a = py::none(), "max"_a = py::none())
      .def(
          "clip",
          [](const Tensor& x, py::handle min, py::handle max) {
            std::optional<Scalar> lo, hi;
            if (!min.is_none()) lo = to_scalar(min, "clip");
            if (!max.is_none()) hi = to_scalar(max, "clip");
            return nogil([&] { return x.clamp(lo, hi); });
          },
          "min"_a = py::none(), "max"_a = py::none())
      .def(
          "clamp_",
          [](py::object self, py::handle min, py::handle max) {
            std::optional<Scalar> lo, hi;
            if (!min.is_none()) lo = to_scalar(min, "clamp_");
            if (!max.is_none()) hi = to_scalar(max, "clamp_");
            return inplace(self, [&](Tensor& x) { x.clamp_(lo, hi); });
          },
          "min"_a = py::none(), "max"_a = py::none())
      .def("clamp_min",
           [](const Tensor& x, py::handle v) {
             Scalar s = to_scalar(v, "clamp_min");
             return nogil([&] { return x.clamp_min(s); });
           })
      .def("clamp_max", [](const Tensor& x, py::handle v) {
        Scalar s = to_scalar(v, "clamp_max");
        return nogil([&] { return x.clamp_max(s); });
      });

  // --- operators ---
  t.def("__add__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return x + y; },
        [](const Tensor& x, Scalar y) { return x + y; });
  });
  t.def("__radd__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return y + x; },
        [](const Tensor& x, Scalar y) { return y + x; });
  });
  t.def("__iadd__", [](py::object self, py::handle b) {
    return binary_inplace(
        self, b, [](Tensor& x, const Tensor& y) { x.add_(y); },
        [](Tensor& x, Scalar y) { x.add_(y); });
  });
  t.def("__sub__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return x - y; },
        [](const Tensor& x, Scalar y) { return x - y; });
  });
  t.def("__rsub__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return y - x; },
        [](const Tensor& x, Scalar y) { return y - x; });
  });
  t.def("__isub__", [](py::object self, py::handle b) {
    return binary_inplace(
        self, b, [](Tensor& x, const Tensor& y) { x.sub_(y); },
        [](Tensor& x, Scalar y) { x.sub_(y); });
  });
  t.def("__mul__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return x * y; },
        [](const Tensor& x, Scalar y) { return x * y; });
  });
  t.def("__rmul__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return y * x; },
        [](const Tensor& x, Scalar y) { return y * x; });
  });
  t.def("__imul__", [](py::object self, py::handle b) {
    return binary_inplace(
        self, b, [](Tensor& x, const Tensor& y) { x.mul_(y); },
        [](Tensor& x, Scalar y) { x.mul_(y); });
  });
  t.def("__truediv__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return x / y; },
        [](const Tensor& x, Scalar y) { return x / y; });
  });
  t.def("__rtruediv__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return y / x; },
        [](const Tensor& x, Scalar y) { return y / x; });
  });
  t.def("__itruediv__", [](py::object self, py::handle b) {
    return binary_inplace(
        self, b, [](Tensor& x, const Tensor& y) { x.div_(y); },
        [](Tensor& x, Scalar y) { x.div_(y); });
  });
  t.def("__pow__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return pow(x, y); },
        [](const Tensor& x, Scalar y) { return pow(x, y); });
  });
  t.def("__rpow__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return pow(y, x); },
        [](const Tensor& x, Scalar y) { return pow(y, x); });
  });
  t.def("__ipow__", [](py::object self, py::handle b) {
    return binary_inplace(
        self, b, [](Tensor& x, const Tensor& y) { x.pow_(y); },
        [](Tensor& x, Scalar y) { x.pow_(y); });
  });
  t.def("__matmul__", [](const Tensor& a, py::handle b) -> py::object {
    if (!is_tensor(b)) return not_implemented();
    const Tensor& tb = as_tensor(b);
    return py::cast(nogil([&] { return a.matmul(tb); }));
  });
  t.def("__neg__", [](const Tensor& a) { return nogil([&] { return -a; }); });
  t.def("__pos__", [](const Tensor& a) { return a; });
  t.def("__abs__", [](const Tensor& a) { return nogil([&] { return a.abs(); }); });
  t.def("__invert__", [](const Tensor& a) {
    EMBER_CHECK(a.dtype() == kBool, "[__invert__] ~ is defined for bool tensors, got ", a.dtype());
    return nogil([&] { return logical_not(a); });
  });
  t.def("__and__", [](const Tensor& a, const Tensor& b) {
    EMBER_CHECK(a.dtype() == kBool && b.dtype() == kBool,
                "[__and__] & is defined for bool tensors, got ", a.dtype(), " and ", b.dtype());
    return nogil([&] { return logical_and(a, b); });
  });
  t.def("__or__", [](const Tensor& a, const Tensor& b) {
    EMBER_CHECK(a.dtype() == kBool && b.dtype() == kBool,
                "[__or__] | is defined for bool tensors, got ", a.dtype(), " and ", b.dtype());
    return nogil([&] { return logical_or(a, b); });
  });
#define EMBER_PY_COMPARE(dunder, fn)                                                \
  t.def(dunder, [](py::handle a, py::handle b) {                                    \
    return binary(                                                                  \
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return fn(x, y); }, \
        [](const Tensor& x, Scalar y) { return fn(x, y); });                        \
  });
  EMBER_PY_COMPARE("__eq__", eq)
  EMBER_PY_COMPARE("__ne__", ne)
  EMBER_PY_COMPARE("__lt__", lt)
  EMBER_PY_COMPARE("__le__", le)
  EMBER_PY_COMPARE("__gt__", gt)
  EMBER_PY_COMPARE("__ge__", ge)
#undef EMBER_PY_COMPARE
}

}  // namespace ember::python
