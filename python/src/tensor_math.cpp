// ember.Tensor's operators (x + y, x += y, x @ y, ~x, x == y, ...); the named math methods are
// declared by signature in ops_math.cpp.
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
    // PyTorch's __rpow__ copies a tensor base with torch.tensor(), so no gradient reaches it.
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return pow(y.detach(), x); },
        [](const Tensor& x, Scalar y) { return pow(y, x); });
  });
  t.def("__ipow__", [](py::object self, py::handle b) {
    return binary_inplace(
        self, b, [](Tensor& x, const Tensor& y) { x.pow_(y); },
        [](Tensor& x, Scalar y) { x.pow_(y); });
  });
  // Python 2's names, which PyTorch keeps.
  for (auto [old_name, name] : {std::pair{"__div__", "__truediv__"},
                                std::pair{"__rdiv__", "__rtruediv__"},
                                std::pair{"__idiv__", "__itruediv__"}})
    t.attr(old_name) = t.attr(name);
  t.def("__floordiv__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return floor_divide(x, y); },
        [](const Tensor& x, Scalar y) { return floor_divide(x, y); });
  });
  t.def("__rfloordiv__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return floor_divide(y, x); },
        [](const Tensor& x, Scalar y) { return floor_divide(scalar_tensor(y, x.options()), x); });
  });
  t.def("__mod__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return remainder(x, y); },
        [](const Tensor& x, Scalar y) { return remainder(x, y); });
  });
  t.def("__rmod__", [](py::handle a, py::handle b) {
    return binary(
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return remainder(y, x); },
        [](const Tensor& x, Scalar y) { return remainder(scalar_tensor(y, x.options()), x); });
  });
  // x //= y, x %= y, x &= y, ...: the named in-place methods, which carry the dtype rules.
  for (auto [dunder, method] : {std::pair{"__ifloordiv__", "floor_divide_"},
                                std::pair{"__imod__", "remainder_"},
                                std::pair{"__iand__", "bitwise_and_"},
                                std::pair{"__ior__", "bitwise_or_"},
                                std::pair{"__ixor__", "bitwise_xor_"},
                                std::pair{"__ilshift__", "bitwise_left_shift_"},
                                std::pair{"__irshift__", "bitwise_right_shift_"}}) {
    std::string m = method;
    t.def(dunder, [m](py::object self, py::handle b) -> py::object {
      if (!is_tensor(b) && !as_scalar(b)) return not_implemented();
      self.attr(m.c_str())(b);
      return self;
    });
  }
  t.def("__matmul__", [](const Tensor& a, py::handle b) -> py::object {
    if (!is_tensor(b)) return not_implemented();
    const Tensor& tb = as_tensor(b);
    return py::cast(nogil([&] { return a.matmul(tb); }));
  });
  t.def("__rmatmul__", [](const Tensor& a, py::handle b) -> py::object {
    if (!is_tensor(b)) return not_implemented();
    const Tensor& tb = as_tensor(b);
    return py::cast(nogil([&] { return tb.matmul(a); }));
  });
  t.def("__contains__", [](const Tensor& a, py::handle v) {
    EMBER_CHECK(is_tensor(v) || as_scalar(v), "Tensor.__contains__ only supports Tensor or "
                "scalar, but you passed in a ", std::string(py::str(py::type::handle_of(v))));
    Tensor found = is_tensor(v) ? eq(a, as_tensor(v)) : eq(a, *as_scalar(v));
    return found.any().item<bool>();
  });
  t.def("__reversed__", [](const Tensor& a) {
    return nogil([&] { return a.dim() == 0 ? a : flip(a, Shape{0}); });
  });
  t.attr("__nonzero__") = t.attr("__bool__");
  t.attr("__long__") = t.attr("__int__");
  t.def("__neg__", [](const Tensor& a) { return nogil([&] { return -a; }); });
  t.def("__pos__", [](const Tensor& a) { return a; });
  t.def("__abs__", [](const Tensor& a) { return nogil([&] { return a.abs(); }); });
  t.def("__invert__", [](const Tensor& a) { return nogil([&] { return bitwise_not(a); }); });
#define EMBER_PY_BITWISE(dunder, rdunder, fn)                                          \
  t.def(dunder, [](py::handle a, py::handle b) {                                       \
    return binary(                                                                     \
        as_tensor(a), b, [](const Tensor& x, const Tensor& y) { return fn(x, y); },    \
        [](const Tensor& x, Scalar y) { return fn(x, scalar_tensor(y, x.options())); }); \
  });                                                                                  \
  t.def(rdunder, [](py::handle a, py::handle b) -> py::object {                        \
    const Tensor& x = as_tensor(a);                                                    \
    Tensor y = is_tensor(b) ? as_tensor(b) : scalar_tensor(to_scalar(b, dunder), x.options()); \
    return py::cast(nogil([&] { return fn(y, x); }));                                  \
  });
  EMBER_PY_BITWISE("__and__", "__rand__", bitwise_and)
  EMBER_PY_BITWISE("__or__", "__ror__", bitwise_or)
  EMBER_PY_BITWISE("__xor__", "__rxor__", bitwise_xor)
  EMBER_PY_BITWISE("__lshift__", "__rlshift__", bitwise_left_shift)
  EMBER_PY_BITWISE("__rshift__", "__rrshift__", bitwise_right_shift)
#undef EMBER_PY_BITWISE
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
