// Capture at the op entry: while an OpCapture is installed on a thread, each op entered there is
// recorded with its tensor arguments and results, in call order. It is what capture and fusion
// start from: the op list (ops/ops.def) says what each recorded op is (pointwise, in place, view,
// waits for the host) without running it.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/ops/op_registry.h"

namespace ember {

// Note [Capture at the op entry]
// The entry line (ops/op_entry.h) looks at LocalState::capture with the other hooks. When one is
// installed, it records the op before running it (so that the trace is in call order, an op
// before the ops it is made of) and fills in its results after. `depth` tells the ops a user
// called (0) from those a composite op called (1, 2, ...): a fuser reads depth 0, a profiler-like
// reader all of them. An in-place op's result is its first argument, so the trace shows which
// tensor it wrote. The capture holds the tensors it saw, so a trace keeps them alive.
//
// Each record also carries `replay`: the op called again with other tensors in place of the ones
// it was given and its other arguments (numbers, sizes, strings) as they were, so that a trace can
// be run again without the program that made it (ember/compile/). The entry line builds it from
// the op's argument types; arguments that only point at the caller's memory (a string_view, a
// const char*) are kept as owned copies.

/// Calls a recorded op again with `inputs` in place of its tensor arguments (in CapturedOp::inputs'
/// order) and returns its tensor results.
using OpReplay = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

/// One op call as its entry line saw it.
struct CapturedOp {
  OpId id;
  std::vector<Tensor> inputs;   // its tensor arguments in order (lists flattened, undefined kept)
  std::vector<Tensor> outputs;  // its tensor results
  int depth = 0;                // 0: called from outside any op; n: inside n captured ops
  OpReplay replay;              // empty where an argument cannot be kept (not copyable)
};

/// The ops entered on the threads it is installed on (OpCaptureGuard), in call order.
class OpCapture {
 public:
  /// What has been recorded so far.
  std::vector<CapturedOp> ops() const;
  /// Drops every record.
  void clear();
  /// Notes something a trace cannot replay that is not an op (autograd's backward, a read of
  /// values on the host), so that a compiler runs that program eagerly instead.
  void mark_break(std::string reason);
  /// What mark_break noted, in order.
  std::vector<std::string> breaks() const;

  // The entry line's side (ops/op_entry.h).
  size_t begin(OpId id, std::vector<Tensor> inputs, int depth, OpReplay replay = {});
  void end(size_t index, std::vector<Tensor> outputs);

 private:
  mutable std::mutex mutex_;
  std::vector<CapturedOp> ops_;
  std::vector<std::string> breaks_;
};

/// Installs `capture` on this thread for its scope, then puts back what was there.
class OpCaptureGuard {
 public:
  explicit OpCaptureGuard(OpCapture& capture);
  ~OpCaptureGuard();
  OpCaptureGuard(const OpCaptureGuard&) = delete;
  OpCaptureGuard& operator=(const OpCaptureGuard&) = delete;

 private:
  OpCapture* saved_;
};

}  // namespace ember
