#include "ember/backend/cpu/thread_pool.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/fork.h"
#include "ember/core/scope_guard.h"

namespace ember {
namespace {

thread_local bool t_in_parallel = false;

constexpr int kMaxThreads = 4096;

int default_threads() {
  if (const char* env = std::getenv("EMBER_NUM_THREADS"); env && *env) {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    EMBER_CHECK(*end == '\0' && n >= 1 && n <= kMaxThreads, "[EMBER_NUM_THREADS] expected 1 to ",
                kMaxThreads, " threads, got '", env, "'");
    return static_cast<int>(n);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

// Workers sleep on a condition variable between jobs, after a short spin that catches the next
// op of a training step without a wake-up. A job lives on the caller's stack: workers take it
// under mutex_ and the caller withdraws it, then waits for every taker, before returning.
struct Job {
  detail::RangeFn fn = nullptr;
  const void* ctx = nullptr;
  int64_t begin = 0, end = 0, chunks = 0;
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int64_t> pending{0};
  std::mutex error_mutex;
  std::exception_ptr error;

  void work() {
    bool was = t_in_parallel;
    t_in_parallel = true;
    ScopeGuard restore([&] { t_in_parallel = was; });
    for (;;) {
      int64_t c = next_chunk.fetch_add(1, std::memory_order_acq_rel);
      if (c >= chunks) break;
      int64_t b = begin + (end - begin) * c / chunks;
      int64_t e = begin + (end - begin) * (c + 1) / chunks;
      try {
        fn(ctx, b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
      pending.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
};

class ThreadPool {
 public:
  explicit ThreadPool(int threads) : size_(threads) {
    try {
      for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
    } catch (const std::exception& e) {
      // The system refused a thread: stop the ones started (the destructor will not run).
      stop();
      EMBER_FAIL("[thread pool] could not start ", threads, " threads: ", e.what(),
                 " (set fewer with set_num_threads or EMBER_NUM_THREADS)");
    }
  }
  ~ThreadPool() { stop(); }
  int size() const { return size_; }

  // Returns false (and runs nothing) if another thread holds the pool.
  bool try_run(int64_t begin, int64_t end, int64_t chunks, detail::RangeFn fn, const void* ctx) {
    std::unique_lock<std::mutex> owner(run_mutex_, std::try_to_lock);
    if (!owner.owns_lock()) return false;
    Job job;
    job.fn = fn;
    job.ctx = ctx;
    job.begin = begin;
    job.end = end;
    job.chunks = chunks;
    job.pending.store(chunks);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      current_ = &job;
      generation_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    uint64_t generation = fork_generation();
    job.work();
    for (int spins = 0; job.pending.load(std::memory_order_acquire) > 0; ++spins) {
      if (spins > 1000) {
        check_not_forked(generation);
        std::this_thread::yield();
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      current_ = nullptr;
    }
    while (takers_.load(std::memory_order_acquire) > 0) {
      check_not_forked(generation);
      std::this_thread::yield();
    }
    if (job.error) std::rethrow_exception(job.error);
    return true;
  }

 private:
  // A fork() from inside a chunk leaves the child waiting for workers that do not exist there.
  static void check_not_forked(uint64_t generation) {
    EMBER_CHECK(
        fork_generation() == generation,
        "[parallel_for] fork() was called inside a parallel region: the forked process cannot finish its parent's job (fork outside parallel_for)");
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      generation_.fetch_add(1);
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  void worker_loop() {
    uint64_t seen = 0;
    for (;;) {
      for (int i = 0; i < 4000 && generation_.load(std::memory_order_acquire) == seen; ++i) {
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
      }
      Job* job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return generation_.load() != seen; });
        seen = generation_.load();
        if (stop_) return;
        job = current_;
        if (job) takers_.fetch_add(1, std::memory_order_acq_rel);
      }
      if (job) {
        job->work();
        takers_.fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  }

  int size_;
  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // held by the thread whose job is running
  std::mutex mutex_;      // guards current_ and stop_
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};
  bool stop_ = false;
  Job* current_ = nullptr;
  std::atomic<int> takers_{0};
};

std::mutex g_pool_mutex;
std::atomic<int> g_num_threads{0};
std::shared_ptr<ThreadPool> g_pool;

// Note [Fork safety] (core/fork.h): g_pool_mutex is held across fork(); the child forgets the
// parent's pool without destroying it (joining its workers, which do not exist there, would
// hang) and builds its own on first use.
// The forgotten pools stay reachable from a global, so that LeakSanitizer does not report them.
struct ForgottenPool {
  std::shared_ptr<ThreadPool> pool;
  ForgottenPool* previous;
};
ForgottenPool* g_forgotten_pools = nullptr;

void fork_prepare() { g_pool_mutex.lock(); }
void fork_parent() { g_pool_mutex.unlock(); }
void fork_child() {
  g_forgotten_pools = new ForgottenPool{std::move(g_pool), g_forgotten_pools};
  g_pool_mutex.unlock();
}

// Registered at static initialisation, not on the first parallel_for: that may run on one thread
// while another forks, and glibc skips a handler registered while a fork is under way.
bool register_fork_handlers() {
  static const bool registered = [] {
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    return true;
  }();
  return registered;
}
[[maybe_unused]] const bool g_fork_handlers_registered = register_fork_handlers();

std::shared_ptr<ThreadPool> pool() {
  register_fork_handlers();  // in case of a parallel_for during another file's static init
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (!g_pool) g_pool = std::make_shared<ThreadPool>(get_num_threads());
  return g_pool;
}

}  // namespace

int get_num_threads() {
  int n = g_num_threads.load(std::memory_order_relaxed);
  if (n == 0) {
    int expected = 0;
    g_num_threads.compare_exchange_strong(expected, default_threads());
    n = g_num_threads.load();
  }
  return n;
}

void set_num_threads(int n) {
  EMBER_CHECK(n > 0 && n <= kMaxThreads, "[set_num_threads] expected 1 to ", kMaxThreads,
              " threads, got ", n);
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  g_num_threads.store(n);
  if (g_pool && g_pool->size() != n) g_pool.reset();  // the old pool joins once unused
}

bool in_parallel_region() { return t_in_parallel; }

namespace cpu {
int64_t stream_threshold_bytes() {
  // Not a function-local static (Note [Fork safety]): any thread may compute it, and the result
  // is the same each time.
  static std::atomic<int64_t> cached{0};
  if (int64_t bytes = cached.load(std::memory_order_relaxed)) return bytes;
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
  int64_t bytes = llc > 0 ? static_cast<int64_t>(llc) / 2 : int64_t{16} << 20;
  cached.store(bytes, std::memory_order_relaxed);
  return bytes;
}
}  // namespace cpu

namespace detail {
void parallel_run(int64_t begin, int64_t end, int64_t grain, RangeFn fn, const void* ctx) {
  std::shared_ptr<ThreadPool> p = pool();
  int64_t n = end - begin;
  int64_t chunks = std::min<int64_t>(p->size(), (n + grain - 1) / std::max<int64_t>(grain, 1));
  if (chunks <= 1 || !p->try_run(begin, end, chunks, fn, ctx)) {
    bool was = t_in_parallel;
    t_in_parallel = true;
    ScopeGuard restore([&] { t_in_parallel = was; });
    fn(ctx, begin, end);
  }
}
}  // namespace detail

}  // namespace ember
