// ember.autograd: backward and grad over several tensors, and gradcheck. Grad mode (no_grad,
// enable_grad) is ember.is_grad_enabled / _set_grad_enabled, wrapped as context managers in
// ember/autograd.py.
#include <pybind11/functional.h>

#include <set>

#include "bind.h"
#include "ember/ops/autograd_support.h"

namespace ember::python {
namespace {

std::vector<Tensor> tensors_or_one(py::handle h) {
  std::vector<Tensor> out;
  if (h.is_none()) return out;
  if (is_tensor(h)) return {as_tensor(h)};
  for (py::handle item : h) out.push_back(item.is_none() ? Tensor() : as_tensor(item));
  return out;
}

// Node names live as long as the nodes: interned once each.
const char* intern(const std::string& name) {
  static std::mutex mutex;
  static auto* names = new std::set<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  return names->insert(name).first->c_str();
}

}  // namespace

void bind_autograd(py::module_& m) {
  py::module_ a = m.def_submodule("_autograd", "ember.autograd's C++ part");
  a.def(
      "backward",
      [](py::handle tensors, py::handle grad_tensors, py::handle retain_graph, bool create_graph) {
        std::vector<Tensor> outs = tensors_or_one(tensors), grads = tensors_or_one(grad_tensors);
        bool retain = retain_graph.is_none() ? create_graph : retain_graph.cast<bool>();
        ReleaseGil no_gil;
        autograd::backward(outs, grads, retain, create_graph);
      },
      "tensors"_a, "grad_tensors"_a = py::none(), "retain_graph"_a = py::none(),
      "create_graph"_a = false);
  // PyTorch's grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
  // only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
  // only_inputs is 1.13's deprecated no-op, materialize_grads (2.1) gives zeros for unused inputs.
  a.def(
      "grad",
      [](py::handle outputs, py::handle inputs, py::handle grad_outputs, py::handle retain_graph,
         bool create_graph, bool only_inputs, py::handle allow_unused_arg, bool is_grads_batched,
         bool materialize_grads) {
        if (!only_inputs)
          PyErr_WarnEx(PyExc_UserWarning,
                       "only_inputs argument is deprecated and is ignored now (defaults to True). "
                       "To accumulate gradient for other parts of the graph, please use "
                       "torch.autograd.backward.",
                       1);
        EMBER_CHECK_VALUE(!is_grads_batched,
                          "[autograd.grad] is_grads_batched=True (vmap over the grad outputs) is "
                          "not supported by ember: loop over the batch of grad_outputs instead");
        bool allow_unused =
            allow_unused_arg.is_none() ? materialize_grads : allow_unused_arg.cast<bool>();
        EMBER_CHECK_VALUE(!(materialize_grads && !allow_unused),
                          "Expected allow_unused to be True or not passed when "
                          "materialize_grads=True, but got: allow_unused=False.");
        std::vector<Tensor> outs = tensors_or_one(outputs), ins = tensors_or_one(inputs),
                            grads = tensors_or_one(grad_outputs);
        bool retain = retain_graph.is_none() ? create_graph : retain_graph.cast<bool>();
        std::vector<Tensor> r;
        {
          ReleaseGil no_gil;
          r = autograd::grad(outs, ins, grads, retain, create_graph, allow_unused);
          if (materialize_grads)
            for (size_t i = 0; i < r.size(); ++i)
              if (!r[i].defined()) r[i] = zeros_like(ins[i]);
        }
        py::tuple out(r.size());
        for (size_t i = 0; i < r.size(); ++i) out[i] = r[i].defined() ? py::cast(r[i]) : py::none();
        return out;
      },
      "outputs"_a, "inputs"_a, "grad_outputs"_a = py::none(), "retain_graph"_a = py::none(),
      "create_graph"_a = false, "only_inputs"_a = true, "allow_unused"_a = py::none(),
      "is_grads_batched"_a = false, "materialize_grads"_a = false);
  // A Python autograd.Function's node: `backward(*grads)` returns one gradient per input (None
  // for none), called with the GIL on the thread backward runs on.
  a.def(
      "_record_function",
      [](const std::string& name, py::handle outputs, py::handle inputs, py::function backward) {
        std::vector<Tensor> outs = tensors_or_one(outputs), ins = tensors_or_one(inputs);
        auto fn = std::shared_ptr<py::function>(new py::function(std::move(backward)),
                                                [](py::function* f) {
                                                  py::gil_scoped_acquire gil;
                                                  delete f;
                                                });
        size_t n_in = ins.size();
        record_list(intern(name), outs, ins,
                    [fn, n_in](std::vector<Tensor>& grads, const Node&) -> std::vector<Tensor> {
                      py::gil_scoped_acquire gil;
                      py::tuple args(grads.size());
                      for (size_t i = 0; i < grads.size(); ++i)
                        args[i] = grads[i].defined() ? py::cast(grads[i]) : py::none();
                      py::object r = (*fn)(*args);
                      std::vector<Tensor> out;
                      if (is_tensor(r) || r.is_none()) {
                        out.push_back(r.is_none() ? Tensor() : as_tensor(r));
                      } else {
                        for (py::handle g : r) out.push_back(g.is_none() ? Tensor() : as_tensor(g));
                      }
                      EMBER_CHECK(out.size() >= n_in, "[backward] function ", "backward returned ",
                                  out.size(), " gradients, but the forward had ", n_in,
                                  " tensor inputs");
                      out.resize(n_in);
                      return out;
                    });
      },
      "name"_a, "outputs"_a, "inputs"_a, "backward"_a);
  a.def(
      "gradcheck",
      [](py::function fn, py::handle inputs, double eps, double atol, double rtol) {
        std::vector<Tensor> ins = tensors_or_one(inputs);
        autograd::GradcheckOptions o;
        o.eps = eps;
        o.atol = atol;
        o.rtol = rtol;
        std::string err;
        {
          ReleaseGil no_gil;
          err = autograd::gradcheck(
              [&](const std::vector<Tensor>& xs) {
                py::gil_scoped_acquire gil;
                py::tuple args(xs.size());
                for (size_t i = 0; i < xs.size(); ++i) args[i] = py::cast(xs[i]);
                return fn(*args).cast<Tensor>();
              },
              ins, o);
        }
        if (!err.empty()) throw std::runtime_error("gradcheck failed: " + err);
        return true;
      },
      "func"_a, "inputs"_a, "eps"_a = 1e-6, "atol"_a = 1e-5, "rtol"_a = 1e-3);
}

}  // namespace ember::python
