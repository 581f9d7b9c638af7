// The one place that knows every backend: core asks here for a device type's backend.
#include "ember/backend/cpu/cpu_device.h"
#include "ember/backend/cuda/cuda_backend.h"
#include "ember/core/device_backend.h"
#include "ember/core/error.h"

namespace ember {

DeviceBackend& device_backend(DeviceType type) {
  switch (type) {
    case DeviceType::CPU:
      return cpu::backend();
    case DeviceType::CUDA:
      return cuda::backend();
  }
  EMBER_FAIL("[device] unknown device type ", static_cast<int>(type));
}

}  // namespace ember
