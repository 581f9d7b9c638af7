// CUDA binary and ternary ops and where: the tables of backend/functors/ through the shared
// expansion.
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/expand.h"
#include "ember/backend/kernels.h"

namespace ember {

void binary_cuda(BinaryOp op, const TensorIter& it, const BinaryParams& p) {
  expand_binary<cuda::Launcher>(op, it, p);
}
void binary_scalar_cuda(BinaryOp op, const TensorIter& it, Scalar b, const BinaryParams& p) {
  expand_binary_scalar<cuda::Launcher>(op, it, b, p);
}
void ternary_cuda(TernaryOp op, const TensorIter& it, const TernaryParams& p) {
  expand_ternary<cuda::Launcher>(op, it, p);
}
void where_cuda(const TensorIter& it) { expand_where<cuda::Launcher>(it); }

}  // namespace ember
