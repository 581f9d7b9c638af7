// CPU batch norm over x viewed as (N, C, S): the per-channel sums (statistics, and the backward's
// sum_dy and sum_dy_xmu) take a channel per task and sum each contiguous row in 16 lanes the
// compiler turns into vector adds, rows adding up in double; the elementwise passes take rows.
#include <algorithm>
#include <cmath>

#include "ember/backend/batch_norm_layout.h"
#include "ember/backend/cpu/thread_pool.h"
#include "ember/backend/functors/batch_norm.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

constexpr int kLanes = 16;

// Returns sum over i < n of f(x[i]) (and, with a second input, f(x[i], y[i]) summed into a pair).
template <typename A, typename T, typename F>
A row_sum(const T* x, int64_t n, const F& f) {
  A lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lanes[j] += f(static_cast<A>(x[i + j]));
  A total = 0;
  for (; i < n; ++i) total += f(static_cast<A>(x[i]));
  for (int j = 0; j < kLanes; ++j) total += lanes[j];
  return total;
}

// Splits the channels over the pool so that each task has about kGrainSize elements.
template <typename F>
void for_channels(const BatchNormLayout& d, const F& f) {
  parallel_for(0, d.C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(d.N * d.S, 1)), f);
}
template <typename F>
void for_rows(const BatchNormLayout& d, const F& f) {
  parallel_for(0, d.N * d.C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(d.S, 1)), f);
}

// The per-channel value i of an optional (C) tensor in the statistics type.
template <typename A>
struct Channel {
  const A* p;
  A fallback;
  Channel(const Tensor& t, A fallback_)
      : p(t.defined() ? static_cast<const A*>(t.data_ptr()) : nullptr), fallback(fallback_) {}
  A operator[](int64_t i) const { return p ? p[i] : fallback; }
};

}  // namespace

void batch_norm_stats_cpu(const Tensor& x, const Tensor& mean, const Tensor& var) {
  BatchNormLayout d = batch_norm_layout(x);
  dispatch_batch_norm(x.dtype(), "batch_norm_stats", [&](auto tag, auto acc_tag) {
    using T = EMBER_TYPE(tag);
    using A = EMBER_TYPE(acc_tag);
    const T* xp = static_cast<const T*>(x.data_ptr());
    A* mp = static_cast<A*>(mean.data_ptr());
    A* vp = static_cast<A*>(var.data_ptr());
    double count = static_cast<double>(d.N * d.S);
    for_channels(d, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        // Two passes: the mean, then the squared deviations from it (no cancellation).
        double sum = 0;
        for (int64_t n = 0; n < d.N; ++n)
          sum += row_sum<A>(xp + (n * d.C + c) * d.S, d.S, [](A v) { return v; });
        A m = static_cast<A>(sum / count);
        double sq = 0;
        for (int64_t n = 0; n < d.N; ++n)
          sq += row_sum<A>(xp + (n * d.C + c) * d.S, d.S, [m](A v) { return (v - m) * (v - m); });
        mp[c] = m;
        vp[c] = static_cast<A>(sq / count);
      }
    });
  });
}

void batch_norm_elemt_cpu(const Tensor& x, const Tensor& mean, const Tensor& invstd,
                          const Tensor& weight, const Tensor& bias, const Tensor& out) {
  BatchNormLayout d = batch_norm_layout(x);
  dispatch_batch_norm(x.dtype(), "batch_norm_elemt", [&](auto tag, auto acc_tag) {
    using T = EMBER_TYPE(tag);
    using A = EMBER_TYPE(acc_tag);
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* op = static_cast<T*>(out.data_ptr());
    Channel<A> m(mean, 0), is(invstd, 1), w(weight, 1), b(bias, 0);
    for_rows(d, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        int64_t c = r % d.C;
        BatchNormForward<A> f(m[c], is[c], w[c], b[c]);
        const T* src = xp + r * d.S;
        T* dst = op + r * d.S;
        for (int64_t i = 0; i < d.S; ++i) dst[i] = static_cast<T>(f(static_cast<A>(src[i])));
      }
    });
  });
}

void batch_norm_backward_reduce_cpu(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                                    const Tensor& sum_dy, const Tensor& sum_dy_xmu) {
  BatchNormLayout d = batch_norm_layout(x);
  dispatch_batch_norm(x.dtype(), "batch_norm_backward_reduce", [&](auto tag, auto acc_tag) {
    using T = EMBER_TYPE(tag);
    using A = EMBER_TYPE(acc_tag);
    const T* xp = static_cast<const T*>(x.data_ptr());
    const T* gp = static_cast<const T*>(grad_out.data_ptr());
    const A* mp = static_cast<const A*>(mean.data_ptr());
    A* sdy = static_cast<A*>(sum_dy.data_ptr());
    A* sdx = static_cast<A*>(sum_dy_xmu.data_ptr());
    for_channels(d, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        A m = mp[c];
        double total_dy = 0, total_dx = 0;
        for (int64_t n = 0; n < d.N; ++n) {
          const T* g = gp + (n * d.C + c) * d.S;
          const T* xr = xp + (n * d.C + c) * d.S;
          A lanes_dy[kLanes] = {}, lanes_dx[kLanes] = {};
          int64_t i = 0;
          for (; i + kLanes <= d.S; i += kLanes)
            for (int j = 0; j < kLanes; ++j) {
              A dy = static_cast<A>(g[i + j]);
              lanes_dy[j] += dy;
              lanes_dx[j] += dy * (static_cast<A>(xr[i + j]) - m);
            }
          A row_dy = 0, row_dx = 0;
          for (; i < d.S; ++i) {
            A dy = static_cast<A>(g[i]);
            row_dy += dy;
            row_dx += dy * (static_cast<A>(xr[i]) - m);
          }
          for (int j = 0; j < kLanes; ++j) {
            row_dy += lanes_dy[j];
            row_dx += lanes_dx[j];
          }
          total_dy += static_cast<double>(row_dy);
          total_dx += static_cast<double>(row_dx);
        }
        sdy[c] = static_cast<A>(total_dy);
        sdx[c] = static_cast<A>(total_dx);
      }
    });
  });
}

void batch_norm_backward_elemt_cpu(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                                   const Tensor& invstd, const Tensor& weight, const Tensor& sum_dy,
                                   const Tensor& sum_dy_xmu, double count, const Tensor& grad_in) {
  BatchNormLayout d = batch_norm_layout(x);
  dispatch_batch_norm(x.dtype(), "batch_norm_backward_elemt", [&](auto tag, auto acc_tag) {
    using T = EMBER_TYPE(tag);
    using A = EMBER_TYPE(acc_tag);
    const T* xp = static_cast<const T*>(x.data_ptr());
    const T* gp = static_cast<const T*>(grad_out.data_ptr());
    T* gx = static_cast<T*>(grad_in.data_ptr());
    Channel<A> m(mean, 0), is(invstd, 1), w(weight, 1), sdy(sum_dy, 0), sdx(sum_dy_xmu, 0);
    for_rows(d, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        int64_t c = r % d.C;
        BatchNormBackward<A> f(m[c], is[c], w[c], sdy[c], sdx[c], static_cast<A>(count));
        const T* g = gp + r * d.S;
        const T* xr = xp + r * d.S;
        T* dst = gx + r * d.S;
        for (int64_t i = 0; i < d.S; ++i)
          dst[i] = static_cast<T>(f(static_cast<A>(g[i]), static_cast<A>(xr[i])));
      }
    });
  });
}

}  // namespace ember
