#include "ember/core/generator.h"

#include <pthread.h>

#include "ember/core/philox.h"

namespace ember {

uint64_t Generator::random64() {
  auto [seed, offset] = next();
  Philox r(seed, offset, 0);
  return (static_cast<uint64_t>(r.c[0]) << 32) | r.c[1];
}

Generator& default_generator() {
  static Generator* g = [] {
    pthread_atfork([] { default_generator().lock_for_fork(); },
                   [] { default_generator().unlock_after_fork(); },
                   [] { default_generator().unlock_after_fork(); });
    return new Generator();
  }();
  return *g;
}

namespace {
// Registers the fork handlers at static initialisation, before any thread can fork (see
// caching_allocator.cpp: a handler registered during another thread's fork is skipped for it).
[[maybe_unused]] Generator& g_default_generator_at_startup = default_generator();
}  // namespace

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace ember
