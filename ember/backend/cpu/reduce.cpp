// CPU reductions. The input is viewed as [kept dims..., reduced dims...]: rows that are contiguous
// are reduced with lane accumulators g++ vectorises; a reduction over leading dims of a tensor
// whose kept dims are contiguous accumulates whole rows ("columns" case); anything else is first
// copied into the row layout. A full reduction splits its one row over the pool.
#include <algorithm>
#include <memory>
#include <vector>

#include "ember/backend/cpu/thread_pool.h"
#include "ember/backend/kernels.h"
#include "ember/backend/reduce_layout.h"

namespace ember {
namespace {

// Element offset of row-major index i within (sizes, strides).
int64_t offset_of(int64_t i, const Shape& sizes, const Shape& strides) {
  int64_t off = 0;
  for (size_t d = sizes.size(); d-- > 0;) {
    off += (i % sizes[d]) * strides[d];
    i /= sizes[d];
  }
  return off;
}

// Reduces n contiguous elements. Lanes let g++ vectorise. Float sums accumulate in double lanes:
// the loop stays memory-bound, and a sum of millions of equal values keeps its last digits.
template <typename T, typename A, typename R>
A reduce_run(const T* x, int64_t n, R r) {
  constexpr int L = 32;
  constexpr int64_t kBlock = 8192;
  constexpr bool kWiden = std::is_same_v<R, SumReducer<float>>;
  using W = std::conditional_t<kWiden, double, A>;
  auto rw = [&](W a, W b) -> W {
    if constexpr (kWiden)
      return a + b;
    else
      return r(a, b);
  };
  W total = static_cast<W>(R::identity());
  for (int64_t start = 0; start < n; start += kBlock) {
    int64_t end = std::min(n, start + kBlock);
    W acc[L];
    for (int j = 0; j < L; ++j) acc[j] = static_cast<W>(R::identity());
    int64_t i = start;
    for (; i + L <= end; i += L)
      for (int j = 0; j < L; ++j)
        acc[j] = rw(acc[j], static_cast<W>(static_cast<opmath_t<T>>(x[i + j])));
    for (; i < end; ++i) acc[0] = rw(acc[0], static_cast<W>(static_cast<opmath_t<T>>(x[i])));
    for (int w = L / 2; w > 0; w /= 2)
      for (int j = 0; j < w; ++j) acc[j] = rw(acc[j], acc[j + w]);
    total = rw(total, acc[0]);
  }
  return static_cast<A>(total);
}

// Rows of the [kept, reduced] view, contiguous inside: `base` is the view's data.
template <typename T, typename O, typename A, typename R>
void reduce_rows(const T* base, const ReduceLayout& l, O* out, R r) {
  if (l.M == 1) {
    int64_t threads = get_num_threads();
    int64_t chunks = std::max<int64_t>(1, std::min(threads, l.N / kGrainSize));
    std::unique_ptr<A[]> partial(new A[static_cast<size_t>(chunks)]);
    parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        int64_t lo = l.N * c / chunks, hi = l.N * (c + 1) / chunks;
        partial[static_cast<size_t>(c)] = reduce_run<T, A>(base + lo, hi - lo, r);
      }
    });
    A acc = R::identity();
    for (int64_t c = 0; c < chunks; ++c) acc = r(acc, partial[static_cast<size_t>(c)]);
    out[0] = static_cast<O>(acc);
    return;
  }
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(l.N, 1));
  parallel_for(0, l.M, grain, [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m)
      out[m] = static_cast<O>(
          reduce_run<T, A>(base + offset_of(m, l.kept_sizes, l.kept_strides), l.N, r));
  });
}

// Leading reduced dims, contiguous kept dims: out[m] = R over n of x[off(n) + m].
template <typename T, typename O, typename A, typename R>
void reduce_columns(const T* base, const ReduceLayout& l, O* out, R r) {
  parallel_for(0, l.M, std::max<int64_t>(64, kGrainSize / std::max<int64_t>(l.N, 1)),
               [&](int64_t b, int64_t e) {
                 std::unique_ptr<A[]> acc(new A[static_cast<size_t>(e - b)]);
                 for (int64_t m = 0; m < e - b; ++m) acc[static_cast<size_t>(m)] = R::identity();
                 for (int64_t n = 0; n < l.N; ++n) {
                   const T* row = base + offset_of(n, l.red_sizes, l.red_strides) + b;
                   for (int64_t m = 0; m < e - b; ++m)
                     acc[static_cast<size_t>(m)] =
                         r(acc[static_cast<size_t>(m)],
                           static_cast<A>(static_cast<opmath_t<T>>(row[m])));
                 }
                 for (int64_t m = b; m < e; ++m)
                   out[m] = static_cast<O>(acc[static_cast<size_t>(m - b)]);
               });
}

