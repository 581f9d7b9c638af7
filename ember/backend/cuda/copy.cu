// CUDA copies within a device: a memcpy when layouts and dtypes agree, else the conversion kernel
// of the shared op tables.
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/expand.h"
#include "ember/backend/kernels.h"

namespace ember {

void copy_cuda(const TensorIter& it) {
  if (it.numel == 0) return;
  if (it.dtypes[0] == it.dtypes[1] && it.is_contiguous()) {
    cuda::LaunchScope launch(it.device.index());
    EMBER_CUDA_CHECK(cudaMemcpyAsync(it.data[0], it.data[1],
                                     static_cast<size_t>(it.numel) * itemsize(it.dtypes[0]),
                                     cudaMemcpyDeviceToDevice, launch.stream));
    return;
  }
  expand_copy<cuda::Launcher>(it);
}

}  // namespace ember
