// The CUDA runtime under everything else in backend/cuda: discovery (robust without a driver),
// device index checks, switching the current device, launch checks and errors, stream ids.
#include "ember/backend/cuda/runtime.h"

#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "ember/backend/cuda/kernel_errors.h"
#include "ember/core/fork.h"

namespace ember {

namespace detail {
void throw_cuda_error(const char* library, int code, const char* call, const char* file, int line) {
  std::string reason;
  if (std::strcmp(library, "CUDA") == 0) {
    auto err = static_cast<cudaError_t>(code);
    reason = std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) + ")";
    cudaGetLastError();  // clear a sticky non-fatal error so the next call does not see it
  } else {
    reason = "status " + std::to_string(code);
  }
  std::string message =
      str_cat("[", library, "] ", call, " failed: ", reason, " at ", file, ":", line);
  if (code == cudaErrorMemoryAllocation && std::strcmp(library, "CUDA") == 0)
    throw OutOfMemoryError(message, 0);
  throw CudaError(message);
}
}  // namespace detail

namespace cuda {

namespace {

Discovery discover() {
  Discovery r;
  r.fork_generation = fork_generation();
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  r.visible = env ? env : "";
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    // No driver (35), no device (100), a bad CUDA_VISIBLE_DEVICES...: all mean "no GPU".
    r.reason = std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) + ")";
    // The runtime says "insufficient" both for an old driver and for none at all.
    if (err == cudaErrorInsufficientDriver)
      r.reason +=
          "; is an NVIDIA driver for CUDA " + std::to_string(CUDART_VERSION / 1000) + " installed?";
    cudaGetLastError();
    return r;
  }
  r.count = n;
  if (n == 0)
    r.reason = "no CUDA device is visible" +
               std::string(env ? " (CUDA_VISIBLE_DEVICES=" + r.visible + ")" : "");
  return r;
}

// Note [Fork safety] (core/fork.h): a fork while another thread is inside the first
// cudaGetDeviceCount would give the child a discovery that never finishes (a function-local
// static's guard stays taken) or, restarted there, a driver that its parent left half made. So a
// fork waits for discovery to finish: the child has either all of it or none.
std::mutex discovery_mutex;
std::atomic<const Discovery*> discovered{nullptr};
[[maybe_unused]] const int fork_waits_for_discovery =
    pthread_atfork([] { discovery_mutex.lock(); }, [] { discovery_mutex.unlock(); },
                   [] { discovery_mutex.unlock(); });

}  // namespace

const Discovery& discovery() {
  if (const Discovery* d = discovered.load(std::memory_order_acquire)) return *d;
  std::lock_guard<std::mutex> lock(discovery_mutex);
  if (const Discovery* d = discovered.load(std::memory_order_acquire)) return *d;
  const Discovery* d = new Discovery(discover());  // read until the process exits
  discovered.store(d, std::memory_order_release);
  return *d;
}

// Note [Fork safety] (core/fork.h): the driver's state, and with it every stream, event, block and
// handle made from it, does not survive fork().
bool forked_after_start() {
  return discovery().count > 0 && discovery().fork_generation != fork_generation();
}

void check_not_forked(const char* op) {
  EMBER_CHECK(!forked_after_start(), "[", op,
              "] cannot use CUDA in a process forked after CUDA was initialised; "
              "start workers with the spawn start method (multiprocessing::StartMethod::Spawn)");
}

int check_index(int device, const char* op) {
  check_not_forked(op);
  int n = discovery().count;
  if (device < 0) {
    EMBER_CHECK(n > 0, "[", op, "] no CUDA device is available: ", discovery().reason);
    int current = 0;
    EMBER_CUDA_CHECK(cudaGetDevice(&current));
    return current;
  }
  EMBER_CHECK(device < n, "[", op, "] cuda:", device, " does not exist; there are ", n,
              " CUDA devices");
  return device;
}

bool is_done(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaErrorNotReady) {
    cudaGetLastError();  // "not ready" is an answer, not an error: keep it from later checks
    return false;
  }
  if (err != cudaSuccess) detail::throw_cuda_error("CUDA", static_cast<int>(err), call, file, line);
  return true;
}

int exchange_device(int device) {
  int current = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&current));
  if (current == device) return -1;
  EMBER_CUDA_CHECK(cudaSetDevice(device));
  return current;
}

void restore_device(int previous) noexcept {
  if (previous >= 0) cudaSetDevice(previous);
}

bool sync_after_every_op() {
  static const bool on = [] {
    const char* env = std::getenv("EMBER_CUDA_SYNC");
    return env && std::string(env) == "1";
  }();
  return on;
}

void check_launch(const char* kernel, const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess && sync_after_every_op()) err = cudaDeviceSynchronize();
  if (err != cudaSuccess)
    detail::throw_cuda_error("CUDA", static_cast<int>(err), kernel, file, line);
  if (sync_after_every_op()) {  // the kernel has finished: report its index errors at this op
    int device = 0;
    EMBER_CUDA_CHECK(cudaGetDevice(&device));
    check_kernel_errors(device);
  }
}

namespace {
// Default-stream ids: the tag bit, which no user-space address has, and the device index.
constexpr StreamId kDefaultStreamTag = StreamId{1} << 63;
}  // namespace

StreamId stream_id(int device, uintptr_t handle) {
  return handle ? handle : kDefaultStreamTag | static_cast<StreamId>(device);
}
cudaStream_t stream_of(StreamId id) {
  return id & kDefaultStreamTag ? nullptr : reinterpret_cast<cudaStream_t>(id);
}
int device_of(StreamId id) {
  if (id & kDefaultStreamTag) return static_cast<int>(id & ~kDefaultStreamTag);
  int device = 0;
  EMBER_CUDA_CHECK(cudaStreamGetDevice(stream_of(id), &device));
  return device;
}

}  // namespace cuda
}  // namespace ember
