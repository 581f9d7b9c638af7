// The Python side of the op list (ember/ops/ops.def, Note [The op list]): a binding names an op's
// overload by its key and gives the implementation; the row gives the function (ember.name), the
// Tensor method (self is the first Tensor argument), their keyword names and defaults, a
// signature that inspect.signature reads, and TypeErrors that list what the op accepts.
//
//   ops.def("sum", [](const Args& a) { return sum(a.tensor(0), a.dims(1), a.flag(2), a.dtype(3));
//   });
//
// binds the row EMBER_OP_ROW(torch, sum, ..., "sum(Tensor input, int[]? dim=None, bool
// keepdim=False,
// *, ScalarType? dtype=None, Tensor? out=None) -> Tensor"). See Note [Op table].
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "bind.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/op_registry.h"

namespace ember::python {

// Note [Op table]
// Each op is a list of overloads tried in order; each overload is a schema of its row in ops.def
// and an implementation. A table binds the rows of one namespace; binding a key twice, or leaving
// an overload of a row unbound, is an error when ember is imported. A call binds its positional
// and keyword arguments to the first signature they
// fit, converting each by its declared type (Tensor, Tensor?, Tensor[], Scalar, int, int[] - an
// int or a sequence of ints, `int...` - sizes given as f(2, 3) or f((2, 3)) -, bool, float, str,
// ScalarType, Device, Generator, PyObject), and calls the implementation without the GIL (unless
// it returns a py::object: then it may use Python). Functions and methods are plain CPython
// callables (METH_FASTCALL), not pybind11 ones: they cost less per call, and their __doc__
// starts with a text signature so that inspect.signature works as on PyTorch's. An op whose
// signature has `Tensor? out=None` writes its result into `out` when given (as PyTorch's out=).

/// The declared type of one parameter.
enum class ArgType {
  Tensor,
  TensorList,
  Scalar,
  Int,
  IntList,  // an int or a sequence of ints
  Sizes,    // int...: f(2, 3) or f((2, 3))
  Bool,
  Float,
  String,
  DType,
  Device,
  Generator,
  Object,  // any Python object, untouched
};

struct Param {
  std::string name;
  ArgType type = ArgType::Tensor;
  bool optional = false;  // `?`: None is allowed
  bool keyword_only = false;
  bool has_default = false;
  py::object default_value;  // when has_default
};

/// One argument after conversion.
struct Value {
  bool none = true;
  const Tensor* tensor = nullptr;
  std::vector<Tensor> tensors;
  Scalar scalar;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::vector<int64_t> ints;
  std::string s;
  DType dtype = kFloat32;
  Device device{kCPU, 0};
  Generator* generator = nullptr;
  PyObject* object = nullptr;  // borrowed: the argument as given
};

/// The converted arguments of one call, by parameter index.
class Args {
 public:
  Args(const Value* values, size_t n) : values_(values), n_(n) {}
  bool has(size_t i) const { return !at(i).none; }
  const Tensor& tensor(size_t i) const;
  /// nullptr for None.
  const Tensor* opt_tensor(size_t i) const { return has(i) ? at(i).tensor : nullptr; }
  /// An undefined tensor for None.
  Tensor tensor_or_undefined(size_t i) const { return has(i) ? *at(i).tensor : Tensor(); }
  const std::vector<Tensor>& tensors(size_t i) const { return at(i).tensors; }
  Scalar scalar(size_t i) const { return at(i).scalar; }
  std::optional<Scalar> opt_scalar(size_t i) const;
  int64_t int64(size_t i) const { return at(i).i; }
  std::optional<int64_t> opt_int(size_t i) const;
  const std::vector<int64_t>& ints(size_t i) const { return at(i).ints; }
  Shape shape(size_t i) const;
  /// An int[]? dim argument: all dims (empty) for None.
  Dims dims(size_t i) const;
  bool flag(size_t i) const { return at(i).b; }
  std::optional<bool> opt_flag(size_t i) const;
  double real(size_t i) const { return at(i).d; }
  std::optional<double> opt_real(size_t i) const;
  const std::string& str(size_t i) const { return at(i).s; }
  std::optional<DType> dtype(size_t i) const;
  std::optional<Device> device(size_t i) const;
  /// nullptr (the default generator) for None.
  Generator* generator(size_t i) const { return has(i) ? at(i).generator : nullptr; }
  /// The argument as given (Object parameters, or any for inspection).
  py::handle object(size_t i) const { return at(i).object; }

