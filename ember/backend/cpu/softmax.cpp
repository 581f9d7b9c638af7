// CPU softmax and log_softmax over one dim of a contiguous tensor viewed as (outer, D, inner).
// Rows (inner == 1) are the common case and run as three vectorised passes over a row in cache.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/backend/cpu/thread_pool.h"
#include "ember/backend/functors/math.h"
#include "ember/backend/kernels.h"
#include "ember/backend/reduce_layout.h"

namespace ember {
namespace {

template <typename A>
A row_max(const A* x, int64_t n) {
  constexpr int L = 16;
  A acc[L];
  for (int j = 0; j < L; ++j) acc[j] = -std::numeric_limits<A>::infinity();
  int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int j = 0; j < L; ++j) acc[j] = acc[j] > x[i + j] ? acc[j] : x[i + j];
  for (; i < n; ++i) acc[0] = acc[0] > x[i] ? acc[0] : x[i];
  A m = acc[0];
  for (int j = 1; j < L; ++j) m = m > acc[j] ? m : acc[j];
  return m;
}

// One row of D elements at stride 1, computed in A (float for 16-bit types).
// One row of D elements at stride 1, computed in A (float for 16-bit types). Float rows write
// exp(x - max) straight into y and scale it there: the row stays in L1 between the passes.
template <typename T, typename A>
void softmax_row(const T* x, T* y, int64_t D, bool log, A* buf) {
  // The row in A (converted into buf for 16-bit types), and where exp(x - max) goes: y for a
  // float softmax, else a second half of buf, so the converted row survives for log_softmax.
  const A* src;
  A* e;
  if constexpr (std::is_same_v<T, A>) {
    src = x;
    e = log ? buf : y;
  } else {
    for (int64_t i = 0; i < D; ++i) buf[i] = static_cast<A>(x[i]);
    src = buf;
    e = buf + D;
  }
  // A NaN anywhere makes the sum NaN, and with it the whole row, as in PyTorch.
  A m = row_max(src, D);
  if (std::isinf(m) && m < 0) {  // every entry is -inf: no distribution, NaN like PyTorch
    for (int64_t k = 0; k < D; ++k) y[k] = static_cast<T>(std::numeric_limits<A>::quiet_NaN());
    return;
  }
  constexpr int L = 16;
  A lanes[L] = {};
  int64_t i = 0;
  for (; i + L <= D; i += L)
    for (int j = 0; j < L; ++j) {
      A v = math::exp_nonpositive(src[i + j] - m);
      e[i + j] = v;
      lanes[j] += v;
    }
  for (; i < D; ++i) {
    A v = math::exp_nonpositive(src[i] - m);
    e[i] = v;
    lanes[0] += v;
  }
  A sum = 0;
  for (int j = 0; j < L; ++j) sum += lanes[j];
  if (log) {
    // (x - m) - log(sum), never x - (m + log(sum)): for |m| >> log(sum) the latter rounds the
    // log away (log_softmax([1e8, 1e8]) would be [0, 0]).
    A lse = std::log(sum);
    for (int64_t k = 0; k < D; ++k) y[k] = static_cast<T>((src[k] - m) - lse);
  } else {
    A inv = A(1) / sum;
    for (int64_t k = 0; k < D; ++k) y[k] = static_cast<T>(e[k] * inv);
  }
}

}  // namespace

