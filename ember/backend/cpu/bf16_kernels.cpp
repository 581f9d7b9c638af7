#include "ember/backend/cpu/bf16_kernels.h"

#include <atomic>

#if defined(EMBER_WITH_DNNL)
#include <oneapi/dnnl/dnnl.h>
#endif

namespace ember::cpu {
namespace {

std::atomic<bool> enabled{true};

bool cpu_has_bf16() {
#if defined(EMBER_WITH_DNNL)
  // oneDNN's own detection; AVX512-BF16 and every AMX level include bfloat16 dot products.
  static const bool has = [] {
    unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
    unsigned bf16 = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_bf16);
    return (isa & bf16) == bf16;
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace

bool have_bf16_kernels() { return enabled.load(std::memory_order_relaxed) && cpu_has_bf16(); }
void set_bf16_kernels_enabled(bool e) { enabled.store(e, std::memory_order_relaxed); }

}  // namespace ember::cpu