 private:
  const Value& at(size_t i) const;
  const Value* values_;
  size_t n_;
};

struct Signature {
  std::string name;
  std::vector<Param> params;
  int out_index = -1;  // the `out` parameter, if any
  /// "(Tensor input, int[]? dim=None, ...)" as declared, for error messages.
  std::string declared;
};

/// Parses "name(Type arg=default, ..., *, Type kwarg=default)", with or without PyTorch's
/// " -> returns". Throws std::invalid_argument naming the fault (a bug in a row, found when ember
/// is imported).
Signature parse_signature(const std::string& text);

/// The ops of one namespace of the op list, as functions of one Python module and methods of
/// ember.Tensor.
class OpTable {
 public:
  /// `ns`: the op list's namespace ("torch", "linalg", ...).
  OpTable(std::string ns, py::module_ module, py::handle tensor_type)
      : ns_(std::move(ns)), module_(std::move(module)), tensor_type_(tensor_type) {}
  /// Binds the overload `key` ("sum", "add.Tensor") of a row to `impl`; the overloads of an op
  /// are tried in the row's order. The row says whether it is a function, a method (self is the
  /// first parameter) or both. Call `finish()` after the last one.
  template <typename F>
  OpTable& def(const std::string& key, F&& impl, const char* doc = nullptr);
  /// Publishes every op bound so far; throws if an overload of a row of this namespace is unbound.
  void finish();

  using Impl = std::function<py::object(const Args&)>;
  struct Pending;

 private:
  void add(const std::string& key, Impl impl, const char* doc);
  std::string ns_;
  py::module_ module_;
  py::handle tensor_type_;
  std::vector<std::shared_ptr<Pending>> pending_;
};

/// A result PyTorch returns as a named tuple (torch.return_types.max): the registered type's name
/// (python_object) and the fields.
struct NamedResult {
  const char* type;
  std::vector<Tensor> fields;
};

/// What an in-place op returns: the call then returns self itself (x.add_(y) is x), as PyTorch's.
struct InPlace {};

/// self.name_(...) from the out-of-place op `fn(self)` (ember's inplace_from): `inputs` are the
/// op's other tensors, for whether autograd records it.
template <typename Fn>
InPlace inplace_op(const Tensor& self, const char* name,
                   std::initializer_list<const Tensor*> inputs, Fn fn) {
  Tensor x = self;
  bool grad = any_requires_grad({&self}) || any_requires_grad(inputs);
  inplace_from(x, name, grad, fn);
  return InPlace{};
}

/// Binds the unary op `name` (function and method) and its in-place method `name_`: `inplace` is
/// the C++ in-place op (ember::exp_), or nullptr where there is none yet (the result is copied
/// back, autograd through copy_).
inline void def_unary(OpTable& t, const std::string& name, Tensor (*fn)(const Tensor&),
                      Tensor& (*inplace)(Tensor&), const char* doc = nullptr) {
  t.def(name, [fn](const Args& a) { return fn(a.tensor(0)); }, doc);
  if (inplace) {
    t.def(name + "_", [inplace](const Args& a) {
      Tensor x = a.tensor(0);
      inplace(x);
      return InPlace{};
    });
    return;
  }
  t.def(name + "_", [fn, op = name + "_"](const Args& a) {
    return inplace_op(a.tensor(0), op.c_str(), {}, fn);
  });
}

namespace detail {
py::object to_python(const NamedResult& r);
py::object to_python(InPlace);
/// The object to_python(InPlace) gives, which the call replaces with self.
PyObject* in_place_marker();
py::object to_python(const Tensor& t);
py::object to_python(const std::vector<Tensor>& ts);
py::object to_python(bool v);
py::object to_python(int64_t v);
py::object to_python(double v);
py::object to_python(const Scalar& v);
py::object to_python(py::object v);
template <typename... T>
py::object to_python(const std::tuple<T...>& t) {
  return std::apply([](const auto&... x) { return py::make_tuple(to_python(x)...); }, t);
}
}  // namespace detail

template <typename F>
OpTable& OpTable::def(const std::string& key, F&& impl, const char* doc) {
  using R = std::invoke_result_t<F, const Args&>;
  Impl wrapped;
  if constexpr (std::is_same_v<R, py::object>) {
    wrapped = std::forward<F>(impl);  // uses Python: runs with the GIL
  } else {
    wrapped = [fn = std::forward<F>(impl)](const Args& a) -> py::object {
      std::optional<R> r;
      {
        ReleaseGil no_gil;
        r.emplace(fn(a));
      }
      return detail::to_python(*r);
    };
  }
  add(key, std::move(wrapped), doc);
  return *this;
}

}  // namespace ember::python
