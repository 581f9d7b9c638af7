// CPU unary ops: the table of backend/functors/unary.h expanded over dtypes.
#include "ember/backend/cpu/loops.h"
#include "ember/backend/functors/kind_dispatch.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

template <template <typename> class Fn, OpKind kind>
void run_unary(const TensorIter& it, const UnaryParams& p, const char* name) {
  dispatch_kind<kind>(it.dtypes[1], name, [&](auto tag) {
    using T = EMBER_TYPE(tag);
    cpu::cpu_kernel<T, T>(it, Fn<opmath_t<T>>(p));
  });
}

}  // namespace

void unary_cpu(UnaryOp op, const TensorIter& it, const UnaryParams& p) {
  switch (op) {
#define EMBER_CASE(name, fn, kind) \
  case UnaryOp::name:              \
    return run_unary<fn, OpKind::kind>(it, p, #name);
    EMBER_UNARY_OPS(EMBER_CASE)
#undef EMBER_CASE
  }
}

void fill_cpu(const TensorIter& it, Scalar v) {
  dispatch_all(it.dtypes[0], "fill_", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    cpu::cpu_kernel<T>(it, FillFn<opmath_t<T>>{v.to<opmath_t<T>>()});
  });
}

}  // namespace ember
