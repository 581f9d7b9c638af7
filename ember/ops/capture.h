// Capture at the op entry: while an OpCapture is installed on a thread, each op entered there is
// recorded with its tensor arguments and results, in call order. It is what capture and fusion
// start from: the op list (ops/ops.def) says what each recorded op is (pointwise, in place, view,
// waits for the host) without running it.
#pragma once

#include <cstddef>
#include <mutex>
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

/// One op call as its entry line saw it.
struct CapturedOp {
  OpId id;
  std::vector<Tensor> inputs;   // its tensor arguments in order (lists flattened, undefined kept)
  std::vector<Tensor> outputs;  // its tensor results
  int depth = 0;                // 0: called from outside any op; n: inside n captured ops
};

/// The ops entered on the threads it is installed on (OpCaptureGuard), in call order.
class OpCapture {
 public:
  /// What has been recorded so far.
  std::vector<CapturedOp> ops() const;
  /// Drops every record.
  void clear();

  // The entry line's side (ops/op_entry.h).
  size_t begin(OpId id, std::vector<Tensor> inputs, int depth);
  void end(size_t index, std::vector<Tensor> outputs);

 private:
  mutable std::mutex mutex_;
  std::vector<CapturedOp> ops_;
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
