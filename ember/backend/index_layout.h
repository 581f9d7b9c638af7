// How both backends run gather and scatter_add: one iteration over the index tensor's shape with
// operands (written, index, read). The tensor indexed along `dim` is seen with stride 0 there; each
// element adds index * step bytes back, so the index decides the offset.
#pragma once

#include <type_traits>

#include "ember/backend/kernels.h"
#include "ember/backend/tensor_iter.h"
#include "ember/core/macros.h"

namespace ember {

struct IndexIteration {
  TensorIter it;
  int64_t step;  // bytes between neighbours along dim of the indexed tensor
  int64_t size;  // its size along dim: the valid indices are [-size, size)
};

namespace detail {
// `t` with index's sizes and the given strides.
inline Tensor seen_as(const Tensor& t, const Tensor& index, Shape strides) {
  return Tensor(std::make_shared<TensorImpl>(t.storage(), index.sizes(), std::move(strides),
                                             t.storage_offset(), t.dtype(), t.device()));
}
inline Tensor indexed_along(const Tensor& t, int64_t dim, const Tensor& index) {
  Shape strides = t.strides();
  strides[static_cast<size_t>(dim)] = 0;
  return seen_as(t, index, std::move(strides));
}
inline int64_t step_along(const Tensor& t, int64_t dim) {
  return t.stride(dim) * static_cast<int64_t>(t.element_size());
}
}  // namespace detail

/// out[i] = self[i with index[i] on dim]: operands (out, index, self indexed along dim).
inline IndexIteration gather_iteration(const Tensor& self, int64_t dim, const Tensor& index,
                                       const Tensor& out) {
  return {TensorIter(out, {index, detail::indexed_along(self, dim, index)}),
          detail::step_along(self, dim), self.size(dim)};
}

/// out[i with index[i] on dim] += src[i]: operands (out indexed along dim, index, src).
inline IndexIteration scatter_iteration(const Tensor& out, int64_t dim, const Tensor& index,
                                        const Tensor& src) {
  return {TensorIter(detail::indexed_along(out, dim, index),
                     {index, detail::seen_as(src, index, src.strides())}),
          detail::step_along(out, dim), out.size(dim)};
}

/// What scatter leaves at a destination holding `dst` when `v` arrives (see ScatterReduce), in
/// opmath (bool: Sum and Max are or, Prod and Min are and).
template <typename T>
EMBER_HOST_DEVICE inline T scatter_combine(ScatterReduce r, T dst, T v) {
  if constexpr (std::is_same_v<T, bool>) {
    if (r == ScatterReduce::Sum || r == ScatterReduce::Max) return dst || v;
    if (r == ScatterReduce::Prod || r == ScatterReduce::Min) return dst && v;
    return v;
  } else if constexpr (is_complex_v<T>) {  // no order: ops/ refuses amax and amin of complex
    return r == ScatterReduce::Sum ? dst + v : r == ScatterReduce::Prod ? dst * v : v;
  } else {
    using A = opmath_t<T>;
    A a = static_cast<A>(dst), b = static_cast<A>(v);
    switch (r) {
      case ScatterReduce::Sum:
        return static_cast<T>(a + b);
      case ScatterReduce::Prod:
        return static_cast<T>(a * b);
      case ScatterReduce::Max:
        return a != a ? dst : (b != b || a < b) ? v : dst;  // NaN != NaN
      case ScatterReduce::Min:
        return a != a ? dst : (b != b || b < a) ? v : dst;
      default:
        return v;
    }
  }
}

}  // namespace ember