// Value and first index of the max (or min) of each contiguous row; NaN wins.
template <typename T>
void arg_rows(const T* base, const ReduceLayout& l, bool is_max, T* values, int64_t* indices) {
  using M = opmath_t<T>;
  parallel_for(0, l.M, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(l.N, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t m = b; m < e; ++m) {
                   const T* x = base + offset_of(m, l.kept_sizes, l.kept_strides);
                   M best = static_cast<M>(x[0]);
                   int64_t idx = 0;
                   for (int64_t i = 1; i < l.N; ++i) {
                     M v = static_cast<M>(x[i]);
                     if (arg_better(v, i, best, idx, is_max)) {
                       best = v;
                       idx = i;
                     }
                   }
                   if (values) values[m] = static_cast<T>(best);
                   if (indices) indices[m] = idx;
                 }
               });
}

template <typename T, typename O, typename A, typename R>
void reduce_values(const Tensor& in, const ReduceLayout& l, const Tensor& out, R r) {
  O* o = static_cast<O*>(out.data_ptr());
  const T* base = static_cast<const T*>(in.data_ptr());
  if (l.rows()) {
    reduce_rows<T, O, A>(base, l, o, r);
  } else if (l.columns()) {
    reduce_columns<T, O, A>(base, l, o, r);
  } else {
    EMBER_ASSERT(false, "reduce_values needs a row or column layout");
  }
}

}  // namespace

void reduce_cpu(ReduceOp op, const Tensor& in_, const Shape& dims, const Tensor& out,
                const Tensor& indices) {
  if (out.numel() == 0) return;
  ReduceInput input = reduce_input(op, in_, dims, indices.defined(), copy_cpu);
  const Tensor& in = input.in;
  const ReduceLayout& l = input.layout;
  if (l.N == 0) {
    fill_cpu(TensorIter(out, {}), reduce_identity(op));
    return;
  }
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
      dispatch_all_and_complex(in.dtype(), "sum", [&](auto tag) {
        using T = EMBER_TYPE(tag);
        using A = sum_acc_t<T>;
        using O = std::conditional_t<std::is_integral_v<T>, int64_t, T>;
        if (op == ReduceOp::Sum)
          reduce_values<T, O, A>(in, l, out, SumReducer<A>{});
        else
          reduce_values<T, O, A>(in, l, out, ProdReducer<A>{});
      });
      return;
    case ReduceOp::Max:
    case ReduceOp::Min:
      if (indices.defined()) {
        dispatch_numeric(in.dtype(), "max", [&](auto tag) {
          using T = EMBER_TYPE(tag);
          arg_rows<T>(static_cast<const T*>(in.data_ptr()), l, op == ReduceOp::Max,
                      static_cast<T*>(out.data_ptr()), static_cast<int64_t*>(indices.data_ptr()));
        });
        return;
      }
      dispatch_numeric(in.dtype(), "max", [&](auto tag) {
        using T = EMBER_TYPE(tag);
        using A = opmath_t<T>;
        if (op == ReduceOp::Max)
          reduce_values<T, T, A>(in, l, out, MaxReducer<A>{});
        else
          reduce_values<T, T, A>(in, l, out, MinReducer<A>{});
      });
      return;
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      dispatch_numeric(in.dtype(), "argmax", [&](auto tag) {
        using T = EMBER_TYPE(tag);
        arg_rows<T>(static_cast<const T*>(in.data_ptr()), l, op == ReduceOp::ArgMax, nullptr,
                    static_cast<int64_t*>(out.data_ptr()));
      });
      return;
    case ReduceOp::All:
      reduce_values<bool, bool, bool>(in, l, out, AllReducer{});
      return;
    case ReduceOp::Any:
      reduce_values<bool, bool, bool>(in, l, out, AnyReducer{});
      return;
  }
}

}  // namespace ember
