// CUDA binary and ternary ops and where: the tables of backend/functors/binary.h expanded over
// dtypes into the kernels of loops.cuh, exactly as backend/cpu/ does.
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/kind_dispatch.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

template <template <typename> class Fn, OpKind kind>
void run_binary(const TensorIter& it, const BinaryParams& p, const char* name) {
  dispatch_kind<kind>(it.dtypes[1], name, [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using F = Fn<opmath_t<T>>;
    cuda::gpu_kernel<binary_result_t<F, T>, T, T>(it, F(p));
  });
}

template <template <typename> class Fn, OpKind kind>
void run_binary_scalar(const TensorIter& it, Scalar b, const BinaryParams& p, const char* name) {
  dispatch_kind<kind>(it.dtypes[1], name, [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using M = opmath_t<T>;
    using F = Fn<M>;
    cuda::gpu_kernel<binary_result_t<F, T>, T>(it, BindRight<F, M>{F(p), b.to<M>()});
  });
}

template <template <typename> class Fn>
void run_ternary(const TensorIter& it, const TernaryParams& p, const char* name) {
  dispatch_floating(it.dtypes[1], name, [&](auto tag) {
    using T = EMBER_TYPE(tag);
    cuda::gpu_kernel<T, T, T, T>(it, Fn<opmath_t<T>>(p));
  });
}

}  // namespace

void binary_cuda(BinaryOp op, const TensorIter& it, const BinaryParams& p) {
  switch (op) {
#define EMBER_CASE(name, fn, kind) \
  case BinaryOp::name:             \
    return run_binary<fn, OpKind::kind>(it, p, #name);
    EMBER_BINARY_OPS(EMBER_CASE)
#undef EMBER_CASE
  }
}

void binary_scalar_cuda(BinaryOp op, const TensorIter& it, Scalar b, const BinaryParams& p) {
  switch (op) {
#define EMBER_CASE(name, fn, kind) \
  case BinaryOp::name:             \
    return run_binary_scalar<fn, OpKind::kind>(it, b, p, #name);
    EMBER_BINARY_OPS(EMBER_CASE)
#undef EMBER_CASE
  }
}

void ternary_cuda(TernaryOp op, const TensorIter& it, const TernaryParams& p) {
  switch (op) {
#define EMBER_CASE(name, fn, kind) \
  case TernaryOp::name:            \
    return run_ternary<fn>(it, p, #name);
    EMBER_TERNARY_OPS(EMBER_CASE)
#undef EMBER_CASE
  }
}

void where_cuda(const TensorIter& it) {
  dispatch_all(it.dtypes[2], "where", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    cuda::gpu_kernel<T, bool, T, T>(it, WhereFn<opmath_t<T>>{});
  });
}

}  // namespace ember
