// The CUDA backend's runtime: device discovery (robust without a driver), the current device and
// stream of each thread, stream pools, events, the caching allocator of each GPU, and errors.
#include "ember/backend/cuda/cuda_backend.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/backend/cuda/device.h"
#include "ember/backend/cuda/kernel_errors.h"
#include "ember/backend/cuda/memory.h"
#include "ember/backend/cuda/runtime.h"
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

// --- discovery ---------------------------------------------------------------------------------

struct Discovery {
  int count = 0;
  std::string reason;
  std::string visible;                                  // CUDA_VISIBLE_DEVICES when CUDA started
  uint64_t fork_generation = ember::fork_generation();  // of the process that started CUDA
};

const Discovery& discovery() {
  static const Discovery d = [] {
    Discovery r;
    const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
    r.visible = env ? env : "";
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      // No driver (35), no device (100), a bad CUDA_VISIBLE_DEVICES...: all mean "no GPU".
      r.reason = std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) + ")";
      // The runtime says "insufficient" both for an old driver and for none at all.
      if (err == cudaErrorInsufficientDriver)
        r.reason += "; is an NVIDIA driver for CUDA " + std::to_string(CUDART_VERSION / 1000) +
                    " installed?";
      cudaGetLastError();
      return r;
    }
    r.count = n;
    if (n == 0)
      r.reason = "no CUDA device is visible" +
                 std::string(env ? " (CUDA_VISIBLE_DEVICES=" + r.visible + ")" : "");
    return r;
  }();
  return d;
}

// Note [Fork safety] (core/fork.h): the driver's state, and with it every stream, event, block and
// handle made from it, does not survive fork().
void check_not_forked(const char* op) {
  EMBER_CHECK(discovery().count == 0 || discovery().fork_generation == fork_generation(), "[", op,
              "] cannot use CUDA in a process forked after CUDA was initialised; start workers "
              "with the spawn start method (multiprocessing::StartMethod::Spawn)");
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

// --- streams -----------------------------------------------------------------------------------

constexpr int kPoolSize = 32;

struct DeviceStreams {
  std::once_flag once;
  cudaStream_t low[kPoolSize] = {};
  cudaStream_t high[kPoolSize] = {};
  std::atomic<unsigned> next_low{0}, next_high{0};
};

DeviceStreams& streams(int device) {
  static std::vector<std::unique_ptr<DeviceStreams>>* all = [] {
    auto* v = new std::vector<std::unique_ptr<DeviceStreams>>();
    for (int i = 0; i < discovery().count; ++i) v->push_back(std::make_unique<DeviceStreams>());
    return v;
  }();
  DeviceStreams& s = *(*all)[static_cast<size_t>(device)];
  std::call_once(s.once, [&] {
    RawDeviceGuard guard(device);
    int least = 0, greatest = 0;
    EMBER_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    for (int i = 0; i < kPoolSize; ++i) {
      EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&s.low[i], cudaStreamNonBlocking, least));
      EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&s.high[i], cudaStreamNonBlocking, greatest));
    }
  });
  return s;
}

// The current stream of each device for this thread (0: the default stream).
thread_local std::vector<uintptr_t> t_current;

// --- memory ------------------------------------------------------------------------------------

// One GPU's memory for the caching allocator: cudaMalloc, and events on the streams that use it.
class CudaMemory final : public StreamOrderedMemory {
 public:
  explicit CudaMemory(int device) : device_(device) {}
  Device device() const override { return Device(kCUDA, device_); }
  void* raw_alloc(size_t bytes) override {
    RawDeviceGuard guard(device_);
    void* p = nullptr;
    return allocated_or_null(cudaMalloc(&p, bytes), p);
  }
  void raw_free(void* ptr) noexcept override {
    RawDeviceGuard guard(device_);
    cudaFree(ptr);
  }
  size_t total_memory() override { return mem_get_info(device_).second; }
  size_t free_memory() override { return mem_get_info(device_).first; }
  StreamId current_stream() override {
    return stream_id(device_, cuda::current_stream(device_).handle());
  }

 private:
  int device_;
};

CachingAllocatorOptions allocator_options() {
  CachingAllocatorOptions o;
  if (const char* env = std::getenv("EMBER_CUDA_ALLOC")) {
    std::string v = env;
    EMBER_CHECK(v == "none" || v == "caching",
                "[EMBER_CUDA_ALLOC] expected 'none' or 'caching', got '", v, "'");
    o.caching = v != "none";
  }
  return o;
}

