// The recurrent cells' per-element math, written once for the CPU loop and the CUDA kernel.
// Gate layouts are PyTorch's: LSTM (i, f, g, o), GRU (r, z, n), each a block of H columns.
#pragma once

#include "ember/backend/functors/math.h"

namespace ember::rnn {

template <typename A>
EMBER_HOST_DEVICE inline A sigmoid(A x) {
  return A(1) / (A(1) + math::exp(-x));
}

/// One LSTM element: pre-activation gates in, activated gates written back (for backward), the
/// new cell and hidden state out.
template <typename A>
EMBER_HOST_DEVICE inline void lstm_forward(A& i, A& f, A& g, A& o, A c_prev, A& c, A& h) {
  i = sigmoid(i);
  f = sigmoid(f);
  g = math::tanh(g);
  o = sigmoid(o);
  c = f * c_prev + i * g;
  h = o * math::tanh(c);
}

/// Its backward: from dh and dc (the gradients reaching the new h and c), the pre-activation
/// gates' gradients and the gradient of c_prev.
template <typename A>
EMBER_HOST_DEVICE inline void lstm_backward(A i, A f, A g, A o, A c_prev, A c, A dh, A dc,
                                            A& di, A& df, A& dg, A& do_, A& dc_prev) {
  A tc = math::tanh(c);
  A dc_total = dc + dh * o * (A(1) - tc * tc);
  do_ = dh * tc * o * (A(1) - o);
  di = dc_total * g * i * (A(1) - i);
  dg = dc_total * i * (A(1) - g * g);
  df = dc_total * c_prev * f * (A(1) - f);
  dc_prev = dc_total * f;
}

/// One GRU element: xr, xz, xn from the input (bias b_ih included), hr, hz, hn from the hidden
/// state (b_hh included). Writes the activated r, z, n over xr, xz, xn.
template <typename A>
EMBER_HOST_DEVICE inline A gru_forward(A& xr, A& xz, A& xn, A hr, A hz, A hn, A h_prev) {
  A r = sigmoid(xr + hr), z = sigmoid(xz + hz);
  A n = math::tanh(xn + r * hn);
  xr = r;
  xz = z;
  xn = n;
  return (A(1) - z) * n + z * h_prev;
}

/// GRU's backward from dh (the new h's gradient): the input-side and hidden-side gate gradients
/// (dxr == dhr and dxz == dhz; dxn and dhn differ by r) and the direct part of h_prev's gradient.
template <typename A>
EMBER_HOST_DEVICE inline void gru_backward(A r, A z, A n, A hn, A h_prev, A dh, A& dr, A& dz,
                                           A& dxn, A& dhn, A& dh_prev) {
  A dn = dh * (A(1) - z);
  A dn_pre = dn * (A(1) - n * n);
  A drr = dn_pre * hn;
  dr = drr * r * (A(1) - r);
  dz = dh * (h_prev - n) * z * (A(1) - z);
  dxn = dn_pre;
  dhn = dn_pre * r;
  dh_prev = dh * z;
}

}  // namespace ember::rnn
