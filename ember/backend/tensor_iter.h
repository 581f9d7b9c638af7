// The iteration space of an elementwise op, shared by the CPU loops and the CUDA kernels: the
// output's shape, each operand's byte strides broadcast against it (0 along broadcast dims), and
// dims merged wherever every operand is contiguous across them. Dims are stored innermost first.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "ember/core/tensor.h"

namespace ember {

struct TensorIter {
  static constexpr int kMaxDims = 16;
  static constexpr int kMaxOperands = 4;

  /// Operand 0 is `out`; inputs must broadcast to out's shape (ops/ has checked devices and
  /// shapes).
  TensorIter(const Tensor& out, std::initializer_list<Tensor> inputs);
  /// An empty one, for loops that fill in their own operands (backend/cpu/fused.cpp).
  TensorIter() = default;

  int ndim = 0;
  int ntensors = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims];                  // innermost first
  int64_t strides[kMaxOperands][kMaxDims];  // bytes
  char* data[kMaxOperands];
  DType dtypes[kMaxOperands];
  Device device{DeviceType::CPU, 0};

  /// Every operand dense along one merged dimension.
  bool is_contiguous() const;
  /// Operand `i` has the same element at every position (stride 0 everywhere).
  bool is_scalar(int i) const;
};

}  // namespace ember
