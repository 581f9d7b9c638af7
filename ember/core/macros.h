// Macros shared by host and device code: the same headers are compiled by g++ and nvcc.
#pragma once

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#define EMBER_DEVICE __device__
#else
#define EMBER_HOST_DEVICE
#define EMBER_DEVICE
#endif

#define EMBER_FORCE_INLINE inline __attribute__((always_inline))
#define EMBER_LIKELY(x) __builtin_expect(!!(x), 1)
#define EMBER_UNLIKELY(x) __builtin_expect(!!(x), 0)
