// Human-readable views of a caching allocator's state: byte counts ("1.50 GiB") and the table
// torch.cuda.memory_summary prints.
#pragma once

#include <cstddef>
#include <string>

#include "ember/core/caching_allocator.h"

namespace ember {

/// "1.50 GiB", "512 B".
std::string format_bytes(size_t bytes);

/// A readable table of `stats` (torch.cuda.memory_summary).
std::string memory_summary(const MemoryStats& stats, const Device& device);

}  // namespace ember
