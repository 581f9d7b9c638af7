#include "ember/distributed/work.h"

#include <optional>

#include "ember/core/error.h"
#include "ember/core/profiler_events.h"

namespace ember::distributed {

void Work::wait(std::chrono::milliseconds timeout) {
  if (!stream_ordered_) return synchronize(timeout);
  std::lock_guard<std::mutex> lock(mutex_);
  if (done_ && error_) std::rethrow_exception(error_);
}

void Work::synchronize(std::chrono::milliseconds timeout) {
  // The wait is an event of its own ("wait:all_reduce"): inside the collective's event when the
  // call waits, on its own where an async_op's caller waits later.
  std::optional<profiler::RecordScope> record;
  if (profiler::active_session()) record.emplace(profiler::EventKind::Collective, "wait:" + op_);
  std::unique_lock<std::mutex> lock(mutex_);
  if (timeout == std::chrono::milliseconds::max()) {
    done_cv_.wait(lock, [this] { return done_; });
  } else {
    bool ok = done_cv_.wait_for(lock, timeout, [this] { return done_; });
    EMBER_CHECK(ok, "[", op_, "] collective #", sequence_, " timed out after ", timeout.count(),
                " ms (a rank stopped calling collectives?)");
  }
  if (error_) std::rethrow_exception(error_);
}

bool Work::is_completed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

bool Work::is_success() {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_ && !error_;
}

std::exception_ptr Work::exception() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

void Work::finish(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    error_ = error;
  }
  done_cv_.notify_all();
}

}  // namespace ember::distributed
