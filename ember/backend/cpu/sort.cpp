// CPU sorting, top-k and scans along the last dim of a contiguous (R, L) tensor, a row per task.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ember/backend/cpu/thread_pool.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

template <typename A>
bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>)
    return std::isnan(v);
  else
    return false;
}

// a before b in ascending order, NaN above every number (PyTorch's order).
template <typename A>
bool ascending(A a, A b) {
  return !is_nan(a) && (is_nan(b) || a < b);
}
template <typename A>
bool descending(A a, A b) {
  return !is_nan(b) && (is_nan(a) || a > b);
}

// Rows are independent: enough of them (or long enough) run on the pool.
int64_t row_grain(int64_t L) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(L, 1)); }

}  // namespace

void sort_cpu(const Tensor& x, bool desc, const Tensor& values, const Tensor& indices) {
  const int64_t L = x.dim() == 0 ? 1 : x.size(-1), R = L == 0 ? 0 : x.numel() / L;
  dispatch_all(x.dtype(), "sort", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = std::conditional_t<std::is_same_v<T, bool>, uint8_t, opmath_t<T>>;
    const T* in = x.data_ptr<T>();
    T* out = values.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    parallel_for(0, R, row_grain(L), [&](int64_t b, int64_t e) {
      std::vector<int64_t> order(static_cast<size_t>(L));
      for (int64_t r = b; r < e; ++r) {
        const T* row = in + r * L;
        std::iota(order.begin(), order.end(), int64_t{0});
        auto key = [&](int64_t i) { return static_cast<A>(row[i]); };
        if (desc)
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t i, int64_t j) { return descending(key(i), key(j)); });
        else
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t i, int64_t j) { return ascending(key(i), key(j)); });
        for (int64_t c = 0; c < L; ++c) {
          out[r * L + c] = row[order[static_cast<size_t>(c)]];
          idx[r * L + c] = order[static_cast<size_t>(c)];
        }
      }
    });
  });
}

void topk_cpu(const Tensor& x, int64_t k, bool largest, bool sorted, const Tensor& values,
              const Tensor& indices) {
  const int64_t L = x.dim() == 0 ? 1 : x.size(-1), R = L == 0 ? 0 : x.numel() / L;
  dispatch_all(x.dtype(), "topk", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = std::conditional_t<std::is_same_v<T, bool>, uint8_t, opmath_t<T>>;
    const T* in = x.data_ptr<T>();
    T* out = values.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    parallel_for(0, R, row_grain(L), [&](int64_t b, int64_t e) {
      std::vector<int64_t> order(static_cast<size_t>(L));
      for (int64_t r = b; r < e; ++r) {
        const T* row = in + r * L;
        std::iota(order.begin(), order.end(), int64_t{0});
        // Ties keep the lower index first, as a stable sort would.
        auto before = [&](int64_t i, int64_t j) {
          A a = static_cast<A>(row[i]), c = static_cast<A>(row[j]);
          bool ab = largest ? descending(a, c) : ascending(a, c);
          bool ba = largest ? descending(c, a) : ascending(c, a);
          return ab || (!ba && i < j);
        };
        auto kth = order.begin() + k;
        if (sorted)
          std::partial_sort(order.begin(), kth, order.end(), before);
        else if (k < L)
          std::nth_element(order.begin(), kth, order.end(), before);
        for (int64_t c = 0; c < k; ++c) {
          out[r * k + c] = row[order[static_cast<size_t>(c)]];
          idx[r * k + c] = order[static_cast<size_t>(c)];
        }
      }
    });
  });
}

void scan_cpu(ScanOp op, const Tensor& x, const Tensor& out) {
  const int64_t L = x.dim() == 0 ? 1 : x.size(-1), R = L == 0 ? 0 : x.numel() / L;
  dispatch_all(out.dtype(), "cumsum", [&](auto out_tag) {
    using O = EMBER_TYPE(out_tag);
    using A = std::conditional_t<std::is_same_v<O, bool>, int64_t, opmath_t<O>>;
    dispatch_all(x.dtype(), "cumsum", [&](auto in_tag) {
      using T = EMBER_TYPE(in_tag);
      const T* in = x.data_ptr<T>();
      O* o = out.data_ptr<O>();
      parallel_for(0, R, row_grain(L), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          A acc = op == ScanOp::Sum ? A(0) : A(1);
          for (int64_t c = 0; c < L; ++c) {
            A v = static_cast<A>(static_cast<opmath_t<T>>(in[r * L + c]));
            acc = op == ScanOp::Sum ? A(acc + v) : A(acc * v);
            o[r * L + c] = static_cast<O>(acc);
          }
        }
      });
    });
  });
}

}  // namespace ember
