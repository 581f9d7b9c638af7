// CUDA ternary ops and where (binary.cu says why a file of their own).
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/expand.h"
#include "ember/backend/kernels.h"

namespace ember {

void ternary_cuda(TernaryOp op, const TensorIter& it, const TernaryParams& p) {
  expand_ternary<cuda::Launcher>(op, it, p);
}
void where_cuda(const TensorIter& it) { expand_where<cuda::Launcher>(it); }

}  // namespace ember
