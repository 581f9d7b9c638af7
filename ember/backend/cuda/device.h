// torch.cuda's device API: discovering, describing and choosing GPUs. Declared for every build;
// a build without CUDA answers "no devices" with the reason (backend/no_cuda/).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/device.h"

namespace ember::cuda {

struct DeviceProperties {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  size_t total_memory = 0;   // bytes
  int multi_processor_count = 0;
  int clock_rate_khz = 0;
  int memory_clock_rate_khz = 0;
  int memory_bus_width = 0;  // bits
  size_t l2_cache_size = 0;  // bytes
  std::string pci_bus_id;    // "0000:3b:00.0"
  std::string uuid;          // "GPU-..."
  int max_threads_per_block = 0;
  size_t shared_memory_per_block = 0;
};

/// Whether at least one CUDA device can be used.
bool is_available();
/// Devices visible to this process (0 on any CUDA error: no driver, no device, bad
/// CUDA_VISIBLE_DEVICES); unavailable_reason() keeps the error.
int device_count();
/// Why no device is usable ("" when one is).
std::string unavailable_reason();

int current_device();
void set_device(int device);
std::string get_device_name(int device = -1);
DeviceProperties get_device_properties(int device = -1);
/// (free, total) bytes on the device, as the driver reports them.
std::pair<size_t, size_t> mem_get_info(int device = -1);
bool can_device_access_peer(int device, int peer_device);
/// Versions as CUDA encodes them (12080 = 12.8); 0 when unknown.
int driver_version();
int runtime_version();
/// CUDA_VISIBLE_DEVICES as read when CUDA started ("" if unset). A later change of the variable
/// cannot take effect in this process; check_visible_devices_unchanged() reports one.
std::string visible_devices();
/// Throws if CUDA_VISIBLE_DEVICES now differs from what CUDA started with.
void check_visible_devices_unchanged();

/// Waits for all work on `device` (the current one by default).
void synchronize(int device = -1);

/// The d2l.ai helpers: cuda:i if it exists, else the CPU; every GPU, else the CPU.
Device try_gpu(int i = 0);
std::vector<Device> try_all_gpus();

/// Sets the current device for its scope and restores the previous one (no-op on the CPU).
class DeviceGuard {
 public:
  explicit DeviceGuard(Device device);
  explicit DeviceGuard(int index) : DeviceGuard(Device(kCUDA, index)) {}
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace ember::cuda
