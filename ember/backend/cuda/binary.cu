// CUDA binary ops: the table of backend/functors/binary.h through the shared expansion.
// Tensor-scalar and ternary ops have files of their own: each expansion instantiates every op
// for every dtype, and one file for all of them was the longest compile of the library.
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/expand.h"
#include "ember/backend/kernels.h"

namespace ember {

void binary_cuda(BinaryOp op, const TensorIter& it, const BinaryParams& p) {
  expand_binary<cuda::Launcher>(op, it, p);
}

}  // namespace ember
