// fork() and ember's process-wide state. Note [Fork safety]: only the forking thread exists in a
// child, so every lock another thread might hold at fork time is taken in a pthread_atfork
// "prepare" handler and released on both sides (the caching allocators, the default generator,
// the thread pool's lock); the thread pool, whose workers do not exist in the child, is rebuilt
// there on first use. CUDA cannot be used in a child forked after CUDA started (its driver state
// does not survive fork): the CUDA backend compares the fork generation it started in with this
// one and throws instead of hanging. Every handler is registered at static initialisation, before
// any thread exists: glibc runs prepare handlers with its atfork lock released and skips, for the
// fork under way, a handler registered meanwhile, so a handler registered lazily by one thread
// while another forks leaves its lock held in the child. Likewise, process-wide objects that any
// thread may make first are made through ForkSafeLazy, never a function-local static.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace ember {

/// How many fork()s separate this process from the one ember started in (0 there).
uint64_t fork_generation();

/// A process-wide object made by make() (returning T*) on first use and never destroyed, for
/// objects that any thread may be first to use. Not a function-local static: a thread making one
/// when another forks leaves its guard taken for ever in the child, which then hangs on first use
/// (Note [Fork safety]); std::call_once is glibc's pthread_once, which a forked child restarts.
/// Declare it `static`: it is constant-initialised, so it needs no guard itself.
template <typename T>
class ForkSafeLazy {
 public:
  constexpr ForkSafeLazy() = default;
  ForkSafeLazy(const ForkSafeLazy&) = delete;
  ForkSafeLazy& operator=(const ForkSafeLazy&) = delete;

  template <typename Make>
  T& get(Make&& make) {
    if (T* p = ptr_.load(std::memory_order_acquire)) return *p;
    std::call_once(once_, [&] { ptr_.store(make(), std::memory_order_release); });
    return *ptr_.load(std::memory_order_acquire);
  }

 private:
  std::once_flag once_;
  std::atomic<T*> ptr_{nullptr};
};

}  // namespace ember
