// CUDA reductions with the functors of backend/functors/reduce.h. A block reduces a row (warp
// shuffles, then shared memory); one output with many elements splits its row over many blocks
// and reduces their partial results in a second pass; "columns" give each thread one output.
#include <cuda_runtime.h>

#include "ember/backend/cuda/block_reduce.cuh"
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/reduce.h"
#include "ember/backend/kernels.h"
#include "ember/backend/reduce_layout.h"

namespace ember {
namespace {

constexpr int kBlock = 256;

struct RowGeometry {
  int ndim;
  int64_t sizes[TensorIter::kMaxDims];
  int64_t strides[TensorIter::kMaxDims];
  __device__ int64_t offset(int64_t i) const {
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      off += (i % sizes[d]) * strides[d];
      i /= sizes[d];
    }
    return off;
  }
};

RowGeometry geometry(const Shape& sizes, const Shape& strides) {
  RowGeometry g{};
  g.ndim = static_cast<int>(sizes.size());
  EMBER_CHECK(g.ndim <= TensorIter::kMaxDims, "[reduce] at most ", TensorIter::kMaxDims, " dims");
  for (int d = 0; d < g.ndim; ++d) {
    g.sizes[d] = sizes[static_cast<size_t>(d)];
    g.strides[d] = strides[static_cast<size_t>(d)];
  }
  return g;
}

// out[row * parts + part] = R over part's slice of row `row` (contiguous, length N). The slice is
// read in 16-byte vectors between a scalar head (up to the first 16-byte boundary) and tail: four
// floats per load keep enough bytes in flight to approach the memory's bandwidth.
template <typename T, typename A, typename O, typename R>
__global__ void row_kernel(const T* in, RowGeometry kept, int64_t M, int64_t N, int64_t parts,
                           O* out, R r) {
  constexpr int64_t V = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
  struct alignas(16) Vec {
    T v[V];
  };
  auto value = [](T t) { return static_cast<A>(static_cast<opmath_t<T>>(t)); };
  for (int64_t job = blockIdx.x; job < M * parts; job += gridDim.x) {
    int64_t row = job / parts, part = job % parts;
    int64_t lo = N * part / parts, hi = N * (part + 1) / parts;
    const T* x = in + kept.offset(row);
    auto misalign = static_cast<int64_t>(reinterpret_cast<uintptr_t>(x + lo) % 16);
    int64_t body = std::min(hi, lo + (16 - misalign) % 16 / static_cast<int64_t>(sizeof(T)));
    int64_t vectors = (hi - body) / V, tail = body + vectors * V;
    A acc = R::identity();
    for (int64_t i = lo + threadIdx.x; i < body; i += blockDim.x) acc = r(acc, value(x[i]));
    const Vec* xv = reinterpret_cast<const Vec*>(x + body);
    // Unrolled so that several loads are in flight before their sums (which must stay in order).
#pragma unroll 4
    for (int64_t k = threadIdx.x; k < vectors; k += blockDim.x) {
      Vec v = xv[k];
#pragma unroll
      for (int64_t j = 0; j < V; ++j) acc = r(acc, value(v.v[j]));
    }
    for (int64_t i = tail + threadIdx.x; i < hi; i += blockDim.x) acc = r(acc, value(x[i]));
    acc = cuda::block_reduce<A>(acc, r);
    if (threadIdx.x == 0) out[job] = static_cast<O>(acc);
  }
}

template <typename T, typename A, typename O, typename R>
__global__ void column_kernel(const T* in, RowGeometry reduced, int64_t M, int64_t N, O* out, R r) {
  for (int64_t m = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; m < M;
       m += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    A acc = R::identity();
    for (int64_t n = 0; n < N; ++n)
      acc = r(acc, static_cast<A>(static_cast<opmath_t<T>>(in[reduced.offset(n) + m])));
    out[m] = static_cast<O>(acc);
  }
}

// The first max (or min) of each contiguous row, value and index; NaN wins. Like row_kernel, a row
// may be split in `parts` slices, each block writing its slice's best (at job = row * parts +
// part, the index within the row) for arg_combine. values may be null.
template <typename T, typename V>
__global__ void arg_kernel(const T* in, RowGeometry kept, int64_t M, int64_t N, int64_t parts,
                           bool is_max, V* values, int64_t* indices) {
  using A = opmath_t<T>;
  __shared__ A best_v[kBlock];
  __shared__ int64_t best_i[kBlock];
  for (int64_t job = blockIdx.x; job < M * parts; job += gridDim.x) {
    int64_t row = job / parts, part = job % parts;
    int64_t lo = N * part / parts, hi = N * (part + 1) / parts;
    const T* x = in + kept.offset(row);
    A bv = 0;
    int64_t bi = -1;
    auto consider = [&](A v, int64_t i) {
      if (bi < 0 || arg_better(v, i, bv, bi, is_max)) {
        bv = v;
        bi = i;
      }
    };
    // Four loads in flight before their comparisons, which keep the thread's indices in order.
    const int64_t step = blockDim.x;
    int64_t i = lo + threadIdx.x;
    for (; i + 3 * step < hi; i += 4 * step) {
      A v0 = static_cast<A>(x[i]), v1 = static_cast<A>(x[i + step]);
      A v2 = static_cast<A>(x[i + 2 * step]), v3 = static_cast<A>(x[i + 3 * step]);
      consider(v0, i);
      consider(v1, i + step);
      consider(v2, i + 2 * step);
      consider(v3, i + 3 * step);
    }
    for (; i < hi; i += step) consider(static_cast<A>(x[i]), i);
    best_v[threadIdx.x] = bv;
    best_i[threadIdx.x] = bi;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
      if (threadIdx.x < s) {
        int64_t oi = best_i[threadIdx.x + s];
        if (oi >= 0 &&
            (best_i[threadIdx.x] < 0 || arg_better(best_v[threadIdx.x + s], oi, best_v[threadIdx.x],
                                                   best_i[threadIdx.x], is_max))) {
          best_v[threadIdx.x] = best_v[threadIdx.x + s];
          best_i[threadIdx.x] = oi;
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (values) values[job] = static_cast<V>(best_v[0]);
      if (indices) indices[job] = best_i[0];
    }
    __syncthreads();
  }
}

// The best of each row's `parts` slice results (arg_kernel's), a thread per row.
template <typename T>
__global__ void arg_combine(const opmath_t<T>* part_v, const int64_t* part_i, int64_t M,
                            int64_t parts, bool is_max, T* values, int64_t* indices) {
  using A = opmath_t<T>;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < M;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    A bv = 0;
    int64_t bi = -1;
    for (int64_t k = row * parts; k < (row + 1) * parts; ++k) {
      int64_t i = part_i[k];
      if (i >= 0 && (bi < 0 || arg_better(part_v[k], i, bv, bi, is_max))) {
        bv = part_v[k];
        bi = i;
      }
    }
    if (values) values[row] = static_cast<T>(bv);
    indices[row] = bi;
  }
}

// How many blocks share a row: a few long rows are split so that the whole GPU reads them.
int64_t parts_per_row(const ReduceLayout& l) {
  return l.M < 64 && l.N > 65536 ? std::min<int64_t>(1024 / l.M + 1, l.N / 16384) : 1;
}

template <typename T, typename O, typename A, typename R>
void reduce_values(const Tensor& in, const ReduceLayout& l, const Tensor& out, R r,
                   cudaStream_t stream) {
  const T* x = static_cast<const T*>(in.data_ptr());
  O* o = static_cast<O*>(out.data_ptr());
  if (l.rows()) {
    RowGeometry kept = geometry(l.kept_sizes, l.kept_strides);
    // A few long rows: split each over several blocks, then reduce the partial results.
    int64_t parts = parts_per_row(l);
    if (parts <= 1) {
      row_kernel<T, A, O>
          <<<cuda::grid_for(l.M, 1), kBlock, 0, stream>>>(x, kept, l.M, l.N, 1, o, r);
      EMBER_CUDA_LAUNCH_CHECK("reduce row_kernel");
      return;
    }
    Tensor partial = empty({l.M * parts}, TensorOptions(dtype_of<A>).with_device(in.device()));
    A* p = static_cast<A*>(partial.data_ptr());
    row_kernel<T, A, A>
        <<<cuda::grid_for(l.M * parts, 1), kBlock, 0, stream>>>(x, kept, l.M, l.N, parts, p, r);
    EMBER_CUDA_LAUNCH_CHECK("reduce row_kernel (partials)");
    RowGeometry rows = geometry({l.M}, {parts});
    row_kernel<A, A, O>
        <<<cuda::grid_for(l.M, 1), kBlock, 0, stream>>>(p, rows, l.M, parts, 1, o, r);
    EMBER_CUDA_LAUNCH_CHECK("reduce row_kernel (final)");
  } else {
    column_kernel<T, A, O><<<cuda::grid_for(l.M, kBlock), kBlock, 0, stream>>>(
        x, geometry(l.red_sizes, l.red_strides), l.M, l.N, o, r);
    EMBER_CUDA_LAUNCH_CHECK("reduce column_kernel");
  }
}

}  // namespace

