// CUDA binary ops with a scalar right operand (binary.cu says why a file of their own).
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/expand.h"
#include "ember/backend/kernels.h"

namespace ember {

void binary_scalar_cuda(BinaryOp op, const TensorIter& it, Scalar b, const BinaryParams& p) {
  expand_binary_scalar<cuda::Launcher>(op, it, b, p);
}

}  // namespace ember
