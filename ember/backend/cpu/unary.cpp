// CPU unary ops and fill: the tables of backend/functors/ through the shared expansion.
#include "ember/backend/cpu/loops.h"
#include "ember/backend/functors/expand.h"
#include "ember/backend/kernels.h"

namespace ember {

void unary_cpu(UnaryOp op, const TensorIter& it, const UnaryParams& p) {
  expand_unary<cpu::Launcher>(op, it, p);
}
void fill_cpu(const TensorIter& it, Scalar v) { expand_fill<cpu::Launcher>(it, v); }

}  // namespace ember
