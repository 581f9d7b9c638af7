#include "ember/core/fork.h"

#include <pthread.h>

#include <atomic>

namespace ember {
namespace {

std::atomic<uint64_t> g_generation{0};

void on_child() { g_generation.fetch_add(1, std::memory_order_relaxed); }

// Registered at static initialisation: this file is linked whenever anything asks for the
// generation, and nothing can have forked before static initialisation.
const bool g_registered = [] {
  pthread_atfork(nullptr, nullptr, on_child);
  return true;
}();

}  // namespace

uint64_t fork_generation() {
  (void)g_registered;
  return g_generation.load(std::memory_order_relaxed);
}

}  // namespace ember
