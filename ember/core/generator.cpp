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

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace ember
