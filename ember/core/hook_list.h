// Lists of autograd hooks and the handles that take a hook out again (PyTorch's RemovableHandle):
// an object that registers hooks on tensors it does not own (DDP) removes them when it goes away.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace ember {

/// Removes one registered hook. Removing twice, or after the tensor is gone, does nothing.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  explicit RemovableHandle(std::function<void()> remove) : remove_(std::move(remove)) {}
  void remove() {
    std::function<void()> f = std::move(remove_);
    remove_ = nullptr;
    if (f) f();
  }

 private:
  std::function<void()> remove_;
};

/// Hooks in registration order. Not safe against a backward running on another thread.
template <typename Fn>
class HookList {
 public:
  RemovableHandle add(Fn fn) {
    if (!entries_) entries_ = std::make_shared<std::vector<Entry>>();  // most nodes have none
    uint64_t id = next_id_++;
    entries_->push_back({id, std::move(fn)});
    std::weak_ptr<std::vector<Entry>> weak = entries_;
    return RemovableHandle([weak, id] {
      // C++17: nvcc compiles this header (through core/tensor.h).
      if (auto entries = weak.lock())
        entries->erase(std::remove_if(entries->begin(), entries->end(),
                                      [id](const Entry& e) { return e.id == id; }),
                       entries->end());
    });
  }
  bool empty() const { return !entries_ || entries_->empty(); }
  size_t size() const { return entries_ ? entries_->size() : 0; }
  /// Calls visit(hook) for each hook; a hook may remove hooks (the walk is over a copy).
  template <typename Visit>
  void for_each(Visit&& visit) const {
    if (empty()) return;
    std::vector<Entry> snapshot = *entries_;
    for (Entry& e : snapshot) visit(e.fn);
  }

 private:
  struct Entry {
    uint64_t id;
    Fn fn;
  };
  std::shared_ptr<std::vector<Entry>> entries_;
  uint64_t next_id_ = 0;
};

}  // namespace ember
