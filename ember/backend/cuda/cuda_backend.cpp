// The CUDA backend as core sees it (core/device_backend.h): device count and choice, each GPU's
// caching allocator, streams and synchronisation, over the runtime in this folder.
#include "ember/backend/cuda/cuda_backend.h"
#include "ember/core/fork.h"

#include "ember/backend/cuda/activity.h"
#include "ember/backend/cuda/kernel_errors.h"
#include "ember/backend/cuda/runtime.h"
#include "ember/core/per_device.h"

namespace ember::cuda {

// memory.cpp: a caching allocator over cudaMalloc for `device`.
CachingAllocator* make_cuda_allocator(int device);

namespace {

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
    return allocators_.get(index, [&] { return make_cuda_allocator(index); });
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
  void start_activity() override { cuda::start_activity(); }
  std::vector<profiler::Event> stop_activity() override { return cuda::stop_activity(); }

 private:
  PerDevice<CachingAllocator> allocators_{discovery().count};
};

}  // namespace

DeviceBackend& backend() {
  static ForkSafeLazy<CudaBackend> b;
  return b.get([] { return new CudaBackend(); });
}
bool is_built() { return true; }

}  // namespace ember::cuda
