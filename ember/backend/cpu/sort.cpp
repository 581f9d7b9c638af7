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

// Note [PyTorch's tie order]
// Equal values have no order of their own, yet PyTorch's CPU sort, topk and kthvalue return a
// definite index for each, and programs (and PyTorch's tests) see it. ember runs the same
// algorithms on (value, index) pairs compared by value only: std::sort (introsort) for an
// unstable sort, partial_sort or nth_element for top-k (partial_sort when k * 64 <= n), and
// PyTorch's median-of-three quick select for kthvalue. With the same comparisons the same
// swaps happen, so the indices are PyTorch's, tie for tie.

void sort_cpu(const Tensor& x, bool desc, bool stable, const Tensor& values,
              const Tensor& indices) {
  const int64_t L = x.dim() == 0 ? 1 : x.size(-1), R = L == 0 ? 0 : x.numel() / L;
  dispatch_all(x.dtype(), "sort", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = std::conditional_t<std::is_same_v<T, bool>, uint8_t, opmath_t<T>>;
    const T* in = x.data_ptr<T>();
    T* out = values.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    parallel_for(0, R, row_grain(L), [&](int64_t b, int64_t e) {
      std::vector<std::pair<A, int64_t>> row(static_cast<size_t>(L));
      auto asc = [](const auto& p, const auto& q) { return ascending(p.first, q.first); };
      auto dsc = [](const auto& p, const auto& q) { return descending(p.first, q.first); };
      for (int64_t r = b; r < e; ++r) {
        for (int64_t c = 0; c < L; ++c)
          row[static_cast<size_t>(c)] = {static_cast<A>(in[r * L + c]), c};
        if (stable)
          desc ? std::stable_sort(row.begin(), row.end(), dsc)
               : std::stable_sort(row.begin(), row.end(), asc);
        else
          desc ? std::sort(row.begin(), row.end(), dsc) : std::sort(row.begin(), row.end(), asc);
        for (int64_t c = 0; c < L; ++c) {
          out[r * L + c] = in[r * L + row[static_cast<size_t>(c)].second];
          idx[r * L + c] = row[static_cast<size_t>(c)].second;
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
      std::vector<std::pair<A, int64_t>> queue(static_cast<size_t>(L));
      // Note [PyTorch's tie order]
      auto before = [largest](const auto& p, const auto& q) {
        return largest ? descending(p.first, q.first) : ascending(p.first, q.first);
      };
      for (int64_t r = b; r < e; ++r) {
        for (int64_t c = 0; c < L; ++c)
          queue[static_cast<size_t>(c)] = {static_cast<A>(in[r * L + c]), c};
        if (k * 64 <= L) {
          std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), before);
        } else if (k > 0) {
          std::nth_element(queue.begin(), queue.begin() + k - 1, queue.end(), before);
          if (sorted) std::sort(queue.begin(), queue.begin() + k - 1, before);
        }
        for (int64_t c = 0; c < k; ++c) {
          out[r * k + c] = in[r * L + queue[static_cast<size_t>(c)].second];
          idx[r * k + c] = queue[static_cast<size_t>(c)].second;
        }
      }
    });
  });
}

void kthvalue_cpu(const Tensor& x, int64_t k, const Tensor& values, const Tensor& indices) {
  const int64_t L = x.dim() == 0 ? 1 : x.size(-1), R = L == 0 ? 0 : x.numel() / L;
  dispatch_all(x.dtype(), "kthvalue", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = std::conditional_t<std::is_same_v<T, bool>, uint8_t, opmath_t<T>>;
    const T* in = x.data_ptr<T>();
    T* out = values.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    parallel_for(0, R, row_grain(L), [&](int64_t b, int64_t e) {
      std::vector<A> v(static_cast<size_t>(L));
      std::vector<int64_t> ix(static_cast<size_t>(L));
      // greater, NaN above every number.
      auto gt = [](A p, A q) { return descending(p, q); };
      auto swap = [&](int64_t i, int64_t j) {
        std::swap(v[static_cast<size_t>(i)], v[static_cast<size_t>(j)]);
        std::swap(ix[static_cast<size_t>(i)], ix[static_cast<size_t>(j)]);
      };
      auto at = [&](int64_t i) { return v[static_cast<size_t>(i)]; };
      for (int64_t r = b; r < e; ++r) {
        for (int64_t c = 0; c < L; ++c) {
          v[static_cast<size_t>(c)] = static_cast<A>(in[r * L + c]);
          ix[static_cast<size_t>(c)] = c;
        }
        // Note [PyTorch's tie order]: its quick select, position k - 1.
        int64_t target = k - 1, lo = 0, hi = L - 1;
        while (hi > lo) {
          if (hi == lo + 1) {
            if (gt(at(lo), at(hi))) swap(lo, hi);
            break;
          }
          int64_t mid = lo + (hi - lo) / 2;
          swap(mid, lo + 1);
          if (gt(at(lo + 1), at(hi))) swap(lo + 1, hi);
          if (gt(at(lo), at(hi))) swap(lo, hi);
          if (gt(at(lo + 1), at(lo))) swap(lo + 1, lo);
          int64_t i = lo + 1, j = hi;
          A pivot = at(lo);
          while (true) {
            do ++i;
            while (gt(pivot, at(i)));
            do --j;
            while (gt(at(j), pivot));
            if (j < i) break;
            swap(i, j);
          }
          swap(lo, j);
          if (j <= target) lo = i;
          if (j >= target) hi = j - 1;
        }
        out[r] = in[r * L + ix[static_cast<size_t>(target)]];
        idx[r] = ix[static_cast<size_t>(target)];
      }
    });
  });
}

void scan_cpu(ScanOp op, const Tensor& x, const Tensor& out) {
  const int64_t L = x.dim() == 0 ? 1 : x.size(-1), R = L == 0 ? 0 : x.numel() / L;
  dispatch_all_and_complex(out.dtype(), "cumsum", [&](auto out_tag) {
    using O = EMBER_TYPE(out_tag);
    using A = std::conditional_t<std::is_same_v<O, bool>, int64_t, opmath_t<O>>;
    dispatch_all_and_complex(x.dtype(), "cumsum", [&](auto in_tag) {
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
