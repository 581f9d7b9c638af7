// CPU recurrent cells over one time step: a row of the batch per task (or the whole batch on one
// thread when it is small), the per-element math from backend/functors/rnn.h.
#include <algorithm>

#include "ember/backend/cpu/thread_pool.h"
#include "ember/backend/functors/rnn.h"
#include "ember/backend/kernels.h"
#include "ember/backend/wide_floating.h"

namespace ember {
namespace {

// Calls row(b) for each batch row with work, rows split over the pool when large enough.
template <typename F>
void for_rows(int64_t B, int64_t per_row, const Tensor& mask, F row) {
  const bool* m = mask.defined() ? mask.data_ptr<bool>() : nullptr;
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(per_row, 1));
  parallel_for(0, B, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) row(b, m == nullptr || m[b]);
  });
}

}  // namespace

// The per-row loops below take restrict pointers and keep the mask test outside the inner loop so
// that g++ vectorises them (the cells are the time steps' elementwise work).
template <typename T>
void lstm_row(T* __restrict g, const T* __restrict cp, T* __restrict co, T* __restrict ho,
              int64_t H) {
  for (int64_t j = 0; j < H; ++j)
    rnn::lstm_forward<T>(g[j], g[H + j], g[2 * H + j], g[3 * H + j], cp[j], co[j], ho[j]);
}

template <typename T>
void lstm_backward_row(const T* __restrict g, const T* __restrict cp, const T* __restrict co,
                       const T* __restrict dh, T* __restrict dc, T* __restrict dg, int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    T dcp;
    rnn::lstm_backward<T>(g[j], g[H + j], g[2 * H + j], g[3 * H + j], cp[j], co[j], dh[j], dc[j],
                          dg[j], dg[H + j], dg[2 * H + j], dg[3 * H + j], dcp);
    dc[j] = dcp;
  }
}

void lstm_cell_cpu(const Tensor& gates, const Tensor& c_prev, const Tensor& h_prev,
                   const Tensor& c, const Tensor& h, const Tensor& mask) {
  const int64_t B = c.size(0), H = c.size(1);
  dispatch_wide_floating(gates.dtype(), "lstm", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    T* g = gates.data_ptr<T>();
    const T* cp = c_prev.data_ptr<T>();
    const T* hp = h_prev.data_ptr<T>();
    T* co = c.data_ptr<T>();
    T* ho = h.data_ptr<T>();
    for_rows(B, 4 * H, mask, [&](int64_t b, bool valid) {
      if (valid) {
        lstm_row<T>(g + b * 4 * H, cp + b * H, co + b * H, ho + b * H, H);
      } else {
        std::copy(cp + b * H, cp + (b + 1) * H, co + b * H);
        std::copy(hp + b * H, hp + (b + 1) * H, ho + b * H);
      }
    });
  });
}

void lstm_cell_backward_cpu(const Tensor& gates, const Tensor& c_prev, const Tensor& c,
                            const Tensor& dh, const Tensor& dc, const Tensor& dgates,
                            const Tensor& mask) {
  const int64_t B = c.size(0), H = c.size(1);
  dispatch_wide_floating(gates.dtype(), "lstm_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    const T* g = gates.data_ptr<T>();
    const T* cp = c_prev.data_ptr<T>();
    const T* co = c.data_ptr<T>();
    const T* dhp = dh.data_ptr<T>();
    T* dcp = dc.data_ptr<T>();
    T* dg = dgates.data_ptr<T>();
    for_rows(B, 4 * H, mask, [&](int64_t b, bool valid) {
      if (valid)  // else the state passed through: dc reaches c_prev as it is
        lstm_backward_row<T>(g + b * 4 * H, cp + b * H, co + b * H, dhp + b * H, dcp + b * H,
                             dg + b * 4 * H, H);
      else
        std::fill(dg + b * 4 * H, dg + (b + 1) * 4 * H, T(0));
    });
  });
}

