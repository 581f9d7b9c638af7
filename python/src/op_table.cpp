// The op table: signature parsing, argument binding and conversion, and the CPython callables
// (see Note [Op table] in op_table.h).
#include "op_table.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "ember/ops/capture.h"

namespace ember::python {

// ---------------------------------------------------------------------------------------------
// Signatures

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Splits on commas outside brackets and quotes.
std::vector<std::string> split_params(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  char quote = 0;
  std::string cur;
  for (char c : s) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

ArgType parse_type(std::string t, bool& optional, const std::string& where) {
  optional = !t.empty() && t.back() == '?';
  if (optional) t.pop_back();
  static const std::pair<const char*, ArgType> kTypes[] = {
      {"Tensor", ArgType::Tensor},      {"Tensor[]", ArgType::TensorList},
      {"Scalar", ArgType::Scalar},      {"int", ArgType::Int},
      {"int[]", ArgType::IntList},      {"int...", ArgType::Sizes},
      {"bool", ArgType::Bool},          {"float", ArgType::Float},
      {"str", ArgType::String},         {"ScalarType", ArgType::DType},
      {"Device", ArgType::Device},      {"Generator", ArgType::Generator},
      {"PyObject", ArgType::Object},
  };
  for (auto& [name, type] : kTypes)
    if (t == name) return type;
  throw std::invalid_argument("op table: unknown type '" + t + "' in " + where);
}

}  // namespace

Signature parse_signature(const std::string& text) {
  size_t open = text.find('('), close = std::string::npos;
  for (size_t i = open, depth = 0; open != std::string::npos && i < text.size(); ++i) {
    if (text[i] == '(' || text[i] == '[') ++depth;
    if ((text[i] == ')' || text[i] == ']') && --depth == 0) {
      close = i;
      break;
    }
  }
  if (open == std::string::npos || close == std::string::npos || close < open)
    throw std::invalid_argument("op table: malformed signature '" + text + "'");
  Signature sig;
  sig.name = trim(text.substr(0, open));
  sig.declared = text.substr(open, close - open + 1);
  py::object literal_eval = py::module_::import("ast").attr("literal_eval");
  bool keyword_only = false;
  for (const std::string& item : split_params(text.substr(open + 1, close - open - 1))) {
    if (item == "*") {
      keyword_only = true;
      continue;
    }
    Param p;
    p.keyword_only = keyword_only;
    std::string decl = item, deflt;
    if (size_t eq = item.find('='); eq != std::string::npos) {
      decl = trim(item.substr(0, eq));
      deflt = trim(item.substr(eq + 1));
      p.has_default = true;
    }
    size_t space = decl.rfind(' ');
    if (space == std::string::npos)
      throw std::invalid_argument("op table: parameter '" + item + "' has no type in " + text);
    p.name = trim(decl.substr(space + 1));
    p.type = parse_type(trim(decl.substr(0, space)), p.optional, text);
    if (p.has_default) {
      // Defaults are Python literals; PyTorch writes [] for an empty list and True/False.
      p.default_value = literal_eval(py::str(deflt));
      if (p.default_value.is_none() && !p.optional && p.type != ArgType::Object)
        throw std::invalid_argument("op table: '" + p.name + "' defaults to None but is not "
                                    "optional in " + text);
    }
    if (p.name == "out") sig.out_index = static_cast<int>(sig.params.size());
    sig.params.push_back(std::move(p));
  }
  return sig;
}

// ---------------------------------------------------------------------------------------------
// Conversion

namespace {

std::string type_name(PyObject* o) { return Py_TYPE(o)->tp_name; }

bool is_int(PyObject* o) {
  if (PyBool_Check(o)) return false;
  if (PyLong_Check(o)) return true;
  // NumPy integers and anything else that is an index (not a tensor: PyTorch reads a 1-element
  // tensor as an int only where it asks for a Scalar).
  return PyIndex_Check(o) && !PyFloat_Check(o) && !is_tensor(o);
}

int64_t as_int(PyObject* o) {
  int overflow = 0;
  long long v;
  if (PyLong_Check(o)) {
    v = PyLong_AsLongLongAndOverflow(o, &overflow);
  } else {
    py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (!idx) throw py::error_already_set();
    v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
  }
  if (overflow != 0) throw py::value_error("integer out of the int64 range");
  return v;
}

bool int_list(PyObject* o, std::vector<int64_t>& out) {
  out.clear();
  if (is_int(o)) {
    out.push_back(as_int(o));
    return true;
  }
  if (!PyTuple_Check(o) && !PyList_Check(o)) {
    // ember.Size is a tuple subclass; other sequences (torch.Size-like) are read item by item.
    if (!PySequence_Check(o) || PyUnicode_Check(o) || is_tensor(o)) return false;
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(o);
  for (py::handle item : seq) {
    if (!is_int(item.ptr())) {
      // A 0-dim integer tensor in a size, as PyTorch allows.
      if (is_tensor(item) && as_tensor(item).dim() == 0 && !as_tensor(item).is_floating_point()) {
        out.push_back(as_tensor(item).item<int64_t>());
        continue;
      }
      return false;
    }
    out.push_back(as_int(item.ptr()));
  }
  return true;
}

// Converts `o` to `p`'s type into `v`; false when it is of another type (the caller tries the
// next overload or reports).
bool convert(const Param& p, PyObject* o, Value& v) {
  v.object = o;
  if (o == Py_None) {
    v.none = true;
    return p.optional || p.type == ArgType::Object;
  }
  v.none = false;
  switch (p.type) {
    case ArgType::Tensor:
      if (!is_tensor(o)) return false;
      v.tensor = &as_tensor(o);
      return true;
    case ArgType::TensorList: {
      if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
      v.tensors.clear();
      for (py::handle item : py::reinterpret_borrow<py::sequence>(o)) {
        if (!is_tensor(item)) return false;
        v.tensors.push_back(as_tensor(item));
      }
      return true;
    }
    case ArgType::Scalar: {
      if (std::optional<Scalar> s = as_scalar(o)) {
        v.scalar = *s;
        return true;
      }
      // A one-element tensor stands for its value (PyTorch reads it with item()).
      if (is_tensor(o) && as_tensor(o).numel() == 1) {
        v.scalar = as_tensor(o).item();
        return true;
      }
      return false;
    }
    case ArgType::Int:
      if (!is_int(o)) return false;
      v.i = as_int(o);
      return true;
    case ArgType::IntList:
    case ArgType::Sizes:
      return int_list(o, v.ints);
    case ArgType::Bool:
      if (PyBool_Check(o)) {
        v.b = o == Py_True;
        return true;
      }
      // NumPy bools
      if (py::hasattr(o, "dtype") && !is_tensor(o) &&
          std::string(py::str(py::handle(o).attr("dtype"))) == "bool") {
        v.b = PyObject_IsTrue(o) == 1;
        return true;
      }
      return false;
    case ArgType::Float:
      if (PyFloat_Check(o) || is_int(o)) {
        v.d = PyFloat_AsDouble(o);
        return !PyErr_Occurred();
      }
      if (std::optional<Scalar> s = as_scalar(o)) {
        v.d = s->to_double();
        return true;
      }
      return false;
    case ArgType::String:
      if (!PyUnicode_Check(o)) return false;
      v.s = py::cast<std::string>(py::handle(o));
      return true;
    case ArgType::DType:
      try {
        v.dtype = to_dtype(o);
        return true;
      } catch (const py::type_error&) {
        return false;
      }
    case ArgType::Device:
      try {
        v.device = to_device(o);
        return true;
      } catch (const py::type_error&) {
        return false;
      }
    case ArgType::Generator:
      try {
        v.generator = py::cast<Generator*>(py::handle(o));
        return true;
      } catch (const py::cast_error&) {
        return false;
      }
    case ArgType::Object:
      return true;
  }
  return false;
}

const char* type_text(const Param& p) {
  switch (p.type) {
    case ArgType::Tensor:
      return "Tensor";
    case ArgType::TensorList:
      return "tuple of Tensors";
    case ArgType::Scalar:
      return "Number";
    case ArgType::Int:
      return "int";
    case ArgType::IntList:
    case ArgType::Sizes:
      return "tuple of ints";
    case ArgType::Bool:
      return "bool";
    case ArgType::Float:
      return "float";
    case ArgType::String:
      return "str";
    case ArgType::DType:
      return "dtype";
    case ArgType::Device:
      return "device";
    case ArgType::Generator:
      return "Generator";
    case ArgType::Object:
      return "object";
  }
  return "?";
}

constexpr size_t kMaxParams = 16;

// Binds a call's arguments to `sig`; on a mismatch returns false with `why` saying what did not
// fit (a missing, unexpected or mistyped argument).
bool bind(const Signature& sig, PyObject* self, PyObject* const* args, Py_ssize_t nargs,
          PyObject* kwnames, std::array<Value, kMaxParams>& values, std::string& why) {
  const size_t n = sig.params.size();
  std::array<PyObject*, kMaxParams> given{};
  size_t pos = 0;
  auto take = [&](size_t i, PyObject* o) {
    if (given[i]) {
      why = "got multiple values for argument '" + sig.params[i].name + "'";
      return false;
    }
    given[i] = o;
    return true;
  };
  if (self) {
    // A method: self fills the first Tensor parameter.
    if (n == 0) return why = "takes no arguments", false;
    take(0, self);
    pos = 1;
  }
  for (Py_ssize_t a = 0; a < nargs; ++a) {
    // Sizes given one by one (zeros(2, 3)) fill an int... parameter.
    if (pos < n && sig.params[pos].type == ArgType::Sizes && is_int(args[a])) {
      py::tuple rest(nargs - a);
      Py_ssize_t k = 0;
      for (; a + k < nargs && is_int(args[a + k]); ++k) {
        Py_INCREF(args[a + k]);
        PyTuple_SET_ITEM(rest.ptr(), k, args[a + k]);
      }
      if (k != nargs - a) return why = "sizes must be ints", false;
      values[pos].ints.clear();
      for (Py_ssize_t j = 0; j < k; ++j) values[pos].ints.push_back(as_int(args[a + j]));
      values[pos].none = false;
      values[pos].object = Py_None;
      given[pos++] = Py_Ellipsis;  // converted already
      break;
    }
    if (pos >= n || sig.params[pos].keyword_only) {
      why = "takes " + std::to_string(pos - (self ? 1 : 0)) + " positional arguments but " +
            std::to_string(nargs) + " were given";
      return false;
    }
    if (!take(pos++, args[a])) return false;
  }
  if (kwnames) {
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; ++k) {
      const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
      size_t i = 0;
      while (i < n && sig.params[i].name != key) ++i;
      // `self` may also be given as input= for a method bound to it.
      if (i == n) return why = std::string("got an unexpected keyword argument '") + key + "'",
                         false;
      if (self && i == 0) return why = std::string("got multiple values for argument '") + key + "'",
                                 false;
      if (!take(i, args[nargs + k])) return false;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const Param& p = sig.params[i];
    if (given[i] == Py_Ellipsis) continue;
    PyObject* o = given[i];
    if (!o) {
      if (!p.has_default) return why = "missing required argument '" + p.name + "'", false;
      o = p.default_value.ptr();
    }
    if (!convert(p, o, values[i])) {
      if (p.type == ArgType::TensorList && (PyList_Check(o) || PyTuple_Check(o))) {
        for (py::handle item : py::reinterpret_borrow<py::sequence>(o))
          if (!is_tensor(item))
            return why = "argument '" + p.name + "' must be a sequence of tensors, got an "
                         "element of type " + type_name(item.ptr()),
                   false;
      }
      why = "argument '" + p.name + "' must be " + type_text(p) + (p.optional ? " or None" : "") +
            ", not " + type_name(o);
      return false;
    }
  }
  return true;
}

// What a call was given, for "got (Tensor, dim=str)".
std::string describe_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
  std::string out = "(";
  bool first = true;
  auto add = [&](const std::string& s) {
    out += (first ? "" : ", ") + s;
    first = false;
  };
  if (self) add("Tensor");
  for (Py_ssize_t a = 0; a < nargs; ++a) add(is_tensor(args[a]) ? "Tensor" : type_name(args[a]));
  if (kwnames)
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); ++k)
      add(std::string(PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k))) + "=" +
          (is_tensor(args[nargs + k]) ? "Tensor" : type_name(args[nargs + k])));
  return out + ")";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Args

