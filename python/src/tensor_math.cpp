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
