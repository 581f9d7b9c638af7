#include "ember/backend/cpu/dnnl_util.h"

#if defined(EMBER_WITH_DNNL)

#include "ember/core/device_backend.h"

namespace ember::cpu::dnnl_util {

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

void* reserve(Buffer& buffer, size_t bytes) {
  buffer = device_backend(kCPU).allocator(0).allocate(bytes);
  return buffer.get();
}

}  // namespace ember::cpu::dnnl_util

#endif
