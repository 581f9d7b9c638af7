// CUDA unary ops, fill and copies between dtypes: the tables of backend/functors/ expanded over
// dtypes into the kernels of loops.cuh, exactly as backend/cpu/ does.
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/kind_dispatch.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

template <template <typename> class Fn, OpKind kind>
void run_unary(const TensorIter& it, const UnaryParams& p, const char* name) {
  dispatch_kind<kind>(it.dtypes[1], name, [&](auto tag) {
    using T = EMBER_TYPE(tag);
    cuda::gpu_kernel<T, T>(it, Fn<opmath_t<T>>(p));
  });
}

}  // namespace

void unary_cuda(UnaryOp op, const TensorIter& it, const UnaryParams& p) {
  switch (op) {
#define EMBER_CASE(name, fn, kind) \
  case UnaryOp::name:              \
    return run_unary<fn, OpKind::kind>(it, p, #name);
    EMBER_UNARY_OPS(EMBER_CASE)
#undef EMBER_CASE
  }
}

void fill_cuda(const TensorIter& it, Scalar v) {
  dispatch_all(it.dtypes[0], "fill_", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    cuda::gpu_kernel<T>(it, FillFn<opmath_t<T>>{v.to<opmath_t<T>>()});
  });
}

void copy_cuda(const TensorIter& it) {
  if (it.numel == 0) return;
  if (it.dtypes[0] == it.dtypes[1] && it.is_contiguous()) {
    cudaStream_t stream = cuda::raw_stream(it.device.index());
    EMBER_CUDA_CHECK(cudaMemcpyAsync(it.data[0], it.data[1],
                                     static_cast<size_t>(it.numel) * itemsize(it.dtypes[0]),
                                     cudaMemcpyDeviceToDevice, stream));
    return;
  }
  dispatch_all(it.dtypes[0], "copy_", [&](auto out_tag) {
    using Out = EMBER_TYPE(out_tag);
    dispatch_all(it.dtypes[1], "copy_", [&](auto in_tag) {
      using In = EMBER_TYPE(in_tag);
      cuda::gpu_kernel<Out, In>(it, ConvertFn<opmath_t<Out>>{});
    });
  });
}

}  // namespace ember
