// ember._C's side of ember.compile (python/ember/_compile.py): a compiled function over a flat
// list of tensors (ember/compile/compile.h), and the way Python marks a graph break the op list
// cannot see (a value read on the host, a custom autograd.Function).
#include <optional>

#include "bind.h"
#include "ember/compile/compile.h"
#include "ember/core/thread_local_state.h"

namespace ember::python {

void bind_compile(py::module_& m) {
  py::class_<CompiledFunction>(m, "_CompiledFunction")
      .def(py::init([](py::function fn, bool fullgraph, bool fuse) {
             auto holder = std::make_shared<py::function>(std::move(fn));
             CompiledFunction::Fn f = [holder](const std::vector<Tensor>& inputs) {
               py::gil_scoped_acquire gil;
               return (*holder)(inputs).cast<std::vector<Tensor>>();
             };
             return CompiledFunction(std::move(f), {fullgraph, fuse});
           }),
           py::arg("fn"), py::arg("fullgraph") = false, py::arg("fuse") = true)
      .def(
          "__call__",
          [](CompiledFunction& c, const std::vector<Tensor>& inputs) {
            py::gil_scoped_release nogil;  // Note [The GIL]: tracing takes it back for fn
            return c(inputs);
          },
          py::arg("inputs"))
      .def("stats",
           [](const CompiledFunction& c) {
             CompiledFunction::Stats s = c.stats();
             py::dict d;
             d["traces"] = s.traces;
             d["graph_runs"] = s.graph_runs;
             d["eager_runs"] = s.eager_runs;
             d["fused_ops"] = s.fused_ops;
             d["breaks"] = s.breaks;
             return d;
           })
      .def(
          "graph",
          [](const CompiledFunction& c, const std::vector<Tensor>& inputs)
              -> std::optional<std::string> {
            const compiler::Graph* g = c.graph_for(inputs);
            if (!g) return std::nullopt;
            return g->describe();
          },
          py::arg("inputs"), "The steps of the graph for these inputs, one per line, or None.")
      .def(
          "fused_ops",
          [](const CompiledFunction& c, const std::vector<Tensor>& inputs) {
            const compiler::Graph* g = c.graph_for(inputs);
            return g ? g->fused_ops() : 0;
          },
          py::arg("inputs"));
  m.def(
      "_mark_capture_break",
      [](const std::string& reason) {
        if (OpCapture* c = detail::t_local_state.capture) c->mark_break(reason);
      },
      "Notes a graph break in the capture installed on this thread, if any.");
  m.def("_capture_active", [] { return detail::t_local_state.capture != nullptr; });
  m.def("_compile_log_enabled", [](const std::string& what) {
    return compiler::log_enabled(what.c_str());
  });
}

}  // namespace ember::python
