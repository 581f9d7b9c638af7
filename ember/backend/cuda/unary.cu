// CUDA unary ops and fill: the tables of backend/functors/ through the shared expansion.
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/expand.h"
#include "ember/backend/kernels.h"

namespace ember {

void unary_cuda(UnaryOp op, const TensorIter& it, const UnaryParams& p) {
  expand_unary<cuda::Launcher>(op, it, p);
}
void fill_cuda(const TensorIter& it, Scalar v) { expand_fill<cuda::Launcher>(it, v); }

}  // namespace ember
