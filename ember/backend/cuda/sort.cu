// CUDA sorting and scans along the last dim of a contiguous (R, L) tensor, through Thrust on the
// current stream. A segmented sort is two stable sorts: every element by value, then by row (the
// second keeps each row's values in order). Scans run by key, the row being the key.
#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include "ember/backend/cuda/runtime.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

template <typename A>
struct Before {  // a before b: ascending or descending, NaN above every number (PyTorch's order)
  bool desc;
  __device__ bool operator()(A a, A b) const {
    bool a_nan = a != a, b_nan = b != b;
    if (desc) return !b_nan && (a_nan || a > b);
    return !a_nan && (b_nan || a < b);
  }
};

struct RowOf {
  int64_t L;
  __device__ int64_t operator()(int64_t flat) const { return flat / L; }
};

template <typename T>
__global__ void gather_sorted(const T* x, const int64_t* flat, T* values, int64_t* indices,
                              int64_t n, int64_t L) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t f = flat[i];
    values[i] = x[f];
    indices[i] = f % L;
  }
}

int blocks_for(int64_t n) { return static_cast<int>(std::min<int64_t>((n + 255) / 256, 65535)); }

// The flat indices of x's elements (n, in rows of L) in sorted order, each row on its own.
// Instantiated per key type A, not per dtype (see scan_rows).
template <typename A>
Tensor sorted_order(const Tensor& x, int64_t L, bool descending, cudaStream_t stream) {
  const int64_t n = x.numel();
  Tensor keys = empty(x.sizes(), TensorOptions(dtype_of<A>).with_device(x.device()));
  copy_cuda(TensorIter(keys, {x}));
  Tensor flat = empty({n}, TensorOptions(kInt64).with_device(x.device()));
  Tensor rows = empty({n}, TensorOptions(kInt64).with_device(x.device()));
  A* k = keys.data_ptr<A>();
  int64_t* f = flat.data_ptr<int64_t>();
  int64_t* r = rows.data_ptr<int64_t>();
  auto policy = thrust::cuda::par.on(stream);
  thrust::sequence(policy, f, f + n);
  thrust::stable_sort_by_key(policy, k, k + n, f, Before<A>{descending});
  thrust::transform(policy, f, f + n, r, RowOf{L});
  thrust::stable_sort_by_key(policy, r, r + n, f);
  return flat;
}

// A running sum or product of every row of x (n elements, rows of L) in A, the output's accumulator
// type. Instantiated per accumulator, not per (input, output) pair: x is first converted to A, as
// the CPU's loop converts each element, which keeps the file's compile time (the critical path of a
// GPU build) in check.
template <typename A>
Tensor scan_rows(ScanOp op, const Tensor& x, int64_t L, cudaStream_t stream) {
  const int64_t n = x.numel();
  Tensor values = empty(x.sizes(), TensorOptions(dtype_of<A>).with_device(x.device()));
  copy_cuda(TensorIter(values, {x}));
  Tensor acc = empty(x.sizes(), values.options());
  const A* v = values.data_ptr<A>();
  A* a = acc.data_ptr<A>();
  auto policy = thrust::cuda::par.on(stream);
  auto row = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowOf{L});
  if (op == ScanOp::Sum)
    thrust::inclusive_scan_by_key(policy, row, row + n, v, a, thrust::equal_to<int64_t>(),
                                  thrust::plus<A>());
  else
    thrust::inclusive_scan_by_key(policy, row, row + n, v, a, thrust::equal_to<int64_t>(),
                                  thrust::multiplies<A>());
  return acc;
}

}  // namespace

void sort_cuda(const Tensor& x, bool descending, bool /*stable: always*/, const Tensor& values,
               const Tensor& indices) {
  const int64_t n = x.numel();
  if (n == 0) return;
  const int64_t L = x.dim() == 0 ? 1 : x.size(-1);
  cuda::LaunchScope scope(x.device().index());
  dispatch_all(x.dtype(), "sort", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = std::conditional_t<std::is_same_v<T, bool>, uint8_t, opmath_t<T>>;
    Tensor flat = sorted_order<A>(x, L, descending, scope.stream);
    gather_sorted<<<blocks_for(n), 256, 0, scope.stream>>>(
        x.data_ptr<T>(), flat.data_ptr<int64_t>(), values.data_ptr<T>(),
        indices.data_ptr<int64_t>(), n, L);
    EMBER_CUDA_LAUNCH_CHECK("gather_sorted");
  });
}

void scan_cuda(ScanOp op, const Tensor& x, const Tensor& out) {
  const int64_t n = x.numel();
  if (n == 0) return;
  const int64_t L = x.dim() == 0 ? 1 : x.size(-1);
  cuda::LaunchScope scope(x.device().index());
  dispatch_all(out.dtype(), "cumsum", [&](auto out_tag) {
    using O = EMBER_TYPE(out_tag);
    using A = std::conditional_t<std::is_same_v<O, bool>, int64_t, opmath_t<O>>;
    copy_cuda(TensorIter(out, {scan_rows<A>(op, x, L, scope.stream)}));
  });
}

}  // namespace ember
