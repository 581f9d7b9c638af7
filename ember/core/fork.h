// fork() and ember's process-wide state. Note [Fork safety]: only the forking thread exists in a
// child, so every lock another thread might hold at fork time is taken in a pthread_atfork
// "prepare" handler and released on both sides (the caching allocators, the default generator,
// the thread pool's lock); the thread pool, whose workers do not exist in the child, is rebuilt
// there on first use. CUDA cannot be used in a child forked after CUDA started (its driver state
// does not survive fork): the CUDA backend compares the fork generation it started in with this
// one and throws instead of hanging.
#pragma once

#include <cstdint>

namespace ember {

/// How many fork()s separate this process from the one ember started in (0 there).
uint64_t fork_generation();

}  // namespace ember