class CudaBackend final : public DeviceBackend {
 public:
  int device_count() override { return discovery().count; }
  int current_device() override { return check_index(-1, "current_device"); }
  void set_device(int index) override {
    check_index(index, "set_device");
    EMBER_CUDA_CHECK(cudaSetDevice(index));
  }
  CachingAllocator& allocator(int index) override {
    check_index(index, "allocator");
    std::call_once(init_,
                   [&] { slots_ = std::vector<Slot>(static_cast<size_t>(discovery().count)); });
    Slot& slot = slots_[static_cast<size_t>(index)];
    std::call_once(slot.once, [&] {
      slot.ptr = new CachingAllocator(std::make_unique<CudaMemory>(index), allocator_options());
    });
    return *slot.ptr;
  }
  std::string unavailable_reason() override { return discovery().reason; }
  uintptr_t current_stream(int index) override { return cuda::current_stream(index).handle(); }
  void set_current_stream(int index, uintptr_t stream) override {
    cuda::set_current_stream(Stream(index, stream));
  }
  void stream_wait(int index, uintptr_t stream, uintptr_t other) override {
    Stream(index, stream).wait_stream(Stream(index, other));
  }
  void synchronize(int index) override {
    int d = check_index(index, "synchronize");
    RawDeviceGuard guard(d);
    EMBER_CUDA_CHECK(cudaDeviceSynchronize());
    check_kernel_errors(d);
  }

 private:
  struct Slot {
    std::once_flag once;
    CachingAllocator* ptr = nullptr;
  };
  std::once_flag init_;
  std::vector<Slot> slots_;
};

std::atomic<bool> g_allow_tf32{false};

}  // namespace

DeviceBackend& backend() {
  static CudaBackend* b = new CudaBackend();
  return *b;
}
bool is_built() { return true; }

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

RawDeviceGuard::RawDeviceGuard(int device) : previous_(-1) {
  int current = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device) {
    EMBER_CUDA_CHECK(cudaSetDevice(device));
    previous_ = current;
  }
}
RawDeviceGuard::~RawDeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
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

void* StreamOrderedMemory::record_event(StreamId stream) {
  RawDeviceGuard guard(device_of(stream));  // an event is made on its stream's device
  cudaEvent_t e;
  EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  EMBER_CUDA_CHECK(cudaEventRecord(e, stream_of(stream)));
  return e;
}
void StreamOrderedMemory::synchronize_event(void* event) {
  EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
}
bool StreamOrderedMemory::query_event(void* event) {
  cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  EMBER_CUDA_CHECK(err);
  return true;
}
void StreamOrderedMemory::destroy_event(void* event) noexcept {
  cudaEventDestroy(static_cast<cudaEvent_t>(event));
}
void* StreamOrderedMemory::allocated_or_null(cudaError_t err, void* p) {
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // so that a later launch check does not report this handled failure
    return nullptr;
  }
  EMBER_CUDA_CHECK(err);
  return p;
}

// --- device.h ------------------------------------------------------------------------------------

bool is_available() { return discovery().count > 0; }
int device_count() { return discovery().count; }
std::string unavailable_reason() { return discovery().reason; }
int current_device() { return check_index(-1, "current_device"); }
void set_device(int device) { backend().set_device(device); }

std::string get_device_name(int device) { return get_device_properties(device).name; }

DeviceProperties get_device_properties(int device) {
  int d = check_index(device, "get_device_properties");
  cudaDeviceProp p{};
  EMBER_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
  DeviceProperties out;
  out.name = p.name;
  out.major = p.major;
  out.minor = p.minor;
  out.total_memory = p.totalGlobalMem;
  out.multi_processor_count = p.multiProcessorCount;
  int clock = 0, mem_clock = 0;
  cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, d);
  cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, d);
  cudaGetLastError();
  out.clock_rate_khz = clock;
  out.memory_clock_rate_khz = mem_clock;
  out.memory_bus_width = p.memoryBusWidth;
  out.l2_cache_size = static_cast<size_t>(p.l2CacheSize);
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) == cudaSuccess) out.pci_bus_id = bus;
  cudaGetLastError();
  char uuid[64];
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  std::snprintf(uuid, sizeof uuid,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
  out.uuid = uuid;
  out.max_threads_per_block = p.maxThreadsPerBlock;
  out.shared_memory_per_block = p.sharedMemPerBlock;
  return out;
}

