// CPU layer norm over the rows of a contiguous (M, N) tensor: a row per task, statistics in the
// opmath type (float for 16-bit inputs); the weight and bias gradients are per-task partial sums
// added at the end.
#include <cmath>
#include <mutex>
#include <vector>

#include "ember/backend/cpu/thread_pool.h"
#include "ember/backend/functors/layer_norm.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {
int64_t rows_grain(int64_t N) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N, 1)); }

// sum of f(i) for i < n, in 16 partial sums: one running sum is a chain of dependent additions
// that neither vectorises nor pipelines (a third of the op's time at rows of 256).
template <typename A, typename F>
A lane_sum(int64_t n, F f) {
  constexpr int kLanes = 16;
  A acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] += f(i + j);
  A s = 0;
  for (; i < n; ++i) s += f(i);
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}
}  // namespace

void layer_norm_cpu(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                    const Tensor& y, const Tensor& mean, const Tensor& rstd) {
  const int64_t N = x.size(-1), M = N == 0 ? 0 : x.numel() / N;
  dispatch_floating(x.dtype(), "layer_norm", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = opmath_t<T>;
    const T* xp = x.data_ptr<T>();
    const T* wp = weight.defined() ? weight.data_ptr<T>() : nullptr;
    const T* bp = bias.defined() ? bias.data_ptr<T>() : nullptr;
    T* yp = y.data_ptr<T>();
    A* mp = mean.data_ptr<A>();
    A* rp = rstd.data_ptr<A>();
    parallel_for(0, M, rows_grain(N), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* row = xp + r * N;
        // Two passes (mean, then squared deviations) in A: a one-pass sum of squares cancels.
        A m = lane_sum<A>(N, [&](int64_t i) { return static_cast<A>(row[i]); }) /
              static_cast<A>(N);
        A ss = lane_sum<A>(N, [&](int64_t i) {
          A d = static_cast<A>(row[i]) - m;
          return d * d;
        });
        A rs = A(1) / std::sqrt(ss / static_cast<A>(N) + static_cast<A>(eps));
        mp[r] = m;
        rp[r] = rs;
        for (int64_t i = 0; i < N; ++i)
          yp[r * N + i] = static_cast<T>(layer_norm_forward<A>(
              static_cast<A>(row[i]), m, rs, wp ? static_cast<A>(wp[i]) : A(1),
              bp ? static_cast<A>(bp[i]) : A(0)));
      }
    });
  });
}

void layer_norm_backward_cpu(const Tensor& dy, const Tensor& x, const Tensor& mean,
                             const Tensor& rstd, const Tensor& weight, const Tensor& dx,
                             const Tensor& dweight, const Tensor& dbias) {
  const int64_t N = x.size(-1), M = N == 0 ? 0 : x.numel() / N;
  dispatch_floating(x.dtype(), "layer_norm_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using A = opmath_t<T>;
    const T* dyp = dy.data_ptr<T>();
    const T* xp = x.data_ptr<T>();
    const A* mp = mean.data_ptr<A>();
    const A* rp = rstd.data_ptr<A>();
    const T* wp = weight.defined() ? weight.data_ptr<T>() : nullptr;
    T* dxp = dx.defined() ? dx.data_ptr<T>() : nullptr;
    bool param_grads = dweight.defined() || dbias.defined();
    std::vector<A> dw_total(param_grads ? static_cast<size_t>(N) : 0),
        db_total(param_grads ? static_cast<size_t>(N) : 0);
    std::mutex total_mutex;
    parallel_for(0, M, rows_grain(N), [&](int64_t b, int64_t e) {
      std::vector<A> dw(param_grads ? static_cast<size_t>(N) : 0),
          db(param_grads ? static_cast<size_t>(N) : 0);
      for (int64_t r = b; r < e; ++r) {
        const T* xr = xp + r * N;
        const T* dyr = dyp + r * N;
        A m = mp[r], rs = rp[r];
        auto dyw_at = [&](int64_t i) {
          return static_cast<A>(dyr[i]) * (wp ? static_cast<A>(wp[i]) : A(1));
        };
        auto xhat_at = [&](int64_t i) { return (static_cast<A>(xr[i]) - m) * rs; };
        A sum_dyw = lane_sum<A>(N, dyw_at);
        A sum_dyw_xhat = lane_sum<A>(N, [&](int64_t i) { return dyw_at(i) * xhat_at(i); });
        if (param_grads)
          for (int64_t i = 0; i < N; ++i) {
            A g = static_cast<A>(dyr[i]);
            dw[static_cast<size_t>(i)] += g * xhat_at(i);
            db[static_cast<size_t>(i)] += g;
          }
        if (dxp)
          for (int64_t i = 0; i < N; ++i) {
            A xhat = (static_cast<A>(xr[i]) - m) * rs;
            A dyw = static_cast<A>(dyr[i]) * (wp ? static_cast<A>(wp[i]) : A(1));
            dxp[r * N + i] = static_cast<T>(layer_norm_backward<A>(
                dyw, xhat, rs, sum_dyw, sum_dyw_xhat, static_cast<A>(N)));
          }
      }
      if (param_grads) {
        std::lock_guard<std::mutex> lock(total_mutex);
        for (int64_t i = 0; i < N; ++i) {
          dw_total[static_cast<size_t>(i)] += dw[static_cast<size_t>(i)];
          db_total[static_cast<size_t>(i)] += db[static_cast<size_t>(i)];
        }
      }
    });
    if (dweight.defined()) {
      T* p = dweight.data_ptr<T>();
      for (int64_t i = 0; i < N; ++i) p[i] = static_cast<T>(dw_total[static_cast<size_t>(i)]);
    }
    if (dbias.defined()) {
      T* p = dbias.data_ptr<T>();
      for (int64_t i = 0; i < N; ++i) p[i] = static_cast<T>(db_total[static_cast<size_t>(i)]);
    }
  });
}

}  // namespace ember
