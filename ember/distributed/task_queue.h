// The queue between a process group's callers and the one thread that runs its work (Gloo's
// collectives, the thread that owns MPI): tasks run in the order they were pushed, and close()
// lets that thread finish what is queued, then stop.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace ember::distributed {

template <typename Task>
class TaskQueue {
 public:
  void push(Task task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

  /// The next task, once there is one; nothing once closed and drained.
  std::optional<Task> pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [this] { return closed_ || !tasks_.empty(); });
    if (tasks_.empty()) return std::nullopt;
    std::optional<Task> task(std::move(tasks_.front()));
    tasks_.pop_front();
    return task;
  }

  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Task> tasks_;
  bool closed_ = false;
};

}  // namespace ember::distributed
