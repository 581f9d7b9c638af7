// The one pool that owns the CPU cores: two pools that spin (OpenBLAS's pthreads and an OpenMP
// team) on the same two cores make every step slow and its time bimodal; with Debian's libtorch a
// LeNet epoch took 8.6 s on 2 threads against 3.5 s on 1. Large ops split their range over it;
// small ones run inline with no hand-off; a call from inside a parallel region, or while another
// thread holds the pool, runs inline too. OpenBLAS is kept at one thread and called from inside
// this pool (backend/cpu/blas.h).
#pragma once

#include <cstdint>
#include <type_traits>

namespace ember {

/// Threads ember uses for CPU work (default: EMBER_NUM_THREADS, else all cores).
int get_num_threads();
/// torch.set_num_threads: resizes the pool.
void set_num_threads(int n);
/// Whether the calling thread is running a chunk of a parallel_for.
bool in_parallel_region();

/// Elements per chunk below which elementwise work is not worth a thread hand-off.
inline constexpr int64_t kGrainSize = 32768;

namespace detail {
using RangeFn = void (*)(const void* ctx, int64_t begin, int64_t end);
void parallel_run(int64_t begin, int64_t end, int64_t grain, RangeFn fn, const void* ctx);
}  // namespace detail

/// Calls f(b, e) on disjoint sub-ranges covering [begin, end), each at least `grain` long (but
/// the last), in parallel when the range is large enough. The first exception is rethrown here.
template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  if (end <= begin) return;
  if (end - begin <= grain || get_num_threads() == 1 || in_parallel_region()) {
    f(begin, end);
    return;
  }
  detail::parallel_run(
      begin, end, grain,
      [](const void* ctx, int64_t b, int64_t e) { (*static_cast<const F*>(ctx))(b, e); }, &f);
}

}  // namespace ember
