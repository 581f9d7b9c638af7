// Copies that involve a GPU: host to device, device to host, device to device (peer copy where
// the devices allow it, staged by the driver otherwise), with dtype conversion on the GPU. They are
// queued on the current streams; the host waits only where it must (a copy into pageable memory,
// or a blocking copy), and memory used by an asynchronous copy is kept from reuse until it is done.
#include <cuda_runtime.h>

#include <cstdlib>
#include <mutex>
#include <set>

#include "ember/backend/cpu/cpu_device.h"
#include "ember/backend/cuda/device.h"
#include "ember/backend/cuda/kernel_errors.h"
#include "ember/backend/cuda/runtime.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace cuda {
namespace {

// Page-locked host memory, cached like device memory (core/caching_allocator.h). Its events are
// recorded on the CUDA streams that used a block, so a block is reused only after their copies.
class PinnedMemory final : public StreamOrderedMemory {
 public:
  Device device() const override { return Device(kCPU, 0); }
  void* raw_alloc(size_t bytes) override {
    void* p = nullptr;
    cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
    return allocated_or_null(err, p);
  }
  void raw_free(void* ptr, size_t) noexcept override { cudaFreeHost(ptr); }
  size_t total_memory() override {
    return device_backend(kCPU).allocator(0).memory().total_memory();
  }
  size_t free_memory() override { return device_backend(kCPU).allocator(0).memory().free_memory(); }
  // The host uses pinned memory in program order, not on a stream: no CUDA stream has this id,
  // so every stream a block is recorded on gets an event.
  StreamId current_stream() override { return ~StreamId{0}; }
};

CachingAllocator& pinned_allocator() {
  static CachingAllocator* a = new CachingAllocator(std::make_unique<PinnedMemory>());
  return *a;
}

bool is_pinned_ptr(const void* p) {
  // In a child forked after CUDA started, a CUDA call may hang rather than fail, and no memory can
  // be pinned for this process.
  if (!p || !is_available() || forked_after_start()) return false;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

// Lets `device` read and write `peer`'s memory directly, once per pair.
bool enable_peer(int device, int peer) {
  static std::mutex mutex;
  static std::set<std::pair<int, int>> enabled;
  std::lock_guard<std::mutex> lock(mutex);
  if (enabled.count({device, peer})) return true;
  if (!can_device_access_peer(device, peer)) return false;
  RawDeviceGuard guard(device);
  cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0);
  if (err != cudaSuccess && err != cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();
    return false;
  }
  cudaGetLastError();
  enabled.insert({device, peer});
  return true;
}

Tensor with_layout_of(const Tensor& like, DType dtype, Device device) {
  return empty(like.sizes(), TensorOptions(dtype).with_device(device));
}

// A contiguous copy of host tensor t (t itself if already contiguous).
Tensor contiguous_host(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor c = with_layout_of(t, t.dtype(), t.device());
  TensorIter it(c, {t});
  copy_cpu(it);
  return c;
}

// Copies raw bytes of contiguous `src` into contiguous `dst` (same dtype and size).
void memcpy_async(const Tensor& dst, const Tensor& src, cudaMemcpyKind kind, cudaStream_t stream) {
  if (dst.nbytes() == 0) return;
  EMBER_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(), kind, stream));
}

void host_to_device(const Tensor& dst, const Tensor& src, bool non_blocking) {
  int device = dst.device().index();
  LaunchScope launch(device);
  cudaStream_t stream = launch.stream;
  // The bytes cross in the source's dtype; conversion and strides are done on the GPU.
  Tensor host = contiguous_host(src);
  bool direct = dst.is_contiguous() && dst.dtype() == src.dtype() && dst.sizes() == src.sizes();
  Tensor staging = direct ? dst : with_layout_of(host, src.dtype(), dst.device());
  memcpy_async(staging, host, cudaMemcpyHostToDevice, stream);
  bool pinned = is_pinned_ptr(host.data_ptr());
  if (pinned && CachingAllocator::owns(host.storage()->data))
    pinned_allocator().record_stream(host.storage()->data,
                                     stream_id(device, reinterpret_cast<uintptr_t>(stream)));
  if (!direct) {
    TensorIter it(dst, {staging});
    copy_cuda(it);
  }
  // From pageable memory the driver has taken the bytes when the call returns; from pinned memory
  // only a non_blocking copy may still be reading them.
  if (pinned && !non_blocking) EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void device_to_host(const Tensor& dst, const Tensor& src, bool non_blocking) {
  int device = src.device().index();
  LaunchScope launch(device);
  cudaStream_t stream = launch.stream;
  // Convert and compact on the GPU, then one transfer of the destination's bytes.
  Tensor dev = src;
  if (!src.is_contiguous() || src.dtype() != dst.dtype() || src.sizes() != dst.sizes()) {
    dev = with_layout_of(dst, dst.dtype(), src.device());
    TensorIter it(dev, {src});
    copy_cuda(it);
  }
  bool direct = dst.is_contiguous();
  Tensor host = direct ? dst : with_layout_of(dst, dst.dtype(), dst.device());
  memcpy_async(host, dev, cudaMemcpyDeviceToHost, stream);
  bool async = non_blocking && direct && is_pinned_ptr(host.data_ptr());
  if (async) {
    if (CachingAllocator::owns(host.storage()->data))
      pinned_allocator().record_stream(host.storage()->data,
                                       stream_id(device, reinterpret_cast<uintptr_t>(stream)));
    return;  // the caller synchronises before reading, as with PyTorch's non_blocking copies
  }
  EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));  // pageable memory: the host must wait
  check_kernel_errors(device);
  if (!direct) {
    TensorIter it(dst, {host});
    copy_cpu(it);
  }
}

