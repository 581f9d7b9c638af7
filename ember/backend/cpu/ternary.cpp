// CPU ternary ops and where (binary.cpp says why a file of their own).
#include "ember/backend/cpu/loops.h"
#include "ember/backend/functors/expand.h"
#include "ember/backend/kernels.h"

namespace ember {

void ternary_cpu(TernaryOp op, const TensorIter& it, const TernaryParams& p) {
  expand_ternary<cpu::Launcher>(op, it, p);
}
void where_cpu(const TensorIter& it) { expand_where<cpu::Launcher>(it); }

}  // namespace ember
