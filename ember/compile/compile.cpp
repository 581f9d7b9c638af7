// ember::compile (compile/compile.h).
#include "ember/compile/compile.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string_view>

#include "ember/core/error.h"
#include "ember/core/grad_mode.h"
#include "ember/core/thread_local_state.h"

namespace ember {

struct CompiledFunction::State {
  Fn fn;
  CompileOptions options;
  mutable std::mutex mutex;
  // Per signature: its graph, or the reason tracing broke.
  struct Entry {
    std::shared_ptr<const compiler::Graph> graph;
    std::string break_reason;
  };
  std::map<std::string, Entry> entries;
  Stats stats;
};

namespace compiler {

std::string signature(const std::vector<Tensor>& inputs) {
  std::ostringstream os;
  const detail::LocalState& s = detail::t_local_state;
  os << "grad=" << s.grad_enabled << " autocast=" << s.autocast.enabled[0]
     << s.autocast.enabled[1] << s.autocast.dtype[0] << s.autocast.dtype[1];
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined()) {
      os << " undefined";
      continue;
    }
    // The same tensor given twice is one value of the graph: f(a, a) and f(a, b) differ.
    auto same = std::find_if(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(i),
                             [&](const Tensor& o) { return o.is_same(t); });
    if (same != inputs.begin() + static_cast<std::ptrdiff_t>(i)) {
      os << " =" << (same - inputs.begin());
      continue;
    }
    os << " " << t.dtype() << "@" << t.device() << t.sizes() << t.strides()
       << (t.requires_grad() ? "g" : "");
  }
  return os.str();
}

bool log_enabled(const char* what) {
  if (const char* e = std::getenv("EMBER_LOG_GRAPH_BREAKS"); e && std::string_view(e) == "1")
    return true;
  const char* logs = std::getenv("TORCH_LOGS");
  return logs && std::string_view(logs).find(what) != std::string_view::npos;
}

}  // namespace compiler

CompiledFunction::CompiledFunction(Fn fn, CompileOptions options)
    : state_(std::make_shared<State>()) {
  EMBER_CHECK(fn != nullptr, "[compile] expected a function, got an empty one");
  state_->fn = std::move(fn);
  state_->options = options;
}

std::vector<Tensor> CompiledFunction::operator()(const std::vector<Tensor>& inputs) {
  State& st = *state_;
  // Inside another trace: that trace records these ops, as part of its own function.
  if (detail::t_local_state.capture != nullptr) return st.fn(inputs);
  std::string key = compiler::signature(inputs);
  std::shared_ptr<const compiler::Graph> graph;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    auto it = st.entries.find(key);
    if (it != st.entries.end()) {
      known = true;
      graph = it->second.graph;
      if (graph)
        ++st.stats.graph_runs;
      else
        ++st.stats.eager_runs;
    }
  }
  if (known) return graph ? graph->run(inputs) : st.fn(inputs);

  bool recompile;
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    recompile = !st.entries.empty();
    ++st.stats.traces;
  }
  if (recompile && compiler::log_enabled("recompiles"))
    std::cerr << "[ember.compile] recompiling for new inputs: " << key << "\n";
  std::vector<Tensor> outputs;
  compiler::Trace trace;
  {
    compiler::Tracer tracer;
    outputs = st.fn(inputs);
    trace = tracer.trace();
  }
  compiler::GraphOrBreak built = compiler::build_graph(trace, inputs, outputs, st.options.fuse);
  if (!built.graph) {
    if (compiler::log_enabled("graph_breaks"))
      std::cerr << "[ember.compile] graph break: " << built.break_reason
                << "; this function runs eagerly for these inputs\n";
    EMBER_CHECK(!st.options.fullgraph, "[compile] fullgraph=True, but the function has a graph "
                                       "break: ",
                built.break_reason);
  }
  std::lock_guard<std::mutex> lock(st.mutex);
  State::Entry& e = st.entries[key];
  e.graph = std::move(built.graph);
  e.break_reason = built.break_reason;
  if (e.graph)
    st.stats.fused_ops += e.graph->fused_ops();
  else
    st.stats.breaks.push_back(built.break_reason);
  return outputs;
}

CompiledFunction::Stats CompiledFunction::stats() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->stats;
}

const compiler::Graph* CompiledFunction::graph_for(const std::vector<Tensor>& inputs) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto it = state_->entries.find(compiler::signature(inputs));
  return it == state_->entries.end() ? nullptr : it->second.graph.get();
}

CompiledFunction compile(CompiledFunction::Fn fn, CompileOptions options) {
  return CompiledFunction(std::move(fn), options);
}

}  // namespace ember
