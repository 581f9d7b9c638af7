// DLPack (https://dmlc.github.io/dlpack/), the tensor exchange format NumPy, PyTorch, JAX and
// CuPy share: a tensor handed over this way shares its memory, nothing is copied. Only
// core/dlpack.cpp includes dlpack.h.
#pragma once

#include "ember/core/tensor.h"

struct DLManagedTensor;

namespace ember {

/// A DLPack tensor sharing t's memory (a virtual CPU device exports as the CPU). The caller owns
/// the result and must call its deleter; t's storage lives until then. bool exports as uint8, as
/// DLPack 0.6 has no bool (PyTorch 1.13 does the same).
DLManagedTensor* to_dlpack(const Tensor& t);

/// A tensor over a DLPack tensor's memory, taking ownership of `src`: its deleter runs when the
/// last tensor using the memory is gone. Unsupported devices or dtypes are an error that leaves
/// `src` to the caller.
Tensor from_dlpack(DLManagedTensor* src);

/// (DLDeviceType, device id) of t as DLPack names it: (1, 0) for the CPU, (2, i) for cuda:i.
std::pair<int, int> dlpack_device(const Tensor& t);

}  // namespace ember
