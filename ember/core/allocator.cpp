#include "ember/core/allocator.h"

#include "ember/core/device_backend.h"

namespace ember {

Allocator& get_allocator(Device device) {
  return device_backend(device.type()).allocator(device.index());
}

}  // namespace ember
