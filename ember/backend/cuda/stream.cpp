// Streams and events (stream.h): the per-device stream pools, each thread's current stream, and
// torch.cuda.Stream / Event.
#include "ember/backend/cuda/stream.h"

#include <atomic>
#include <vector>

#include "ember/backend/cuda/device.h"
#include "ember/backend/cuda/kernel_errors.h"
#include "ember/backend/cuda/runtime.h"
#include "ember/core/per_device.h"

namespace ember::cuda {
namespace {

constexpr int kPoolSize = 32;

struct StreamPool {
  cudaStream_t low[kPoolSize] = {};
  cudaStream_t high[kPoolSize] = {};
  std::atomic<unsigned> next_low{0}, next_high{0};
};

StreamPool& pool(int device) {
  static auto* pools = new PerDevice<StreamPool>(discovery().count);
  return pools->get(device, [&] {
    RawDeviceGuard guard(device);
    auto* p = new StreamPool();
    int least = 0, greatest = 0;
    EMBER_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    for (int i = 0; i < kPoolSize; ++i) {
      EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&p->low[i], cudaStreamNonBlocking, least));
      EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&p->high[i], cudaStreamNonBlocking, greatest));
    }
    return p;
  });
}

// The current stream of each device for this thread (0: the default stream).
thread_local std::vector<uintptr_t> t_current;

uintptr_t& current_slot(int device) {
  if (t_current.size() <= static_cast<size_t>(device))
    t_current.resize(static_cast<size_t>(discovery().count), 0);
  return t_current[static_cast<size_t>(device)];
}

}  // namespace

Stream current_stream(int device) {
  int d = check_index(device, "current_stream");
  return Stream(d, current_slot(d));
}

Stream default_stream(int device) { return Stream(check_index(device, "default_stream"), 0); }

void set_current_stream(const Stream& s) {
  current_slot(check_index(s.device(), "set_current_stream")) = s.handle();
}

Stream get_stream_from_pool(bool high_priority, int device) {
  int d = check_index(device, "get_stream_from_pool");
  StreamPool& p = pool(d);
  unsigned i = (high_priority ? p.next_high : p.next_low).fetch_add(1) % kPoolSize;
  return Stream(d, reinterpret_cast<uintptr_t>(high_priority ? p.high[i] : p.low[i]));
}

bool Stream::query() const {
  RawDeviceGuard guard(device_);
  return EMBER_CUDA_IS_DONE(cudaStreamQuery(reinterpret_cast<cudaStream_t>(handle_)));
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
  current_slot(previous_.device()) = previous_.handle();
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
  return !handle_ || EMBER_CUDA_IS_DONE(cudaEventQuery(reinterpret_cast<cudaEvent_t>(handle_)));
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

}  // namespace ember::cuda
