// CPU binary ops with a scalar right operand (binary.cpp says why a file of their own).
#include "ember/backend/cpu/loops.h"
#include "ember/backend/functors/expand.h"
#include "ember/backend/kernels.h"

namespace ember {

void binary_scalar_cpu(BinaryOp op, const TensorIter& it, Scalar b, const BinaryParams& p) {
  expand_binary_scalar<cpu::Launcher>(op, it, b, p);
}

}  // namespace ember