const Value& Args::at(size_t i) const {
  if (i >= n_) throw std::logic_error("op table: argument index out of range");
  return values_[i];
}
const Tensor& Args::tensor(size_t i) const {
  const Value& v = at(i);
  if (v.none || !v.tensor) throw std::logic_error("op table: argument is not a tensor");
  return *v.tensor;
}
std::optional<Scalar> Args::opt_scalar(size_t i) const {
  return has(i) ? std::optional<Scalar>(at(i).scalar) : std::nullopt;
}
std::optional<int64_t> Args::opt_int(size_t i) const {
  return has(i) ? std::optional<int64_t>(at(i).i) : std::nullopt;
}
std::optional<bool> Args::opt_flag(size_t i) const {
  return has(i) ? std::optional<bool>(at(i).b) : std::nullopt;
}
std::optional<double> Args::opt_real(size_t i) const {
  return has(i) ? std::optional<double>(at(i).d) : std::nullopt;
}
Shape Args::shape(size_t i) const {
  const auto& v = at(i).ints;
  return Shape(v.begin(), v.end());
}
Dims Args::dims(size_t i) const {
  Dims d;
  if (has(i))
    for (int64_t x : at(i).ints) d.push_back(x);
  return d;
}
std::optional<DType> Args::dtype(size_t i) const {
  return has(i) ? std::optional<DType>(at(i).dtype) : std::nullopt;
}
std::optional<Device> Args::device(size_t i) const {
  return has(i) ? std::optional<Device>(at(i).device) : std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Results

namespace detail {
py::object to_python(const Tensor& t) { return py::cast(t); }
py::object to_python(const std::vector<Tensor>& ts) {
  py::tuple out(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) out[i] = py::cast(ts[i]);
  return out;
}
py::object to_python(bool v) { return py::bool_(v); }
py::object to_python(int64_t v) { return py::int_(v); }
py::object to_python(double v) { return py::float_(v); }
py::object to_python(const Scalar& s) { return scalar_to_py(s); }
py::object to_python(py::object v) { return v; }
PyObject* in_place_marker() {
  static PyObject* marker = PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
  return marker;
}
py::object to_python(InPlace) { return py::reinterpret_borrow<py::object>(in_place_marker()); }
py::object to_python(const NamedResult& r) {
  py::tuple fields(r.fields.size());
  for (size_t i = 0; i < r.fields.size(); ++i) fields[i] = py::cast(r.fields[i]);
  return python_object(r.type)(*fields);
}
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// The callables

struct OpTable::Pending {
  std::string name;
  const OpInfo* row = nullptr;
  std::vector<int> bound;  // the row's schemas bound so far, by index
  struct Overload {
    Signature sig;
    Impl impl;
    int index;  // in the row: overloads are tried in the row's order
  };
  std::vector<Overload> functions, methods;  // a method's overloads bind self
  std::string doc;
  PyMethodDef function_def{}, method_def{};
  std::string function_doc, method_doc;  // storage for the defs' ml_doc
};

namespace {

using Op = OpTable::Pending;

// out= : the result is written into the given tensor and the call returns it. As PyTorch's: an
// out of another shape is resized (with PyTorch's deprecation warning unless it was empty), the
// result must cast into out's dtype without losing its kind, and autograd does not record into
// out.
py::object write_out(const std::string& name, const Tensor& out, py::object result,
                     PyObject* out_object) {
  if (!is_tensor(result)) throw py::type_error("out=: the op does not return one tensor");
  const Tensor& r = as_tensor(result);
  EMBER_CHECK(!r.requires_grad() && !(GradMode::is_enabled() && out.requires_grad()), "[", name, "] ", name,
              "(): functions with out=... arguments don't support automatic differentiation, "
              "but one of the arguments requires grad.");
  EMBER_CHECK(can_cast(r.dtype(), out.dtype()), "[", name, "] result type ", r.dtype(),
              " can't be cast to the desired output type ", out.dtype());
  if (out.sizes() != r.sizes() && out.numel() != 0) {
    std::ostringstream msg;
    msg << "An output with one or more elements was resized since it had shape " << out.sizes()
        << ", which does not match the required output shape " << r.sizes()
        << ". This behavior is deprecated, and in a future PyTorch release outputs will not be "
           "resized unless they have zero elements. You can explicitly reuse an out tensor t by "
           "resizing it, inplace, to zero elements with t.resize_(0).";
    if (PyErr_WarnEx(PyExc_UserWarning, msg.str().c_str(), 1) != 0) throw py::error_already_set();
  }
  {
    ReleaseGil no_gil;
    Tensor o = out;
    if (o.sizes() != r.sizes()) o.set_data(empty(r.sizes(), o.options()));
    NoGradGuard no_grad;
    o.copy_(r);
  }
  return py::reinterpret_borrow<py::object>(out_object);
}

PyObject* call(const std::vector<Op::Overload>& overloads, const std::string& name,
               PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  try {
    std::array<Value, kMaxParams> values;
    std::string why, first_why;
    for (const Op::Overload& o : overloads) {
      if (!bind(o.sig, self, args, nargs, kwnames, values, why)) {
        if (first_why.empty()) first_why = why;
        continue;
      }
      Args a(values.data(), o.sig.params.size());
      py::object result = o.impl(a);
      if (result.ptr() == detail::in_place_marker())
        result = py::reinterpret_borrow<py::object>(values[0].object);
      if (o.sig.out_index >= 0 && a.has(o.sig.out_index))
        result = write_out(name, a.tensor(o.sig.out_index), std::move(result),
                           values[o.sig.out_index].object);
      return result.release().ptr();
    }
    std::string msg = name + "()";
    if (overloads.size() == 1) {
      msg += " " + first_why;
    } else {
      msg += " received an invalid combination of arguments - got " +
             describe_call(self, args, nargs, kwnames) + ", but expected one of:";
      for (const Op::Overload& o : overloads) msg += "\n * " + o.sig.declared;
    }
    PyErr_SetString(PyExc_TypeError, msg.c_str());
    return nullptr;
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  } catch (...) {
    if (py::detail::apply_exception_translators(
            py::detail::get_local_internals().registered_exception_translators) ||
        py::detail::apply_exception_translators(
            py::detail::get_internals().registered_exception_translators))
      return nullptr;
    PyErr_SetString(PyExc_SystemError, ("unexpected C++ exception in " + name + "()").c_str());
    return nullptr;
  }
}

// A function's `self`: the op it runs. CPython pickles a builtin function as getattr(self, name),
// so the handle pickles as an import of its module: ember.nn.functional.gelu, and a module that
// holds it (as the Transformer layers hold their activation), pickle and copy by name.
struct OpHandle {
  PyObject_HEAD
  Op* op;
  PyObject* module_name;
};

PyObject* op_handle_reduce(PyObject* self, PyObject*) {
  try {
    py::object import_module = py::module_::import("importlib").attr("import_module");
    py::object name = py::reinterpret_borrow<py::object>(reinterpret_cast<OpHandle*>(self)->module_name);
    return py::make_tuple(import_module, py::make_tuple(name)).release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  }
}

PyMethodDef op_handle_methods[] = {{"__reduce__", op_handle_reduce, METH_NOARGS, nullptr},
                                   {nullptr, nullptr, 0, nullptr}};

PyTypeObject* op_handle_type() {
  static PyTypeObject* type = [] {
    static PyTypeObject t = [] {
      PyTypeObject zero;
      std::memset(&zero, 0, sizeof zero);  // CPython's static types: every slot null but these
      return zero;
    }();
    Py_SET_REFCNT(&t, 1);
    t.tp_name = "ember._C._OpHandle";
    t.tp_basicsize = sizeof(OpHandle);
    t.tp_flags = Py_TPFLAGS_DEFAULT;
    t.tp_methods = op_handle_methods;
    if (PyType_Ready(&t) != 0) throw py::error_already_set();
    return &t;
  }();
  return type;
}

PyObject* function_trampoline(PyObject* handle, PyObject* const* args, Py_ssize_t nargs,
                              PyObject* kwnames) {
  Op* op = reinterpret_cast<OpHandle*>(handle)->op;
  return call(op->functions, op->name, nullptr, args, nargs, kwnames);
}

// Methods are descriptors on the type, whose C function receives the instance as `self`, with
// no room for the op: each method gets its own function, an instantiation of this template.
constexpr size_t kMaxMethods = 640;
std::array<Op*, kMaxMethods> g_methods{};
size_t g_method_count = 0;

template <size_t I>
PyObject* method_trampoline(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
  return call(g_methods[I]->methods, g_methods[I]->name, self, args, nargs, kwnames);
}

template <size_t... I>
constexpr std::array<_PyCFunctionFastWithKeywords, sizeof...(I)> method_table(
    std::index_sequence<I...>) {
  return {&method_trampoline<I>...};
}
const auto kMethodTrampolines = method_table(std::make_index_sequence<kMaxMethods>());

// "name(input, dim=None, *, dtype=None)\n--\n\n": the text signature CPython and inspect read.
std::string text_signature(const Op& op, const Signature& sig, bool method) {
  std::string out = op.name + "(";
  bool first = true, star = false;
  auto add = [&](const std::string& s) {
    out += (first ? "" : ", ") + s;
    first = false;
  };
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const Param& p = sig.params[i];
    if (method && i == 0) {
      add("$self");
      continue;
    }
    if (p.type == ArgType::Sizes) {
      add("*" + p.name);
      star = true;
      continue;
    }
    if (p.keyword_only && !star) {
      add("*");
      star = true;
    }
    std::string s = p.name;
    if (p.has_default) s += "=" + std::string(py::repr(p.default_value));
    add(s);
  }
  out += ")\n--\n\n";
  return out;
}

}  // namespace

namespace {

// "Tensor.where.self(...)": the name, the overload and where the schema puts it.
struct SchemaKey {
  std::string name, overload;
  unsigned kind;  // kFunction | kMethod
};

SchemaKey schema_key(std::string_view schema, uint32_t row_tags) {
  SchemaKey k{"", "", row_tags & (kFunction | kMethod)};
  std::string_view head = schema.substr(0, schema.find('('));
  if (head.substr(0, 7) == "Tensor.") {
    k.kind = kMethod;
    head.remove_prefix(7);
  } else if (head.substr(0, 6) == "torch.") {
    k.kind = kFunction;
    head.remove_prefix(6);
  }
  size_t dot = head.find('.');
  k.name = std::string(head.substr(0, dot));
  if (dot != std::string_view::npos) k.overload = std::string(head.substr(dot + 1));
  return k;
}

}  // namespace

void OpTable::add(const std::string& key, Impl impl, const char* doc) {
  size_t dot = key.find('.');
  std::string name = key.substr(0, dot), overload = dot == std::string::npos ? "" : key.substr(dot + 1);
  const OpInfo* row = find_op(ns_, name);
  if (!row) throw std::invalid_argument("op table: " + ns_ + "." + name + " has no row in ops.def");
  int index = -1;
  SchemaKey sk;
  for (size_t i = 0; i < row->schemas.size(); ++i) {
    sk = schema_key(row->schemas[i], row->tags);
    if (sk.overload == overload) {
      index = static_cast<int>(i);
      break;
    }
  }
  if (index < 0 || !sk.kind)
    throw std::invalid_argument("op table: ops.def's row " + ns_ + "." + name +
                                " has no Python overload '" + key + "'");
  std::string schema(row->schemas[index]);
  schema = sk.name + schema.substr(schema.find('('));
  Signature sig = parse_signature(schema);
  if (sig.params.size() > kMaxParams)
    throw std::invalid_argument("op table: too many parameters in " + schema);
  std::shared_ptr<Pending> op;
  for (auto& p : pending_)
    if (p->name == sig.name) op = p;
  if (!op) {
    op = pending_.emplace_back(std::make_shared<Pending>());
    op->name = sig.name;
    op->row = row;
  }
  if (std::find(op->bound.begin(), op->bound.end(), index) != op->bound.end())
    throw std::invalid_argument("op table: " + ns_ + "." + key + " is bound twice");
  op->bound.push_back(index);
  if (doc && op->doc.empty()) op->doc = doc;
  if (sk.kind & kMethod) {
    if (sig.params.empty() || sig.params[0].type != ArgType::Tensor)
      throw std::invalid_argument("op table: a method's first parameter must be a Tensor: " +
                                  schema);
    op->methods.push_back({sig, impl, index});
  }
  if (sk.kind & kFunction) op->functions.push_back({std::move(sig), std::move(impl), index});
}

void OpTable::finish() {
  for (const OpInfo& row : all_ops()) {
    if (row.ns != ns_ || !(row.tags & (kFunction | kMethod))) continue;
    const Pending* bound = nullptr;
    for (auto& p : pending_)
      if (p->row == &row) bound = p.get();
    for (size_t i = 0; i < row.schemas.size(); ++i)
      if (!bound || std::find(bound->bound.begin(), bound->bound.end(), i) == bound->bound.end())
        throw std::logic_error("op table: ops.def's " + ns_ + "." + std::string(row.name) +
                               " overload '" + std::string(row.schemas[i]) + "' has no binding");
  }
  auto by_row_order = [](const Pending::Overload& a, const Pending::Overload& b) {
    return a.index < b.index;
  };
  for (auto& shared : pending_) {
    std::sort(shared->functions.begin(), shared->functions.end(), by_row_order);
    std::sort(shared->methods.begin(), shared->methods.end(), by_row_order);
    // Ops live as long as the process (the callables point at them).
    Op* op = new Op(*shared);
    if (!op->functions.empty()) {
      op->function_doc = text_signature(*op, op->functions[0].sig, false) + op->doc;
      op->function_def = {op->name.c_str(),
                          reinterpret_cast<PyCFunction>(
                              reinterpret_cast<void (*)()>(&function_trampoline)),
                          METH_FASTCALL | METH_KEYWORDS, op->function_doc.c_str()};
      // Handles, like ops, live as long as the process.
      auto* handle = PyObject_New(OpHandle, op_handle_type());
      if (!handle) throw py::error_already_set();
      handle->op = op;
      handle->module_name = py::object(module_.attr("__name__")).release().ptr();
      py::object self = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(handle));
      py::object f = py::reinterpret_steal<py::object>(
          PyCFunction_NewEx(&op->function_def, self.ptr(), module_.attr("__name__").ptr()));
      if (!f) throw py::error_already_set();
      module_.attr(op->name.c_str()) = f;
    }
    if (!op->methods.empty()) {
      if (g_method_count >= kMaxMethods)
        throw std::length_error("op table: more than kMaxMethods methods");
      size_t slot = g_method_count++;
      g_methods[slot] = op;
      op->method_doc = text_signature(*op, op->methods[0].sig, true) + op->doc;
      op->method_def = {op->name.c_str(),
                        reinterpret_cast<PyCFunction>(
                            reinterpret_cast<void (*)()>(kMethodTrampolines[slot])),
                        METH_FASTCALL | METH_KEYWORDS, op->method_doc.c_str()};
      py::object descr = py::reinterpret_steal<py::object>(PyDescr_NewMethod(
          reinterpret_cast<PyTypeObject*>(tensor_type_.ptr()), &op->method_def));
      if (!descr) throw py::error_already_set();
      if (PyObject_SetAttrString(tensor_type_.ptr(), op->name.c_str(), descr.ptr()) != 0)
        throw py::error_already_set();
    }
  }
  pending_.clear();
}

}  // namespace ember::python

