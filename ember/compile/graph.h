// A traced call as a graph that runs again without the program that made it: the ops one call of
// a function entered (ops/capture.h), over numbered values, with chains of elementwise ops fused
// into one loop each (backend/fused.h). compile/compile.h keeps one per input signature.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ember/backend/fused.h"
#include "ember/core/tensor.h"
#include "ember/ops/capture.h"
#include "ember/ops/kernel_capture.h"

namespace ember::compiler {

// Note [Graphs from traces]
// Tracing runs the function once, eagerly, with an OpCapture and a KernelCapture installed: its
// values are real, and the capture names each op the user's code entered (depth 0) with the
// tensors it took and gave. Tensors are numbered by identity: an argument of the function is an
// input, a result of an earlier op that op's value, an alias of a traced value made without an
// op (detach(), .data) a step of its own, anything else a constant the graph holds (a
// parameter, a buffer). Running the graph calls each op again (CapturedOp::replay) on the values,
// so autograd records as it did eagerly and random ops draw anew. Runs of elementwise ops whose
// kernels were noted (Note [Kernel notes]) on same-shaped tensors that need no gradient become
// one fused step; their intermediate results live in registers unless a later step or the
// function's results read them.
//
// What a trace cannot show makes the call a graph break, and the function then runs eagerly for
// that signature: a backward pass (its gradients land in .grad, outside the values), values read
// on the host (item(), or an op whose result's shape depends on them: nonzero, unique, ...), a
// constant that shares memory with a traced value (made from it outside the op list), an op that
// cannot be replayed.

struct Graph {
  /// An op replayed, or a fused group of them.
  struct Step {
    const char* name = "";    // the op's (op_name), "fused", or "detach" (an alias made
                              // without an op: Tensor::detach, .data)
    std::vector<int> inputs;  // value numbers; -1 for an undefined tensor
    std::vector<int> outputs;
    OpReplay replay;  // not for a fused group
    // A fused group: its program, the shape and options of its results, which inputs are one
    // element broadcast, and the ops it stands for (run instead when the inputs' shapes differ).
    std::shared_ptr<const FusedProgram> fused;
    Shape shape;
    TensorOptions options;
    std::vector<bool> broadcast;
    std::vector<Step> members;
  };
  int num_values = 0;
  std::vector<int> inputs;  // the function's tensor arguments, in order
  std::vector<std::pair<int, Tensor>> constants;
  std::vector<Step> steps;
  std::vector<int> outputs;  // the function's tensor results, in order

  /// The function's tensor results for `inputs` (tensors of the traced call's shapes and dtypes).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;
  /// How many of the traced ops fused steps stand for.
  int fused_ops() const;
  /// One line per step ("fused[mul, add, exp] 2 inputs -> 1", "matmul"), for logs and tests.
  std::string describe() const;
};

/// What one traced call saw.
struct Trace {
  std::vector<CapturedOp> ops;
  std::vector<KernelNote> kernels;
  std::vector<std::string> breaks;  // OpCapture::mark_break's
};

/// Installs the captures a trace needs on this thread for its scope.
class Tracer {
 public:
  Tracer();
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;
  /// What has been traced so far (the captures stay installed until the Tracer goes).
  Trace trace() const;

 private:
  OpCapture ops_;
  KernelCapture kernels_;
  OpCaptureGuard op_guard_;
  KernelCaptureGuard kernel_guard_;
};

/// A graph, or why the trace cannot be one (Note [Graphs from traces]).
struct GraphOrBreak {
  std::unique_ptr<Graph> graph;
  std::string break_reason;
};

/// The graph of a traced call whose tensor arguments were `inputs` and results `outputs`.
GraphOrBreak build_graph(const Trace& trace, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& outputs, bool fuse = true);

}  // namespace ember::compiler
