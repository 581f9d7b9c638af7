// torch.cuda's memory API over the per-device caching allocator (core/caching_allocator.h), and
// the switches PyTorch users know: TF32 for matmul.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ember/core/caching_allocator.h"

namespace ember::cuda {

/// Bytes in live tensors / held by the cache on `device` (the current one when -1). As in PyTorch,
/// allocated bytes include cuBLAS's workspaces: 32 MiB per stream that has run a matmul.
size_t memory_allocated(int device = -1);
size_t max_memory_allocated(int device = -1);
size_t memory_reserved(int device = -1);
/// The older name of memory_reserved that the guides use.
size_t memory_cached(int device = -1);
size_t max_memory_reserved(int device = -1);
void reset_peak_memory_stats(int device = -1);
std::map<std::string, int64_t> memory_stats(int device = -1);
std::vector<SegmentInfo> memory_snapshot(int device = -1);
std::string memory_summary(int device = -1);
/// Returns cached, unused memory to the driver (other processes can then use it).
void empty_cache();
/// Caps what this process may reserve on `device` to `fraction` of its memory.
void set_per_process_memory_fraction(double fraction, int device = -1);

/// torch.backends.cuda.matmul.allow_tf32: float32 matmuls may use TF32 tensor cores (off by
/// default).
void set_allow_tf32(bool allow);
bool allow_tf32();

}  // namespace ember::cuda
