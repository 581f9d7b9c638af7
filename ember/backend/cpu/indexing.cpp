// CPU gather and scatter (assigning or adding): an iteration over the index tensor, with the
// indexed operand's stride along `dim` taken out of its geometry and added back from each index
// value.
#include <cstring>

#include "ember/backend/cpu/loops.h"
#include "ember/backend/index_layout.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

[[noreturn]] void out_of_range(const char* op, int64_t idx, int64_t dim, int64_t size) {
  detail::throw_index_error(detail::str_cat(
      "[", op, "] index ", idx, " is out of bounds for dimension ", dim, " with size ", size));
}

}  // namespace

void gather_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  if (out.numel() == 0) return;
  IndexIteration g = gather_iteration(self, dim, index, out);
  const TensorIter& it = g.it;
  int64_t size = g.size, step = g.step;
  size_t item = self.element_size();
  parallel_for(0, it.numel, kGrainSize, [&](int64_t b, int64_t e) {
    cpu::for_each_run(it, b, e, [&](char** ptrs, const int64_t* strides, int64_t n) {
      auto item_stride = static_cast<int64_t>(item);
      if (strides[1] == 0 && strides[0] == item_stride && strides[2] == item_stride) {
        // One index for a contiguous run (index_select, embedding): a row copy.
        int64_t idx = *reinterpret_cast<const int64_t*>(ptrs[1]);
        if (idx < -size || idx >= size) out_of_range("gather", idx, dim, size);
        if (idx < 0) idx += size;
        std::memcpy(ptrs[0], ptrs[2] + idx * step, static_cast<size_t>(n) * item);
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        int64_t idx = *reinterpret_cast<const int64_t*>(ptrs[1] + i * strides[1]);
        if (idx < -size || idx >= size) out_of_range("gather", idx, dim, size);
        if (idx < 0) idx += size;
        std::memcpy(ptrs[0] + i * strides[0], ptrs[2] + i * strides[2] + idx * step, item);
      }
    });
  });
}

void scatter_cpu(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src,
                 ScatterReduce reduce) {
  if (index.numel() == 0) return;
  IndexIteration s = scatter_iteration(out, dim, index, src);
  const TensorIter& it = s.it;
  int64_t size = s.size, step = s.step;
  const char* op = reduce == ScatterReduce::Assign ? "scatter"
                   : reduce == ScatterReduce::Sum  ? "scatter_add"
                                                   : "scatter_reduce";
  // Serial: two index entries may name the same destination (the last one wins a plain scatter).
  dispatch_all_and_complex(out.dtype(), op, [&](auto tag) {
    using T = EMBER_TYPE(tag);
    cpu::for_each_run(it, 0, it.numel, [&](char** ptrs, const int64_t* strides, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t idx = *reinterpret_cast<const int64_t*>(ptrs[1] + i * strides[1]);
        if (idx < -size || idx >= size) out_of_range(op, idx, dim, size);
        if (idx < 0) idx += size;
        T* d = reinterpret_cast<T*>(ptrs[0] + i * strides[0] + idx * step);
        *d = scatter_combine(reduce, *d, *reinterpret_cast<const T*>(ptrs[2] + i * strides[2]));
      }
    });
  });
}

}  // namespace ember
