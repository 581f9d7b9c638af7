// Reductions, as functions and Tensor methods from one declaration each (op_table.h).
#include "ember/ops/norms.h"
#include "op_table.h"

namespace ember::python {
namespace {

Tensor sum_op(const Args& a) {
  const Tensor& x = a.tensor(0);
  return a.has(1) ? x.sum(a.dims(1), a.flag(2), a.dtype(3)) : x.sum(a.dtype(3));
}

Tensor mean_op(const Args& a) {
  Tensor x = a.dtype(3) ? a.tensor(0).to(*a.dtype(3)) : a.tensor(0);
  return a.has(1) ? x.mean(a.dims(1), a.flag(2)) : x.mean();
}

// var and std's correction= (PyTorch's newer spelling of unbiased): 1 when not given.
Correction correction_of(const Args& a, size_t i) {
  return Correction{a.has(i) ? a.real(i) : 1.0};
}

// p of torch.norm: a number, inf, or 'fro' (the 2-norm over all dims given).
Scalar norm_p(py::handle p) {
  if (p.is_none()) return 2.0;
  if (py::isinstance<py::str>(p)) {
    std::string s = py::str(p);
    if (s == "fro") return 2.0;
    throw py::value_error("norm(): p='" + s + "' is not supported by ember yet (only 'fro' and "
                          "numbers)");
  }
  return to_scalar(p, "norm");
}

}  // namespace

void def_reduce_ops(OpTable& t) {
  t.def("sum",
        sum_op, "The sum of the elements, over dim (all when None).");
  t.def("mean",
        mean_op, "The mean of the elements, over dim (all when None).");
  t.def("prod",
        [](const Args& a) {
          return a.dtype(1) ? a.tensor(0).to(*a.dtype(1)).prod() : a.tensor(0).prod();
        });
  t.def("prod.dim_int",
        [](const Args& a) {
          Tensor x = a.dtype(3) ? a.tensor(0).to(*a.dtype(3)) : a.tensor(0);
          return x.prod(a.int64(1), a.flag(2));
        });
  for (const char* op : {"max", "min"}) {
    bool is_max = op[1] == 'a';
    std::string name = op;
    t.def(name,
          [is_max](const Args& a) { return is_max ? a.tensor(0).max() : a.tensor(0).min(); });
    t.def(name + ".dim", [is_max](const Args& a) {
      auto [v, i] = is_max ? a.tensor(0).max(a.int64(1), a.flag(2))
                           : a.tensor(0).min(a.int64(1), a.flag(2));
      return NamedResult{is_max ? "return_types.max" : "return_types.min", {v, i}};
    });
    t.def(name + ".other", [is_max](const Args& a) {
      return is_max ? maximum(a.tensor(0), a.tensor(1)) : minimum(a.tensor(0), a.tensor(1));
    });
  }
  t.def("amax",
        [](const Args& a) { return amax(a.tensor(0), a.dims(1), a.flag(2)); });
  t.def("amin",
        [](const Args& a) { return amin(a.tensor(0), a.dims(1), a.flag(2)); });
  t.def("argmax",
        [](const Args& a) { return argmax(a.tensor(0), a.opt_int(1), a.flag(2)); });
  t.def("argmin",
        [](const Args& a) { return argmin(a.tensor(0), a.opt_int(1), a.flag(2)); });
  for (const char* op : {"var", "std"}) {
    bool is_var = op[0] == 'v';
    auto run = [is_var](const Tensor& x, const Dims& d, bool unbiased, bool keepdim) {
      return is_var ? var(x, d, unbiased, keepdim) : std(x, d, unbiased, keepdim);
    };
    auto run_c = [is_var](const Tensor& x, const Dims& d, Correction c, bool keepdim) {
      return is_var ? var(x, d, c, keepdim) : std(x, d, c, keepdim);
    };
    std::string name = op;
    t.def(name + ".dim",
          [run](const Args& a) { return run(a.tensor(0), a.dims(1), a.flag(2), a.flag(3)); });
    t.def(name,
          [run](const Args& a) { return run(a.tensor(0), Dims(), a.flag(1), false); });
    t.def(name + ".correction",
          [run_c](const Args& a) {
            return run_c(a.tensor(0), a.dims(1), correction_of(a, 2), a.flag(3));
          });
  }
  for (const char* op : {"all", "any"}) {
    bool is_all = op[1] == 'l';
    std::string name = op;
    t.def(name,
          [is_all](const Args& a) { return is_all ? all(a.tensor(0)) : any(a.tensor(0)); });
    t.def(name + ".dim",
          [is_all](const Args& a) {
            return is_all ? all(a.tensor(0), a.int64(1), a.flag(2))
                          : any(a.tensor(0), a.int64(1), a.flag(2));
          });
  }
  t.def("norm",
        [](const Args& a) -> py::object {
          Dims d = a.dims(2);
          bool keepdim = a.flag(3);
          std::optional<DType> dt = a.dtype(5);
          const Tensor& x = a.tensor(0);
          py::handle ph = a.object(1);
          if (py::isinstance<py::str>(ph) && std::string(py::str(ph)) == "nuc") {
            // The nuclear norm of matrices: over the two dims given, or of a 2-D input.
            EMBER_CHECK_VALUE(d.empty() ? x.dim() == 2 : d.size() == 2,
                              "norm(): p='nuc' takes a 2-D input or two dims");
            std::pair<int64_t, int64_t> dims = d.empty() ? std::pair<int64_t, int64_t>{0, 1}
                                                         : std::pair{d[0], d[1]};
            return py::cast(nogil([&] {
              return linalg::matrix_norm(x, std::string("nuc"), dims, keepdim, dt);
            }));
          }
          Scalar p = norm_p(ph);
          return py::cast(nogil([&] { return norm(dt ? x.to(*dt) : x, p, d, keepdim); }));
        });
  t.def("logsumexp",
        [](const Args& a) { return logsumexp(a.tensor(0), a.dims(1), a.flag(2)); });
}

}  // namespace ember::python
