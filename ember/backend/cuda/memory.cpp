// GPU memory for the caching allocator (cudaMalloc, and events that order block reuse after the
// streams that used a block), and torch.cuda's memory API over it (memory.h).
#include "ember/backend/cuda/memory.h"

#include <atomic>
#include <cstdlib>

#include "ember/backend/cuda/cuda_backend.h"
#include "ember/backend/cuda/device.h"
#include "ember/backend/cuda/runtime.h"
#include "ember/core/memory_summary.h"

namespace ember::cuda {
namespace {

// One GPU's memory for the caching allocator: cudaMalloc, and events on the streams that use it.
class CudaMemory final : public StreamOrderedMemory {
 public:
  explicit CudaMemory(int device) : device_(device) {}
  Device device() const override { return Device(kCUDA, device_); }
  void* raw_alloc(size_t bytes) override {
    RawDeviceGuard guard(device_);
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, bytes);
    return allocated_or_null(err, p);
  }
  void raw_free(void* ptr, size_t) noexcept override {
    int previous = -1;
    try {
      previous = exchange_device(device_);
    } catch (...) {
    }
    cudaFree(ptr);
    restore_device(previous);
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

CachingAllocator& alloc(int device) { return backend().allocator(check_index(device, "memory")); }

std::atomic<bool> g_allow_tf32{false};

}  // namespace

CachingAllocator* make_cuda_allocator(int device) {
  return new CachingAllocator(std::make_unique<CudaMemory>(device), allocator_options());
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
  return EMBER_CUDA_IS_DONE(cudaEventQuery(static_cast<cudaEvent_t>(event)));
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

}  // namespace ember::cuda
