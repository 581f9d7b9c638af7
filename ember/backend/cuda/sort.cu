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

template <typename T, typename A>
struct ToAcc {
  const T* x;
  __device__ A operator()(int64_t i) const { return static_cast<A>(static_cast<opmath_t<T>>(x[i])); }
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

template <typename A, typename O>
__global__ void store(const A* acc, O* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = static_cast<O>(acc[i]);
}

int blocks_for(int64_t n) { return static_cast<int>(std::min<int64_t>((n + 255) / 256, 65535)); }

}  // namespace

void sort_cuda(const Tensor& x, bool descending, const Tensor& values, const Tensor& indices) {
  const int64_t n = x.numel();
  if (n == 0) return;
  const int64_t L = x.dim() == 0 ? 1 : x.size(-1);
  cuda::LaunchScope scope(x.device().index());
  auto policy = thrust::cuda::par.on(scope.stream);
  dispatch_all(x.dtype(), "sort", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = std::conditional_t<std::is_same_v<T, bool>, int, opmath_t<T>>;
    Tensor keys = empty({n}, TensorOptions(dtype_of<A>).with_device(x.device()));
    Tensor flat = empty({n}, TensorOptions(kInt64).with_device(x.device()));
    Tensor rows = empty({n}, TensorOptions(kInt64).with_device(x.device()));
    A* k = keys.data_ptr<A>();
    int64_t* f = flat.data_ptr<int64_t>();
    int64_t* r = rows.data_ptr<int64_t>();
    thrust::counting_iterator<int64_t> first(0);
    thrust::transform(policy, first, first + n, k, ToAcc<T, A>{x.data_ptr<T>()});
    thrust::sequence(policy, f, f + n);
    thrust::stable_sort_by_key(policy, k, k + n, f, Before<A>{descending});
    thrust::transform(policy, f, f + n, r, RowOf{L});
    thrust::stable_sort_by_key(policy, r, r + n, f);
    gather_sorted<<<blocks_for(n), 256, 0, scope.stream>>>(x.data_ptr<T>(), f, values.data_ptr<T>(),
                                                           indices.data_ptr<int64_t>(), n, L);
    EMBER_CUDA_LAUNCH_CHECK("gather_sorted");
  });
}

void scan_cuda(ScanOp op, const Tensor& x, const Tensor& out) {
  const int64_t n = x.numel();
  if (n == 0) return;
  const int64_t L = x.dim() == 0 ? 1 : x.size(-1);
  cuda::LaunchScope scope(x.device().index());
  auto policy = thrust::cuda::par.on(scope.stream);
  dispatch_all(out.dtype(), "cumsum", [&](auto out_tag) {
    using O = EMBER_TYPE(out_tag);
    using A = std::conditional_t<std::is_same_v<O, bool>, int64_t, opmath_t<O>>;
    dispatch_all(x.dtype(), "cumsum", [&](auto in_tag) {
      using T = EMBER_TYPE(in_tag);
      Tensor acc = empty({n}, TensorOptions(dtype_of<A>).with_device(x.device()));
      A* a = acc.data_ptr<A>();
      thrust::counting_iterator<int64_t> first(0);
      auto row = thrust::make_transform_iterator(first, RowOf{L});
      auto value = thrust::make_transform_iterator(first, ToAcc<T, A>{x.data_ptr<T>()});
      if (op == ScanOp::Sum)
        thrust::inclusive_scan_by_key(policy, row, row + n, value, a, thrust::equal_to<int64_t>(),
                                      thrust::plus<A>());
      else
        thrust::inclusive_scan_by_key(policy, row, row + n, value, a, thrust::equal_to<int64_t>(),
                                      thrust::multiplies<A>());
      store<<<blocks_for(n), 256, 0, scope.stream>>>(a, out.data_ptr<O>(), n);
      EMBER_CUDA_LAUNCH_CHECK("scan store");
    });
  });
}

}  // namespace ember
