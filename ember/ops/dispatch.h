// Device dispatch and the argument checks every op shares.
#pragma once

#include <initializer_list>

#include "ember/backend/kernels.h"
#include "ember/core/tensor.h"

namespace ember {

/// Calls kernel_cpu(...) or kernel_cuda(...) by the device.
#define EMBER_DISPATCH_DEVICE(device, kernel, ...) \
  ((device).is_cuda() ? kernel##_cuda(__VA_ARGS__) : kernel##_cpu(__VA_ARGS__))

/// Throws unless every defined tensor is on the same device (the message names both devices).
void check_same_device(const char* op, std::initializer_list<const Tensor*> tensors);

/// Throws when `out` has elements that share memory (a dim of stride 0: an expanded tensor), which
/// an in-place op or a copy would write more than once, or when an input partly overlaps `out`
/// (x[1:].copy_(x[:-1]) would read values it already overwrote). Like PyTorch, the partial check
/// compares the memory ranges of contiguous tensors; an input that is `out` itself is fine.
void check_no_overlap(const char* op, const Tensor& out,
                      std::initializer_list<const Tensor*> inputs = {});

/// Throws unless `t` is defined.
void check_defined(const char* op, const Tensor& t, const char* name = "input");

/// Category rules of PyTorch's result_type: dimensioned tensors decide over zero-dim ones and
/// scalars of the same category (int8 tensor + int64 scalar stays int8; int tensor + 2.5 is float).
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);

}  // namespace ember
