// The CPU as ember devices: EMBER_CPU_DEVICES=N gives cpu:0 ... cpu:N-1 (default 1), each with its
// own caching allocator, statistics and optional capacity (EMBER_CPU_MEMORY_LIMIT, e.g. 256MiB).
// Multi-device code (DataParallel, DDP, the allocator) is tested this way on machines without GPUs.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "ember/core/device_backend.h"

namespace ember::cpu {

/// Number of virtual CPU devices (read once from EMBER_CPU_DEVICES).
int device_count();

/// Parses "256MiB", "1.5GB", "4096" (bytes); throws naming `what` on anything else.
size_t parse_bytes(const std::string& text, const char* what);

/// The per-device capacity, if EMBER_CPU_MEMORY_LIMIT is set.
std::optional<size_t> memory_limit();

DeviceBackend& backend();

/// The instruction set ember's CPU kernels were compiled for ("AVX-512", "AVX2", ...).
const char* compiled_simd();

}  // namespace ember::cpu