void softmax_cpu(const Tensor& x, int64_t dim, bool log, const Tensor& out) {
  DimSplit g = split_at(x, dim);
  if (x.numel() == 0) return;
  dispatch_floating(x.dtype(), "softmax", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = opmath_t<T>;
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(out.data_ptr());
    if (g.inner == 1) {
      int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(g.D, 1) / 4);
      parallel_for(0, g.outer, grain, [&](int64_t b, int64_t e) {
        std::vector<A> buf(static_cast<size_t>(2 * g.D));
        for (int64_t r = b; r < e; ++r)
          softmax_row<T, A>(xp + r * g.D, yp + r * g.D, g.D, log, buf.data());
      });
      return;
    }
    // Strided dim: process `inner` columns at once per outer index.
    parallel_for(0, g.outer, 1, [&](int64_t b, int64_t e) {
      std::vector<A> m(static_cast<size_t>(g.inner)), s(static_cast<size_t>(g.inner));
      for (int64_t o = b; o < e; ++o) {
        const T* xo = xp + o * g.D * g.inner;
        T* yo = yp + o * g.D * g.inner;
        std::fill(m.begin(), m.end(), -std::numeric_limits<A>::infinity());
        std::fill(s.begin(), s.end(), A(0));
        for (int64_t d = 0; d < g.D; ++d)
          for (int64_t i = 0; i < g.inner; ++i)
            m[i] = math::max(m[i], static_cast<A>(xo[d * g.inner + i]));
        for (int64_t i = 0; i < g.inner; ++i)
          if (std::isinf(m[i]) && m[i] < 0) m[i] = std::numeric_limits<A>::quiet_NaN();
        for (int64_t d = 0; d < g.D; ++d)
          for (int64_t i = 0; i < g.inner; ++i)
            s[i] += math::exp_nonpositive(static_cast<A>(xo[d * g.inner + i]) - m[i]);
        for (int64_t d = 0; d < g.D; ++d)
          for (int64_t i = 0; i < g.inner; ++i) {
            A v = static_cast<A>(xo[d * g.inner + i]) - m[i];
            yo[d * g.inner + i] =
                static_cast<T>(log ? v - std::log(s[i]) : math::exp_nonpositive(v) / s[i]);
          }
      }
    });
  });
}

namespace {
// One row of the backward (inner == 1): the row's sum in lanes, then one vectorised pass.
template <typename T, typename A>
void softmax_backward_row(const T* __restrict g, const T* __restrict y, T* __restrict gi, int64_t D,
                          bool log) {
  constexpr int L = 16;
  A lanes[L] = {};
  int64_t i = 0;
  for (; i + L <= D; i += L)
    for (int j = 0; j < L; ++j)
      lanes[j] += log ? static_cast<A>(g[i + j])
                      : static_cast<A>(g[i + j]) * static_cast<A>(y[i + j]);
  for (; i < D; ++i) lanes[0] += log ? static_cast<A>(g[i]) : static_cast<A>(g[i]) * static_cast<A>(y[i]);
  A s = 0;
  for (int j = 0; j < L; ++j) s += lanes[j];
  if (log) {
    for (int64_t k = 0; k < D; ++k)
      gi[k] = static_cast<T>(static_cast<A>(g[k]) - math::exp(static_cast<A>(y[k])) * s);
  } else {
    for (int64_t k = 0; k < D; ++k)
      gi[k] = static_cast<T>(static_cast<A>(y[k]) * (static_cast<A>(g[k]) - s));
  }
}
}  // namespace

void softmax_backward_cpu(const Tensor& grad, const Tensor& out, int64_t dim, bool log,
                          const Tensor& grad_in) {
  DimSplit g = split_at(out, dim);
  if (out.numel() == 0) return;
  dispatch_floating(out.dtype(), "softmax_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = opmath_t<T>;
    const T* gp = static_cast<const T*>(grad.data_ptr());
    const T* yp = static_cast<const T*>(out.data_ptr());
    T* gi = static_cast<T*>(grad_in.data_ptr());
    if (g.inner == 1) {
      parallel_for(0, g.outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(g.D, 1)),
                   [&](int64_t b, int64_t e) {
                     for (int64_t o = b; o < e; ++o)
                       softmax_backward_row<T, A>(gp + o * g.D, yp + o * g.D, gi + o * g.D, g.D,
                                                  log);
                   });
      return;
    }
    parallel_for(0, g.outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(g.D * g.inner, 1)),
                 [&](int64_t b, int64_t e) {
                   std::vector<A> s(static_cast<size_t>(g.inner));
                   for (int64_t o = b; o < e; ++o) {
                     int64_t base = o * g.D * g.inner;
                     std::fill(s.begin(), s.end(), A(0));
                     for (int64_t d = 0; d < g.D; ++d)
                       for (int64_t i = 0; i < g.inner; ++i) {
                         int64_t k = base + d * g.inner + i;
                         s[i] += log ? static_cast<A>(gp[k])
                                     : static_cast<A>(gp[k]) * static_cast<A>(yp[k]);
                       }
                     for (int64_t d = 0; d < g.D; ++d)
                       for (int64_t i = 0; i < g.inner; ++i) {
                         int64_t k = base + d * g.inner + i;
                         A gv = static_cast<A>(gp[k]), yv = static_cast<A>(yp[k]);
                         gi[k] = static_cast<T>(log ? gv - math::exp(yv) * s[i] : yv * (gv - s[i]));
                       }
                   }
                 });
  });
}

}  // namespace ember
