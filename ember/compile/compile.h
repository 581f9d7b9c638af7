// ember::compile: a function over tensors traced on its first call with each input signature and
// run as a graph after that (compile/graph.h), PyTorch's torch.compile for C++ programs. Python's
// ember.compile / torch.compile (python/ember/_compile.py) is this, over flattened arguments.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/compile/graph.h"

namespace ember {

struct CompileOptions {
  bool fullgraph = false;  // a graph break is an error rather than eager running
  bool fuse = true;        // chains of elementwise ops run as one loop
};

/// A compiled function (compile()). Copies share their graphs.
class CompiledFunction {
 public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

  CompiledFunction(Fn fn, CompileOptions options = {});

  /// fn(inputs): traced the first time these inputs' signature (shapes, strides, dtypes, devices,
  /// requires-grad, grad mode, autocast) is seen, from its graph afterwards, or eagerly where
  /// tracing found a graph break (Note [Graphs from traces]).
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);

  struct Stats {
    int traces = 0;       // calls that traced (the first of each signature)
    int graph_runs = 0;   // calls run from a graph
    int eager_runs = 0;   // calls after a break, run eagerly
    int fused_ops = 0;    // ops that fused steps stand for, over the graphs built
    std::vector<std::string> breaks;  // each break's reason, in order
  };
  Stats stats() const;
  /// The graph of `inputs`' signature, or nullptr (not traced yet, or a break).
  const compiler::Graph* graph_for(const std::vector<Tensor>& inputs) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

/// `fn` compiled (torch.compile).
CompiledFunction compile(CompiledFunction::Fn fn, CompileOptions options = {});

namespace compiler {
/// The key a compiled function files `inputs` under in this thread's state.
std::string signature(const std::vector<Tensor>& inputs);
/// Whether EMBER_LOG_GRAPH_BREAKS=1 (or TORCH_LOGS naming graph_breaks) asks for `what`
/// ("graph_breaks" or "recompiles") on stderr.
bool log_enabled(const char* what);
}  // namespace compiler

}  // namespace ember
