// CUDA random fill: element i is random_value(p, i), the same Philox stream the CPU draws from.
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

template <typename T>
__global__ void random_kernel(T* out, int64_t n, RandomParams p) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = static_cast<T>(static_cast<opmath_t<T>>(random_value(p, static_cast<uint64_t>(i))));
}

}  // namespace

void random_cuda(const Tensor& out, const RandomParams& p) {
  EMBER_ASSERT(out.is_contiguous(), "random_cuda expects a contiguous tensor");
  if (out.numel() == 0) return;
  cuda::LaunchScope launch(out.device().index());
  dispatch_all(out.dtype(), "random", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    random_kernel<T>
        <<<cuda::grid_for(out.numel(), cuda::kThreads), cuda::kThreads, 0, launch.stream>>>(
            static_cast<T*>(out.data_ptr()), out.numel(), p);
    EMBER_CUDA_LAUNCH_CHECK("random_kernel");
  });
}

}  // namespace ember
