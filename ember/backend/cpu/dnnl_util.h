// What ember's oneDNN paths share (conv_dnnl.cpp, gemm_dnnl.cpp): the engine, running a primitive
// single-threaded inside a pool worker, scratch memory from the caching allocator, and a cache of
// built primitives. Only compiled with oneDNN (EMBER_WITH_DNNL).
#pragma once

#if defined(EMBER_WITH_DNNL)

#include <omp.h>

#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "ember/core/allocator.h"
#include "ember/core/fork.h"
#include "ember/core/scope_guard.h"

namespace ember::cpu::dnnl_util {

dnnl::engine& engine();

/// Runs f with OpenMP limited to this thread, restoring the caller's setting after: oneDNN then
/// runs sequentially inside the pool worker that called it (thread_pool.h says why).
template <typename F>
void single_threaded(F&& f) {
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  ScopeGuard restore([&] { omp_set_num_threads(saved); });
  f();
}

/// Pool workers may run the same primitive at once: each brings its own scratchpad.
dnnl::primitive_attr user_scratchpad_attr();

/// Scratch memory from cpu:0's caching allocator: these buffers come and go with every call, and
/// fresh pages from the kernel (malloc's mmap for large sizes) cost more than the work.
using Buffer = DataPtr;
void* reserve(Buffer& buffer, size_t bytes);

/// Built primitives by key: building one costs far more than running it.
template <typename Plan>
class PlanCache {
 public:
  using Key = std::vector<int64_t>;
  template <typename Make>
  Plan lookup(const Key& k, Make make) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = built_.find(k);
    if (it != built_.end()) return it->second;
    Plan plan = make();
    built_.emplace(k, plan);
    return plan;
  }

 private:
  std::mutex mutex_;
  std::map<Key, Plan> built_;
};

/// A process-wide PlanCache that survives fork() (core/fork.h).
template <typename Plan>
PlanCache<Plan>& plan_cache() {
  static ForkSafeLazy<PlanCache<Plan>> c;
  return c.get([] { return new PlanCache<Plan>(); });
}

}  // namespace ember::cpu::dnnl_util

#endif