void gru_cell_cpu(const Tensor& gx, const Tensor& gh, const Tensor& h_prev, const Tensor& h,
                  const Tensor& mask) {
  const int64_t B = h.size(0), H = h.size(1);
  dispatch_wide_floating(gx.dtype(), "gru", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    T* x = gx.data_ptr<T>();
    const T* hh = gh.data_ptr<T>();
    const T* hp = h_prev.data_ptr<T>();
    T* ho = h.data_ptr<T>();
    for_rows(B, 3 * H, mask, [&](int64_t b, bool valid) {
      T* xr = x + b * 3 * H;
      const T* hr = hh + b * 3 * H;
      for (int64_t j = 0; j < H; ++j) {
        int64_t k = b * H + j;
        ho[k] = valid ? rnn::gru_forward<T>(xr[j], xr[H + j], xr[2 * H + j], hr[j], hr[H + j],
                                            hr[2 * H + j], hp[k])
                      : hp[k];
      }
    });
  });
}

void gru_cell_backward_cpu(const Tensor& gates, const Tensor& gh, const Tensor& h_prev,
                           const Tensor& dh, const Tensor& dgx, const Tensor& dgh,
                           const Tensor& dh_prev, const Tensor& mask) {
  const int64_t B = h_prev.size(0), H = h_prev.size(1);
  dispatch_wide_floating(gates.dtype(), "gru_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    const T* g = gates.data_ptr<T>();
    const T* hh = gh.data_ptr<T>();
    const T* hp = h_prev.data_ptr<T>();
    const T* d = dh.data_ptr<T>();
    T* dx = dgx.data_ptr<T>();
    T* dhh = dgh.data_ptr<T>();
    T* dhp = dh_prev.data_ptr<T>();
    for_rows(B, 3 * H, mask, [&](int64_t b, bool valid) {
      const T* gr = g + b * 3 * H;
      const T* hr = hh + b * 3 * H;
      T* dxr = dx + b * 3 * H;
      T* dhr = dhh + b * 3 * H;
      for (int64_t j = 0; j < H; ++j) {
        int64_t k = b * H + j;
        if (!valid) {
          dxr[j] = dxr[H + j] = dxr[2 * H + j] = dhr[j] = dhr[H + j] = dhr[2 * H + j] = T(0);
          dhp[k] = d[k];
          continue;
        }
        T dr, dz, dxn, dhn;
        rnn::gru_backward<T>(gr[j], gr[H + j], gr[2 * H + j], hr[2 * H + j], hp[k], d[k], dr, dz,
                             dxn, dhn, dhp[k]);
        dxr[j] = dhr[j] = dr;
        dxr[H + j] = dhr[H + j] = dz;
        dxr[2 * H + j] = dxn;
        dhr[2 * H + j] = dhn;
      }
    });
  });
}

void rnn_cell_cpu(const Tensor& pre, const Tensor& h_prev, const Tensor& h, bool relu,
                  const Tensor& mask) {
  const int64_t B = h.size(0), H = h.size(1);
  dispatch_wide_floating(pre.dtype(), "rnn", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    const T* p = pre.data_ptr<T>();
    const T* hp = h_prev.data_ptr<T>();
    T* ho = h.data_ptr<T>();
    for_rows(B, H, mask, [&](int64_t b, bool valid) {
      for (int64_t j = 0; j < H; ++j) {
        int64_t k = b * H + j;
        ho[k] = !valid ? hp[k] : relu ? (p[k] > T(0) ? p[k] : T(0)) : math::tanh(p[k]);
      }
    });
  });
}

void rnn_cell_backward_cpu(const Tensor& h, const Tensor& dh, const Tensor& dpre, bool relu,
                           const Tensor& mask) {
  const int64_t B = h.size(0), H = h.size(1);
  dispatch_wide_floating(h.dtype(), "rnn_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    const T* ho = h.data_ptr<T>();
    const T* d = dh.data_ptr<T>();
    T* dp = dpre.data_ptr<T>();
    for_rows(B, H, mask, [&](int64_t b, bool valid) {
      for (int64_t j = 0; j < H; ++j) {
        int64_t k = b * H + j;
        dp[k] = !valid ? T(0) : relu ? (ho[k] > T(0) ? d[k] : T(0)) : d[k] * (T(1) - ho[k] * ho[k]);
      }
    });
  });
}

}  // namespace ember
