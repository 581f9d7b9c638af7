// The handle of a collective that may still be running (PyTorch's Work): wait, is_completed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>

namespace ember::distributed {

class Work {
 public:
  /// `op` and `sequence` name the operation in a timeout error ("all_reduce #17"). A
  /// stream-ordered operation (NCCL) is one the caller's CUDA stream already waits for.
  Work(std::string op, uint64_t sequence, bool stream_ordered = false)
      : op_(std::move(op)), sequence_(sequence), stream_ordered_(stream_ordered) {}
  /// Waits until the operation is done and rethrows its error. With a timeout, an ember::Error
  /// naming the operation when it is not done by then (the operation itself goes on). A
  /// stream-ordered operation does not block the host (as PyTorch's NCCL Work): it returns at
  /// once, rethrowing the error of an operation that already failed.
  void wait(std::chrono::milliseconds timeout = std::chrono::milliseconds::max());
  /// Like wait, but blocks the host until the operation is done, stream-ordered or not.
  void synchronize(std::chrono::milliseconds timeout = std::chrono::milliseconds::max());
  bool is_completed();
  /// Done without an error.
  bool is_success();
  std::exception_ptr exception();
  const std::string& op() const { return op_; }
  uint64_t sequence() const { return sequence_; }

  /// Marks the operation done (with its error, if any). Called by the backend.
  void finish(std::exception_ptr error = nullptr);

 private:
  std::string op_;
  uint64_t sequence_;
  bool stream_ordered_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace ember::distributed