namespace ember::python {

void bind_ops(py::module_& m) {
  // The op list (ember/ops/ops.def) as data, for scripts/op-docs and the tests.
  m.def("_op_list", [] {
    py::list rows;
    for (const OpInfo& op : all_ops()) {
      py::list tags, schemas;
      for (std::string_view t : op_tag_names(op.tags)) tags.append(py::str(t.data(), t.size()));
      for (std::string_view s : op.schemas) schemas.append(py::str(s.data(), s.size()));
      py::dict row;
      row["namespace"] = py::str(op.ns.data(), op.ns.size());
      row["name"] = py::str(op.name.data(), op.name.size());
      row["policy"] = py::str(op.policy_name.data(), op.policy_name.size());
      row["tags"] = tags;
      row["schemas"] = schemas;
      rows.append(row);
    }
    return rows;
  });
  // The ops entered while a capture is on (ops/capture.h): `with _OpCapture() as c: ...`, then
  // c.ops(), each {"op", "inputs", "outputs", "depth", "tags"}.
  struct PyCapture {
    OpCapture capture;
    std::optional<OpCaptureGuard> guard;
  };
  py::class_<PyCapture>(m, "_OpCapture")
      .def(py::init<>())
      .def(
          "__enter__",
          [](PyCapture& c) -> PyCapture& {
            c.guard.emplace(c.capture);
            return c;
          },
          py::return_value_policy::reference)
      .def("__exit__", [](PyCapture& c, const py::args&) { c.guard.reset(); })
      .def("ops", [](const PyCapture& c) {
        py::list out;
        for (const CapturedOp& op : c.capture.ops()) {
          const OpInfo& info = op_info(op.id);
          py::list tags;
          for (std::string_view t : op_tag_names(info.tags)) tags.append(py::str(t.data(), t.size()));
          py::dict d;
          d["op"] = py::str(info.name.data(), info.name.size());
          d["namespace"] = py::str(info.ns.data(), info.ns.size());
          d["inputs"] = py::cast(op.inputs);
          d["outputs"] = py::cast(op.outputs);
          d["depth"] = op.depth;
          d["tags"] = tags;
          out.append(d);
        }
        return out;
      });
  py::module_ ops = m.def_submodule("_ops", "ember's functions declared by signature");
  bind_generator(m);
  OpTable t("torch", ops, m.attr("Tensor"));
  def_reduce_ops(t);
  def_math_ops(t);
  def_factory_ops(t);
  def_shape_ops(t);
  def_special_top_level(t);
  def_linalg_top_level(t);
  def_spectral_top_level(t);
  def_nn_top_level(t);
  t.finish();
  // torch.linalg's names, as functions of ember._C._linalg (ember.linalg).
  py::module_ linalg = m.def_submodule("_linalg", "ember.linalg, declared by signature");
  OpTable l("linalg", linalg, m.attr("Tensor"));
  def_linalg_ops(l);
  l.finish();
  // torch.fft's names, as functions of ember._C._fft (ember.fft).
  py::module_ fft = m.def_submodule("_fft", "ember.fft, declared by signature");
  OpTable ft("fft", fft, m.attr("Tensor"));
  def_fft_ops(ft);
  ft.finish();
  // torch.special's names, as functions of ember._C._special (ember.special).
  py::module_ special = m.def_submodule("_special", "ember.special, declared by signature");
  OpTable s("special", special, m.attr("Tensor"));
  def_special_ops(s);
  s.finish();
  // torch.nn.functional's names, as functions of ember._C._F (ember.nn.functional).
  py::module_ functional = m.def_submodule("_F", "ember.nn.functional, declared by signature");
  OpTable f("nn_functional", functional, m.attr("Tensor"));
  def_nn_ops(f);
  f.finish();
  def_nn_functions(functional);
}

}  // namespace ember::python
