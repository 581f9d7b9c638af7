// CPU binary and ternary ops and where: the tables of backend/functors/ through the shared
// expansion.
#include "ember/backend/cpu/loops.h"
#include "ember/backend/functors/expand.h"
#include "ember/backend/kernels.h"

namespace ember {

void binary_cpu(BinaryOp op, const TensorIter& it, const BinaryParams& p) {
  expand_binary<cpu::Launcher>(op, it, p);
}
void binary_scalar_cpu(BinaryOp op, const TensorIter& it, Scalar b, const BinaryParams& p) {
  expand_binary_scalar<cpu::Launcher>(op, it, b, p);
}
void ternary_cpu(TernaryOp op, const TensorIter& it, const TernaryParams& p) {
  expand_ternary<cpu::Launcher>(op, it, p);
}
void where_cpu(const TensorIter& it) { expand_where<cpu::Launcher>(it); }

}  // namespace ember