std::pair<size_t, size_t> mem_get_info(int device) {
  RawDeviceGuard guard(check_index(device, "mem_get_info"));
  size_t free_bytes = 0, total = 0;
  EMBER_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  return {free_bytes, total};
}

bool can_device_access_peer(int device, int peer) {
  check_index(device, "can_device_access_peer");
  check_index(peer, "can_device_access_peer");
  if (device == peer) return false;
  int ok = 0;
  EMBER_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, device, peer));
  return ok != 0;
}

int driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) cudaGetLastError();
  return v;
}
int runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) cudaGetLastError();
  return v;
}

std::string visible_devices() { return discovery().visible; }

void check_visible_devices_unchanged() {
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  std::string now = env ? env : "";
  EMBER_CHECK(now == discovery().visible, "[CUDA_VISIBLE_DEVICES] changed from '",
              discovery().visible, "' to '", now,
              "' after CUDA started; the change cannot take effect in this process "
              "(set it before the program starts)");
}

void synchronize(int device) { backend().synchronize(device); }

Device try_gpu(int i) { return i >= 0 && i < device_count() ? Device(kCUDA, i) : Device(kCPU, 0); }
std::vector<Device> try_all_gpus() {
  std::vector<Device> out;
  for (int i = 0; i < device_count(); ++i) out.emplace_back(kCUDA, i);
  if (out.empty()) out.emplace_back(kCPU, 0);
  return out;
}

DeviceGuard::DeviceGuard(Device device) {
  if (!device.is_cuda()) return;
  int target = check_index(device.index(), "DeviceGuard");
  int current = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&current));
  if (current != target) {
    EMBER_CUDA_CHECK(cudaSetDevice(target));
    previous_ = current;
  }
}
DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

// --- stream.h ------------------------------------------------------------------------------------

Stream current_stream(int device) {
  int d = check_index(device, "current_stream");
  if (t_current.size() <= static_cast<size_t>(d))
    t_current.resize(static_cast<size_t>(discovery().count), 0);
  return Stream(d, t_current[static_cast<size_t>(d)]);
}

Stream default_stream(int device) { return Stream(check_index(device, "default_stream"), 0); }

void set_current_stream(const Stream& s) {
  int d = check_index(s.device(), "set_current_stream");
  if (t_current.size() <= static_cast<size_t>(d))
    t_current.resize(static_cast<size_t>(discovery().count), 0);
  t_current[static_cast<size_t>(d)] = s.handle();
}

Stream get_stream_from_pool(bool high_priority, int device) {
  int d = check_index(device, "get_stream_from_pool");
  DeviceStreams& s = streams(d);
  unsigned i = (high_priority ? s.next_high : s.next_low).fetch_add(1) % kPoolSize;
  return Stream(d, reinterpret_cast<uintptr_t>(high_priority ? s.high[i] : s.low[i]));
}

bool Stream::query() const {
  RawDeviceGuard guard(device_);
  cudaError_t err = cudaStreamQuery(reinterpret_cast<cudaStream_t>(handle_));
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  EMBER_CUDA_CHECK(err);
  return true;
}

void Stream::synchronize() const {
  RawDeviceGuard guard(device_);
  EMBER_CUDA_CHECK(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(handle_)));
  check_kernel_errors(device_);
}

void Stream::wait_stream(const Stream& other) const {
  if (other == *this) return;
  Event e;
  e.record(other);
  wait_event(e);
}

void Stream::wait_event(const Event& event) const { event.wait(*this); }

StreamGuard::StreamGuard(const Stream& stream)
    : previous_(current_stream(stream.device())), previous_device_(current_device()) {
  if (previous_device_ != stream.device()) EMBER_CUDA_CHECK(cudaSetDevice(stream.device()));
  set_current_stream(stream);
}

StreamGuard::~StreamGuard() {
  try {
    set_current_stream(previous_);
  } catch (...) {
  }
  cudaSetDevice(previous_device_);
}

Event::Event(bool enable_timing, bool blocking) : timing_(enable_timing), blocking_(blocking) {}