void reduce_cuda(ReduceOp op, const Tensor& in_, const Shape& dims, const Tensor& out,
                 const Tensor& indices) {
  if (out.numel() == 0) return;
  cuda::LaunchScope launch(in_.device().index());
  cudaStream_t stream = launch.stream;
  ReduceInput input = reduce_input(op, in_, dims, indices.defined(), copy_cuda);
  const Tensor& in = input.in;
  const ReduceLayout& l = input.layout;
  if (l.N == 0) {
    fill_cuda(TensorIter(out, {}), reduce_identity(op));
    return;
  }
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
      dispatch_all(in.dtype(), "sum", [&](auto tag) {
        using T = EMBER_TYPE(tag);
        using A = std::conditional_t<std::is_same_v<T, bool>, int64_t, sum_acc_t<T>>;
        using O = std::conditional_t<std::is_integral_v<T>, int64_t, T>;
        if (op == ReduceOp::Sum)
          reduce_values<T, O, A>(in, l, out, SumReducer<A>{}, stream);
        else
          reduce_values<T, O, A>(in, l, out, ProdReducer<A>{}, stream);
      });
      return;
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin: {
      bool is_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
      bool want_arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
      if (!want_arg && !indices.defined()) {
        dispatch_numeric(in.dtype(), "max", [&](auto tag) {
          using T = EMBER_TYPE(tag);
          using A = opmath_t<T>;
          if (is_max)
            reduce_values<T, T, A>(in, l, out, MaxReducer<A>{}, stream);
          else
            reduce_values<T, T, A>(in, l, out, MinReducer<A>{}, stream);
        });
        return;
      }
      dispatch_numeric(in.dtype(), "argmax", [&](auto tag) {
        using T = EMBER_TYPE(tag);
        using A = opmath_t<T>;
        T* values = want_arg ? nullptr : static_cast<T*>(out.data_ptr());
        int64_t* idx = want_arg ? static_cast<int64_t*>(out.data_ptr())
                                : static_cast<int64_t*>(indices.data_ptr());
        const T* x = static_cast<const T*>(in.data_ptr());
        RowGeometry kept = geometry(l.kept_sizes, l.kept_strides);
        int64_t parts = parts_per_row(l);
        if (parts <= 1) {
          arg_kernel<T, T><<<cuda::grid_for(l.M, 1), kBlock, 0, stream>>>(x, kept, l.M, l.N, 1,
                                                                          is_max, values, idx);
          EMBER_CUDA_LAUNCH_CHECK("arg_kernel");
          return;
        }
        Tensor part_v = empty({l.M * parts}, TensorOptions(dtype_of<A>).with_device(in.device()));
        Tensor part_i = empty({l.M * parts}, TensorOptions(kInt64).with_device(in.device()));
        arg_kernel<T, A><<<cuda::grid_for(l.M * parts, 1), kBlock, 0, stream>>>(
            x, kept, l.M, l.N, parts, is_max, part_v.data_ptr<A>(), part_i.data_ptr<int64_t>());
        EMBER_CUDA_LAUNCH_CHECK("arg_kernel (parts)");
        arg_combine<T><<<cuda::grid_for(l.M, kBlock), kBlock, 0, stream>>>(
            part_v.data_ptr<A>(), part_i.data_ptr<int64_t>(), l.M, parts, is_max, values, idx);
        EMBER_CUDA_LAUNCH_CHECK("arg_combine");
      });
      return;
    }
    case ReduceOp::All:
      reduce_values<bool, bool, bool>(in, l, out, AllReducer{}, stream);
      return;
    case ReduceOp::Any:
      reduce_values<bool, bool, bool>(in, l, out, AnyReducer{}, stream);
      return;
  }
}

}  // namespace ember
