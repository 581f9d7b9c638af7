// CUDA gather and scatter (assigning, or adding atomically): a thread per index element; the
// indexed operand's stride along `dim` is taken out of its geometry and added back from the index
// value. Out-of-range indices are recorded (kernel_errors.h) and skipped.
#include <cuda_runtime.h>

#include "ember/backend/cuda/atomics.cuh"
#include "ember/backend/cuda/kernel_errors.h"
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/index_layout.h"
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

enum class Mode { Gather, Scatter, ScatterAdd, ScatterReduce };

constexpr const char* mode_name(Mode m) {
  return m == Mode::Gather         ? "gather"
         : m == Mode::Scatter      ? "scatter"
         : m == Mode::ScatterAdd   ? "scatter_add"
                                   : "scatter_reduce";
}

// Gather (out, index, self along dim) or scatter (out along dim, index, src): see
// backend/index_layout.h. ScatterAdd adds atomically and ScatterReduce combines atomically (its
// `reduce`), as two indices may name one destination; a plain scatter to one destination from two
// indices leaves either value, as in PyTorch.
template <typename T, Mode kMode>
__global__ void index_kernel(int64_t n, cuda::OffsetCalculator<3> calc, cuda::Pointers<3> p,
                             int64_t step, int64_t size, int dim, ScatterReduce reduce,
                             cuda::KernelError* err) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[3];
    calc.offsets(i, off);
    int64_t idx = *reinterpret_cast<const int64_t*>(p.p[1] + off[1]);
    if (idx < -size || idx >= size) {
      report(err, mode_name(kMode), dim, idx, size);
      continue;
    }
    if (idx < 0) idx += size;
    if constexpr (kMode == Mode::ScatterAdd)
      cuda::atomic_add(reinterpret_cast<T*>(p.p[0] + off[0] + idx * step),
                       *reinterpret_cast<const T*>(p.p[2] + off[2]));
    else if constexpr (kMode == Mode::ScatterReduce)
      cuda::atomic_update(reinterpret_cast<T*>(p.p[0] + off[0] + idx * step),
                          *reinterpret_cast<const T*>(p.p[2] + off[2]),
                          [reduce](T a, T b) { return scatter_combine(reduce, a, b); });
    else if constexpr (kMode == Mode::Scatter)
      *reinterpret_cast<T*>(p.p[0] + off[0] + idx * step) =
          *reinterpret_cast<const T*>(p.p[2] + off[2]);
    else
      *reinterpret_cast<T*>(p.p[0] + off[0]) =
          *reinterpret_cast<const T*>(p.p[2] + off[2] + idx * step);
  }
}

template <typename T, Mode kMode>
void launch(const IndexIteration& g, int64_t dim, int device,
            ScatterReduce reduce = ScatterReduce::Assign) {
  const TensorIter& it = g.it;
  cuda::LaunchScope launch(device);
  cuda::Pointers<3> p;
  for (int k = 0; k < 3; ++k) p.p[k] = it.data[k];
  index_kernel<T, kMode>
      <<<cuda::grid_for(it.numel, cuda::kThreads), cuda::kThreads, 0, launch.stream>>>(
          it.numel, cuda::OffsetCalculator<3>(it), p, g.step, g.size, static_cast<int>(dim),
          reduce, cuda::kernel_error_slot(device));
  EMBER_CUDA_LAUNCH_CHECK(mode_name(kMode));
}

}  // namespace

void gather_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  if (out.numel() == 0) return;
  IndexIteration g = gather_iteration(self, dim, index, out);
  dispatch_all(self.dtype(), "gather", [&](auto tag) {
    launch<EMBER_TYPE(tag), Mode::Gather>(g, dim, self.device().index());
  });
}

void scatter_cuda(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src,
                  ScatterReduce reduce) {
  if (index.numel() == 0) return;
  IndexIteration g = scatter_iteration(out, dim, index, src);
  int device = out.device().index();
  if (reduce == ScatterReduce::Assign) {
    dispatch_all(out.dtype(), "scatter",
                 [&](auto tag) { launch<EMBER_TYPE(tag), Mode::Scatter>(g, dim, device); });
  } else if (reduce == ScatterReduce::Sum && out.dtype() != kBool) {
    dispatch_numeric(out.dtype(), "scatter_add",
                     [&](auto tag) { launch<EMBER_TYPE(tag), Mode::ScatterAdd>(g, dim, device); });
  } else {
    dispatch_all(out.dtype(), "scatter_reduce", [&](auto tag) {
      launch<EMBER_TYPE(tag), Mode::ScatterReduce>(g, dim, device, reduce);
    });
  }
}

}  // namespace ember