void device_to_device(const Tensor& dst, const Tensor& src) {
  int from = src.device().index(), to = dst.device().index();
  // Convert on the source device, so only the destination's bytes travel.
  Tensor s = src;
  if (!src.is_contiguous() || src.dtype() != dst.dtype() || src.sizes() != dst.sizes()) {
    RawDeviceGuard guard(from);
    s = with_layout_of(dst, dst.dtype(), src.device());
    TensorIter it(s, {src});
    copy_cuda(it);
  }
  bool direct = dst.is_contiguous();
  Tensor d = direct ? dst : with_layout_of(dst, dst.dtype(), dst.device());
  // The destination's stream waits for the source's work, then copies.
  Stream src_stream = current_stream(from), dst_stream = current_stream(to);
  dst_stream.wait_stream(src_stream);
  enable_peer(to, from);  // without peer access the driver stages through the host
  {
    RawDeviceGuard guard(to);
    if (d.nbytes())
      EMBER_CUDA_CHECK(cudaMemcpyPeerAsync(d.data_ptr(), to, s.data_ptr(), from, d.nbytes(),
                                           reinterpret_cast<cudaStream_t>(dst_stream.handle())));
  }
  // The source's memory must outlive the copy: its stream waits for the copy (so later work there,
  // which may reuse the memory, comes after), and its allocator waits for the destination stream.
  src_stream.wait_stream(dst_stream);
  device_backend(kCUDA).allocator(from).record_stream(s.storage()->data,
                                                      stream_id(to, dst_stream.handle()));
  if (!direct) {
    RawDeviceGuard guard(to);
    TensorIter it(dst, {d});
    copy_cuda(it);
  }
}

}  // namespace

}  // namespace cuda

void copy_between_devices_cuda(const Tensor& dst, const Tensor& src, bool non_blocking) {
  EMBER_ASSERT(src.sizes() == dst.sizes(),
               "copy_between_devices_cuda expects the source expanded by copy_");
  if (dst.numel() == 0) return;
  if (src.is_cpu())
    cuda::host_to_device(dst, src, non_blocking);
  else if (dst.is_cpu())
    cuda::device_to_host(dst, src, non_blocking);
  else
    cuda::device_to_device(dst, src);
}

Tensor pin_memory_cuda(const Tensor& t) {
  EMBER_CHECK(cuda::is_available(),
              "[pin_memory] needs a CUDA device: ", cuda::unavailable_reason());
  cuda::check_not_forked("pin_memory");
  size_t nbytes = t.nbytes();
  auto storage = std::make_shared<StorageImpl>(cuda::pinned_allocator().allocate(nbytes), nbytes);
  Tensor pinned(std::make_shared<TensorImpl>(storage, t.sizes(), contiguous_strides(t.sizes()), 0,
                                             t.dtype(), Device(kCPU, 0)));
  TensorIter it(pinned, {t});
  copy_cpu(it);
  return pinned;
}

bool is_pinned_cuda(const Tensor& t) { return cuda::is_pinned_ptr(t.data_ptr()); }

void record_stream_cuda(const Tensor& t, uintptr_t stream) {
  // A raw handle of 0 is taken as the default stream of the tensor's own device.
  int device = t.device().index();
  device_backend(kCUDA).allocator(device).record_stream(t.storage()->data,
                                                        cuda::stream_id(device, stream));
}

}  // namespace ember
