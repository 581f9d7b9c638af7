// torch.cuda's device API (device.h): discovery's answers, properties, the current device.
#include "ember/backend/cuda/device.h"

#include <cstdio>
#include <cstdlib>

#include "ember/backend/cuda/cuda_backend.h"
#include "ember/backend/cuda/runtime.h"

namespace ember::cuda {

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
              "' after CUDA started; "
              "the change cannot take effect in this process (set it before the program starts)");
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
  if (device.is_cuda()) previous_ = exchange_device(check_index(device.index(), "DeviceGuard"));
}
DeviceGuard::~DeviceGuard() { restore_device(previous_); }

}  // namespace ember::cuda
