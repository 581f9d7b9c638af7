// Whether the CPU's bfloat16 instructions do bfloat16 work (matrix products and convolutions
// through oneDNN): ember was built with oneDNN and the CPU has AVX512-BF16 or AMX. Without them,
// bfloat16 products and convolutions run in float32 and round once at the end.
#pragma once

namespace ember::cpu {

/// Built with oneDNN, the CPU has bfloat16 dot products, and the kernels are not switched off.
bool have_bf16_kernels();
/// Switches the bfloat16 kernels off or back on (tests compare the two paths).
void set_bf16_kernels_enabled(bool enabled);

}  // namespace ember::cpu
