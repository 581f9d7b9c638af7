// CUDA gather and scatter_add: a thread per index element; the indexed operand's stride along
// `dim` is taken out of its geometry and added back from the index value. Out-of-range indices
// are recorded (kernel_errors.h) and skipped.
#include <cuda_runtime.h>

#include "ember/backend/cuda/atomics.cuh"
#include "ember/backend/cuda/kernel_errors.h"
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

__device__ void report(cuda::KernelError* err, const char* op, int dim, int64_t index,
                       int64_t size) {
  if (atomicCAS(&err->code, 0, 1) == 0) {
    err->dim = dim;
    err->index = index;
    err->size = size;
    for (int i = 0; i < 23 && op[i]; ++i) err->op[i] = op[i];
  }
}

// Operands: 0 out (index's shape), 1 index, 2 source seen with index's shape and stride 0 on dim.
template <typename T>
__global__ void gather_kernel(int64_t n, cuda::OffsetCalculator<3> calc, cuda::Pointers<3> p,
                              int64_t step, int64_t size, int dim, cuda::KernelError* err) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[3];
    calc.offsets(i, off);
    int64_t idx = *reinterpret_cast<const int64_t*>(p.p[1] + off[1]);
    if (idx < -size || idx >= size) {
      report(err, "gather", dim, idx, size);
      continue;
    }
    if (idx < 0) idx += size;
    *reinterpret_cast<T*>(p.p[0] + off[0]) =
        *reinterpret_cast<const T*>(p.p[2] + off[2] + idx * step);
  }
}

// Operands: 0 destination seen with index's shape and stride 0 on dim, 1 index, 2 source.
template <typename T>
__global__ void scatter_add_kernel(int64_t n, cuda::OffsetCalculator<3> calc, cuda::Pointers<3> p,
                                   int64_t step, int64_t size, int dim, cuda::KernelError* err) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[3];
    calc.offsets(i, off);
    int64_t idx = *reinterpret_cast<const int64_t*>(p.p[1] + off[1]);
    if (idx < -size || idx >= size) {
      report(err, "scatter_add", dim, idx, size);
      continue;
    }
    if (idx < 0) idx += size;
    cuda::atomic_add(reinterpret_cast<T*>(p.p[0] + off[0] + idx * step),
                     *reinterpret_cast<const T*>(p.p[2] + off[2]));
  }
}

Tensor view_as_index(const Tensor& t, const Tensor& index, Shape strides) {
  return Tensor(std::make_shared<TensorImpl>(t.storage(), index.sizes(), std::move(strides),
                                             t.storage_offset(), t.dtype(), t.device()));
}

Tensor restride(const Tensor& t, int64_t dim, const Tensor& index) {
  Shape strides = t.strides();
  strides[static_cast<size_t>(dim)] = 0;
  return view_as_index(t, index, strides);
}

template <int N>
cuda::Pointers<N> pointers(const TensorIter& it) {
  cuda::Pointers<N> p;
  for (int k = 0; k < N; ++k) p.p[k] = it.data[k];
  return p;
}

}  // namespace

void gather_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  if (out.numel() == 0) return;
  TensorIter it(out, {index, restride(self, dim, index)});
  int device = self.device().index();
  int64_t step = self.stride(dim) * static_cast<int64_t>(self.element_size());
  dispatch_all(self.dtype(), "gather", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    gather_kernel<T>
        <<<cuda::grid_for(it.numel, cuda::kThreads), cuda::kThreads, 0, cuda::raw_stream(device)>>>(
            it.numel, cuda::OffsetCalculator<3>(it), pointers<3>(it), step, self.size(dim),
            static_cast<int>(dim), cuda::kernel_error_slot(device));
    EMBER_CUDA_LAUNCH_CHECK("gather");
  });
}

void scatter_add_cuda(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  if (index.numel() == 0) return;
  Tensor dst = restride(out, dim, index);
  TensorIter it(dst, {index, view_as_index(src, index, src.strides())});
  int device = out.device().index();
  int64_t step = out.stride(dim) * static_cast<int64_t>(out.element_size());
  dispatch_numeric(out.dtype(), "scatter_add", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    scatter_add_kernel<T>
        <<<cuda::grid_for(it.numel, cuda::kThreads), cuda::kThreads, 0, cuda::raw_stream(device)>>>(
            it.numel, cuda::OffsetCalculator<3>(it), pointers<3>(it), step, out.size(dim),
            static_cast<int>(dim), cuda::kernel_error_slot(device));
    EMBER_CUDA_LAUNCH_CHECK("scatter_add");
  });
}

}  // namespace ember
