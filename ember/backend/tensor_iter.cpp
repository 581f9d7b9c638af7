#include "ember/backend/tensor_iter.h"

#include <algorithm>

namespace ember {

TensorIter::TensorIter(const Tensor& out, std::initializer_list<Tensor> inputs) {
  ntensors = 1 + static_cast<int>(inputs.size());
  EMBER_ASSERT(ntensors <= kMaxOperands, "too many operands: ", ntensors);
  int64_t nd = out.dim();
  EMBER_CHECK(nd <= kMaxDims, "[elementwise] at most ", kMaxDims, " dimensions are supported, got ",
              nd);
  device = out.device();
  numel = out.numel();
  const Tensor* ops[kMaxOperands];
  ops[0] = &out;
  int k = 1;
  for (const Tensor& t : inputs) ops[k++] = &t;

  // Innermost-first sizes and byte strides, broadcast against out.
  int64_t full_sizes[kMaxDims];
  int64_t full_strides[kMaxOperands][kMaxDims];
  for (int64_t d = 0; d < nd; ++d) full_sizes[d] = out.sizes()[static_cast<size_t>(nd - 1 - d)];
  for (int i = 0; i < ntensors; ++i) {
    const Tensor& t = *ops[i];
    data[i] = static_cast<char*>(t.data_ptr());
    dtypes[i] = t.dtype();
    int64_t item = static_cast<int64_t>(t.element_size());
    int64_t tnd = t.dim();
    for (int64_t d = 0; d < nd; ++d) {
      if (d < tnd) {
        size_t td = static_cast<size_t>(tnd - 1 - d);
        full_strides[i][d] = t.sizes()[td] == 1 ? 0 : t.strides()[td] * item;
      } else {
        full_strides[i][d] = 0;
      }
    }
  }

  // Drop size-1 dims and merge dim d into the previous kept one where all operands allow it.
  ndim = 0;
  for (int64_t d = 0; d < nd; ++d) {
    int64_t size = full_sizes[d];
    if (size == 1) continue;
    if (ndim > 0) {
      bool mergeable = true;
      for (int i = 0; i < ntensors && mergeable; ++i)
        mergeable = full_strides[i][d] == strides[i][ndim - 1] * sizes[ndim - 1];
      if (mergeable) {
        sizes[ndim - 1] *= size;
        continue;
      }
    }
    sizes[ndim] = size;
    for (int i = 0; i < ntensors; ++i) strides[i][ndim] = full_strides[i][d];
    ++ndim;
  }
  if (ndim == 0) {  // a single element
    ndim = 1;
    sizes[0] = numel == 0 ? 0 : 1;
    for (int i = 0; i < ntensors; ++i) strides[i][0] = static_cast<int64_t>(itemsize(dtypes[i]));
  }
  if (numel == 0) {
    ndim = 1;
    sizes[0] = 0;
  }
}

bool TensorIter::is_contiguous() const {
  if (ndim != 1) return false;
  for (int i = 0; i < ntensors; ++i)
    if (strides[i][0] != static_cast<int64_t>(itemsize(dtypes[i]))) return false;
  return true;
}

bool TensorIter::is_scalar(int i) const {
  for (int d = 0; d < ndim; ++d)
    if (strides[i][d] != 0 && sizes[d] != 1) return false;
  return true;
}

}  // namespace ember
