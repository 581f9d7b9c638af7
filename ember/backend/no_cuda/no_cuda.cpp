// Stand-ins for the CUDA backend in a build without it: zero devices, and every CUDA kernel a
// clear error. A kernel added to backend/kernels.h without a line here is a link error.
#include <cstdlib>

#include "ember/backend/cuda/cuda_backend.h"
#include "ember/backend/cuda/device.h"
#include "ember/backend/cuda/memory.h"
#include "ember/backend/cuda/stream.h"
#include "ember/backend/kernels.h"
#include "ember/core/fork.h"

namespace ember {
namespace cuda {
namespace {

[[noreturn]] void not_built(const char* what) {
  EMBER_FAIL(
      "[", what,
      "] ember was built without CUDA support (configure with EMBER_CUDA=ON on a machine with the CUDA toolkit)");
}

class NoCudaBackend final : public DeviceBackend {
 public:
  int device_count() override { return 0; }
  int current_device() override { not_built("current_device"); }
  void set_device(int) override { not_built("set_device"); }
  CachingAllocator& allocator(int) override { not_built("allocator"); }
  std::string unavailable_reason() override { return "ember was built without CUDA support"; }
  void synchronize(int) override {}
};

}  // namespace

DeviceBackend& backend() {
  static ForkSafeLazy<NoCudaBackend> b;
  return b.get([] { return new NoCudaBackend(); });
}
bool is_built() { return false; }

bool is_available() { return false; }
int device_count() { return 0; }
std::string unavailable_reason() { return "ember was built without CUDA support"; }
int current_device() { not_built("current_device"); }
void set_device(int) { not_built("set_device"); }
std::string get_device_name(int) { not_built("get_device_name"); }
DeviceProperties get_device_properties(int) { not_built("get_device_properties"); }
std::pair<size_t, size_t> mem_get_info(int) { not_built("mem_get_info"); }
bool can_device_access_peer(int, int) { not_built("can_device_access_peer"); }
int driver_version() { return 0; }
int runtime_version() { return 0; }
std::string visible_devices() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v ? v : "";
}
void check_visible_devices_unchanged() {}
void synchronize(int) {}
Device try_gpu(int) { return Device(kCPU, 0); }
std::vector<Device> try_all_gpus() { return {Device(kCPU, 0)}; }
DeviceGuard::DeviceGuard(Device device) {
  if (device.is_cuda()) not_built("DeviceGuard");
}
DeviceGuard::~DeviceGuard() = default;

bool Stream::query() const { not_built("Stream::query"); }
void Stream::synchronize() const { not_built("Stream::synchronize"); }
void Stream::wait_stream(const Stream&) const { not_built("Stream::wait_stream"); }
void Stream::wait_event(const Event&) const { not_built("Stream::wait_event"); }
Stream current_stream(int) { not_built("current_stream"); }
Stream default_stream(int) { not_built("default_stream"); }
void set_current_stream(const Stream&) { not_built("set_current_stream"); }
Stream get_stream_from_pool(bool, int) { not_built("get_stream_from_pool"); }
StreamGuard::StreamGuard(const Stream& s) : previous_(s), previous_device_(0) {
  not_built("StreamGuard");
}
StreamGuard::~StreamGuard() = default;
Event::Event(bool, bool) { not_built("Event"); }
Event::~Event() = default;
Event::Event(Event&&) noexcept {}
Event& Event::operator=(Event&&) noexcept { return *this; }
void Event::record(const Stream&) { not_built("Event::record"); }
void Event::record() { not_built("Event::record"); }
void Event::wait(const Stream&) const { not_built("Event::wait"); }
void Event::wait() const { not_built("Event::wait"); }
bool Event::query() const { not_built("Event::query"); }
void Event::synchronize() const { not_built("Event::synchronize"); }
float Event::elapsed_time(const Event&) const { not_built("Event::elapsed_time"); }

size_t memory_allocated(int) { not_built("memory_allocated"); }
size_t max_memory_allocated(int) { not_built("max_memory_allocated"); }
size_t memory_reserved(int) { not_built("memory_reserved"); }
size_t memory_cached(int) { not_built("memory_cached"); }
size_t max_memory_reserved(int) { not_built("max_memory_reserved"); }
void reset_peak_memory_stats(int) { not_built("reset_peak_memory_stats"); }
std::map<std::string, int64_t> memory_stats(int) { not_built("memory_stats"); }
std::vector<SegmentInfo> memory_snapshot(int) { not_built("memory_snapshot"); }
std::string memory_summary(int) { not_built("memory_summary"); }
void empty_cache() {}
void set_per_process_memory_fraction(double, int) { not_built("set_per_process_memory_fraction"); }
namespace {
bool g_allow_tf32 = false;
}
void set_allow_tf32(bool allow) { g_allow_tf32 = allow; }
bool allow_tf32() { return g_allow_tf32; }

}  // namespace cuda

