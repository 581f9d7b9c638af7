// Copies and conversions: copy_, to(device, dtype), clone, contiguous, item, tolist.
#pragma once

#include <cstring>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

/// Converts (and moves) a tensor; differentiable.
Tensor to(const Tensor& t, Device device, DType dtype, bool non_blocking = false,
          bool copy = false);

template <typename T>
std::vector<T> Tensor::tolist() const {
  Tensor c = to(Device(DeviceType::CPU, 0), dtype_of<T>).contiguous();
  std::vector<T> out(static_cast<size_t>(c.numel()));
  if (!out.empty()) std::memcpy(out.data(), c.data_ptr(), out.size() * sizeof(T));
  return out;
}

}  // namespace ember
