// The random number generator: a seed and a counter. Each random tensor takes the next offset;
// its elements come from Philox(seed, offset, index) (backend/functors/random.h).
#pragma once

#include <cstdint>
#include <mutex>
#include <utility>

namespace ember {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ull) : seed_(seed) {}
  void manual_seed(uint64_t seed) {
    std::lock_guard<std::mutex> lock(mutex_);
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t initial_seed() const { return seed_; }
  /// Everything its future draws depend on, (seed, offset): saved with a checkpoint and put back
  /// with set_state, the generator draws what it would have drawn (torch's get_state).
  std::pair<uint64_t, uint64_t> get_state() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {seed_, offset_};
  }
  void set_state(std::pair<uint64_t, uint64_t> state) {
    std::lock_guard<std::mutex> lock(mutex_);
    seed_ = state.first;
    offset_ = state.second;
  }
  /// (seed, offset) for the next random tensor; `n` offsets are reserved.
  std::pair<uint64_t, uint64_t> next(uint64_t n = 1) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t off = offset_;
    offset_ += n;
    return {seed_, off};
  }
  /// A 64-bit random value for host-side uses (shuffling).
  uint64_t random64();

  // Held across fork() (Note [Fork safety], core/fork.h) so that no child inherits a half-made
  // update.
  void lock_for_fork() { mutex_.lock(); }
  void unlock_after_fork() { mutex_.unlock(); }

 private:
  std::mutex mutex_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

/// The generator used when none is given (torch.default_generator). A forked child inherits its
/// state, so it draws the same numbers as its parent and siblings unless reseeded: processes
/// started by ember::multiprocessing are reseeded (multiprocessing/process.h), a raw fork() is not.
Generator& default_generator();
/// torch.manual_seed.
void manual_seed(uint64_t seed);

}  // namespace ember