#define EMBER_NO_CUDA(name, ...) \
  void name(__VA_ARGS__) { cuda::not_built(#name); }

EMBER_NO_CUDA(unary_cuda, UnaryOp, const TensorIter&, const UnaryParams&)
EMBER_NO_CUDA(binary_cuda, BinaryOp, const TensorIter&, const BinaryParams&)
EMBER_NO_CUDA(binary_scalar_cuda, BinaryOp, const TensorIter&, Scalar, const BinaryParams&)
EMBER_NO_CUDA(ternary_cuda, TernaryOp, const TensorIter&, const TernaryParams&)
EMBER_NO_CUDA(where_cuda, const TensorIter&)
EMBER_NO_CUDA(copy_cuda, const TensorIter&)
EMBER_NO_CUDA(fill_cuda, const TensorIter&, Scalar)
EMBER_NO_CUDA(reduce_cuda, ReduceOp, const Tensor&, const Shape&, const Tensor&, const Tensor&)
EMBER_NO_CUDA(bmm_cuda, const Tensor&, const Tensor&, const Tensor&, double, double)
EMBER_NO_CUDA(softmax_cuda, const Tensor&, int64_t, bool, const Tensor&)
EMBER_NO_CUDA(softmax_backward_cuda, const Tensor&, const Tensor&, int64_t, bool, const Tensor&)
EMBER_NO_CUDA(conv2d_cuda, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
              const Conv2dParams&)
EMBER_NO_CUDA(conv2d_backward_cuda, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
              const Tensor&, const Tensor&, const Conv2dParams&)
EMBER_NO_CUDA(max_pool2d_cuda, const Tensor&, const Tensor&, const Tensor&, const Pool2dParams&)
EMBER_NO_CUDA(max_pool2d_backward_cuda, const Tensor&, const Tensor&, const Tensor&,
              const Pool2dParams&)
EMBER_NO_CUDA(avg_pool2d_cuda, const Tensor&, const Tensor&, const Pool2dParams&)
EMBER_NO_CUDA(avg_pool2d_backward_cuda, const Tensor&, const Tensor&, const Pool2dParams&)
EMBER_NO_CUDA(adaptive_avg_pool2d_cuda, const Tensor&, const Tensor&)
EMBER_NO_CUDA(adaptive_avg_pool2d_backward_cuda, const Tensor&, const Tensor&)
EMBER_NO_CUDA(batch_norm_stats_cuda, const Tensor&, const Tensor&, const Tensor&)
EMBER_NO_CUDA(batch_norm_elemt_cuda, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
              const Tensor&, const Tensor&)
EMBER_NO_CUDA(batch_norm_backward_reduce_cuda, const Tensor&, const Tensor&, const Tensor&,
              const Tensor&, const Tensor&)
EMBER_NO_CUDA(batch_norm_backward_elemt_cuda, const Tensor&, const Tensor&, const Tensor&,
              const Tensor&, const Tensor&, const Tensor&, const Tensor&, double, const Tensor&)
EMBER_NO_CUDA(gather_cuda, const Tensor&, int64_t, const Tensor&, const Tensor&)
EMBER_NO_CUDA(scatter_cuda, const Tensor&, int64_t, const Tensor&, const Tensor&, ScatterReduce)
EMBER_NO_CUDA(random_cuda, const Tensor&, const RandomParams&)
EMBER_NO_CUDA(sort_cuda, const Tensor&, bool, bool, const Tensor&, const Tensor&)
EMBER_NO_CUDA(scan_cuda, ScanOp, const Tensor&, const Tensor&)
EMBER_NO_CUDA(lstm_cell_cuda, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
              const Tensor&, const Tensor&)
EMBER_NO_CUDA(lstm_cell_backward_cuda, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
              const Tensor&, const Tensor&, const Tensor&)
EMBER_NO_CUDA(gru_cell_cuda, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
              const Tensor&)
EMBER_NO_CUDA(gru_cell_backward_cuda, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
              const Tensor&, const Tensor&, const Tensor&, const Tensor&)
EMBER_NO_CUDA(rnn_cell_cuda, const Tensor&, const Tensor&, const Tensor&, bool, const Tensor&)
EMBER_NO_CUDA(rnn_cell_backward_cuda, const Tensor&, const Tensor&, const Tensor&, bool,
              const Tensor&)
EMBER_NO_CUDA(attention_cuda, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
              const AttentionParams&, const Tensor&, const Tensor&)
EMBER_NO_CUDA(attention_backward_cuda, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
              const AttentionParams&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
              const Tensor&, const Tensor&)
EMBER_NO_CUDA(layer_norm_cuda, const Tensor&, const Tensor&, const Tensor&, double, const Tensor&,
              const Tensor&, const Tensor&)
EMBER_NO_CUDA(layer_norm_backward_cuda, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
              const Tensor&, const Tensor&, const Tensor&, const Tensor&)
EMBER_NO_CUDA(copy_between_devices_cuda, const Tensor&, const Tensor&, bool)
EMBER_NO_CUDA(record_stream_cuda, const Tensor&, uintptr_t)
Tensor pin_memory_cuda(const Tensor&) { cuda::not_built("pin_memory"); }
bool is_pinned_cuda(const Tensor&) { return false; }

}  // namespace ember