void Event::create(int device) {
  RawDeviceGuard guard(device);
  unsigned flags =
      (timing_ ? 0u : cudaEventDisableTiming) | (blocking_ ? cudaEventBlockingSync : 0u);
  cudaEvent_t e;
  EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
  handle_ = reinterpret_cast<uintptr_t>(e);
  device_ = device;
}

Event::~Event() {
  if (handle_) cudaEventDestroy(reinterpret_cast<cudaEvent_t>(handle_));
}

Event::Event(Event&& o) noexcept
    : handle_(o.handle_), device_(o.device_), timing_(o.timing_), blocking_(o.blocking_) {
  o.handle_ = 0;
}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    if (handle_) cudaEventDestroy(reinterpret_cast<cudaEvent_t>(handle_));
    handle_ = o.handle_;
    device_ = o.device_;
    timing_ = o.timing_;
    blocking_ = o.blocking_;
    o.handle_ = 0;
  }
  return *this;
}

void Event::record(const Stream& stream) {
  if (!handle_) create(stream.device());
  EMBER_CHECK(stream.device() == device_, "[Event.record] the event belongs to cuda:", device_,
              " but the stream to cuda:", stream.device());
  RawDeviceGuard guard(device_);
  EMBER_CUDA_CHECK(cudaEventRecord(reinterpret_cast<cudaEvent_t>(handle_),
                                   reinterpret_cast<cudaStream_t>(stream.handle())));
}
void Event::record() { record(current_stream()); }

void Event::wait(const Stream& stream) const {
  if (!handle_) return;  // never recorded: nothing to wait for
  RawDeviceGuard guard(stream.device());
  EMBER_CUDA_CHECK(cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(stream.handle()),
                                       reinterpret_cast<cudaEvent_t>(handle_), 0));
}
void Event::wait() const { wait(current_stream()); }

bool Event::query() const {
  if (!handle_) return true;
  cudaError_t err = cudaEventQuery(reinterpret_cast<cudaEvent_t>(handle_));
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  EMBER_CUDA_CHECK(err);
  return true;
}

void Event::synchronize() const {
  if (handle_) EMBER_CUDA_CHECK(cudaEventSynchronize(reinterpret_cast<cudaEvent_t>(handle_)));
}

float Event::elapsed_time(const Event& end) const {
  EMBER_CHECK(timing_ && end.timing_, "[Event.elapsed_time] both events need enable_timing=true");
  EMBER_CHECK(handle_ && end.handle_, "[Event.elapsed_time] both events must be recorded first");
  float ms = 0;
  EMBER_CUDA_CHECK(cudaEventElapsedTime(&ms, reinterpret_cast<cudaEvent_t>(handle_),
                                        reinterpret_cast<cudaEvent_t>(end.handle_)));
  return ms;
}

// --- memory.h ------------------------------------------------------------------------------------

namespace {
CachingAllocator& alloc(int device) { return backend().allocator(check_index(device, "memory")); }
}  // namespace

size_t memory_allocated(int device) { return alloc(device).memory_allocated(); }
size_t max_memory_allocated(int device) {
  return static_cast<size_t>(alloc(device).stats().allocated_bytes[kAllPools].peak);
}
size_t memory_reserved(int device) { return alloc(device).memory_reserved(); }
size_t memory_cached(int device) { return memory_reserved(device); }
size_t max_memory_reserved(int device) {
  return static_cast<size_t>(alloc(device).stats().reserved_bytes[kAllPools].peak);
}
void reset_peak_memory_stats(int device) { alloc(device).reset_peak_stats(); }
std::map<std::string, int64_t> memory_stats(int device) { return alloc(device).stats().to_map(); }
std::vector<SegmentInfo> memory_snapshot(int device) { return alloc(device).snapshot(); }
std::string memory_summary(int device) {
  int d = check_index(device, "memory_summary");
  return ember::memory_summary(alloc(d).stats(), Device(kCUDA, d));
}
void empty_cache() {
  for (int d = 0; d < device_count(); ++d) alloc(d).empty_cache();
}
void set_per_process_memory_fraction(double fraction, int device) {
  alloc(device).set_memory_fraction(fraction);
}

void set_allow_tf32(bool allow) { g_allow_tf32 = allow; }
bool allow_tf32() { return g_allow_tf32; }

}  // namespace cuda
}  // namespace ember
