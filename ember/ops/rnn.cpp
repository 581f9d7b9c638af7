#include "ember/ops/rnn.h"

#include "ember/backend/cudnn.h"
#include "ember/ops/autocast.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/join.h"
#include "ember/ops/linalg.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/shape.h"

namespace ember {
namespace {

// Which rows take step t: (T, B) bool on x's device, or undefined without lengths.
Tensor step_masks(const Tensor& lengths, int64_t T, const Device& device) {
  if (!lengths.defined()) return Tensor();
  Tensor steps = arange(T, TensorOptions(kInt64)).unsqueeze(1);
  return lt(steps, lengths.to(Device(kCPU, 0), kInt64).unsqueeze(0)).to(device);
}
Tensor mask_at(const Tensor& masks, int64_t t) {
  return masks.defined() ? masks.select(0, t).contiguous() : Tensor();
}

// The hidden state before each step, in step order of the tensors (T, B, H): h0 where a
// direction starts, else the neighbouring step's output.
Tensor states_before(const Tensor& h0, const Tensor& outputs, bool reverse) {
  int64_t T = outputs.size(0);
  if (T == 1) return h0.unsqueeze(0);
  return reverse ? cat({outputs.narrow(0, 1, T - 1), h0.unsqueeze(0)})
                 : cat({h0.unsqueeze(0), outputs.narrow(0, 0, T - 1)});
}

// dh_prev = dgates @ w + (where a row's step was skipped) the gradient that passed through it.
Tensor hidden_grad(const Tensor& dgates, const Tensor& w_hh, const Tensor& dh_total,
                   const Tensor& mask) {
  Tensor dh = matmul(dgates, w_hh);
  if (mask.defined()) dh = where(mask.unsqueeze(1), dh, dh_total);
  return dh;
}

void check_layer(const char* op, const Tensor& x_proj, const Tensor& h0, const Tensor& w_hh,
                 int64_t gates) {
  check_defined(op, x_proj);
  check_same_device(op, {&x_proj, &h0, &w_hh});
  EMBER_CHECK(x_proj.dtype() == kFloat32 || x_proj.dtype() == kFloat64, "[", op,
              "] ember's recurrent kernels take float32 or float64, got ", x_proj.dtype());
  EMBER_CHECK(x_proj.dim() == 3 && h0.dim() == 2 && w_hh.dim() == 2, "[", op,
              "] expected x_proj (T, B, G*H), h0 (B, H) and w_hh (G*H, H), got ", x_proj.sizes(),
              ", ", h0.sizes(), " and ", w_hh.sizes());
  int64_t H = h0.size(1);
  EMBER_CHECK(x_proj.size(2) == gates * H && w_hh.size(0) == gates * H && w_hh.size(1) == H &&
                  x_proj.size(1) == h0.size(0),
              "[", op, "] shapes do not agree: x_proj ", x_proj.sizes(), ", h0 ", h0.sizes(),
              ", w_hh ", w_hh.sizes());
}

// An LSTM direction with projections (proj_size > 0): h_t = W_hr (o_t * tanh(c_t)), and the
// gates read the projected h. Composed of ordinary ops step by step (autograd records each):
// the fused layer above serves the common case without projections. masks: step_masks's.
std::tuple<Tensor, Tensor, Tensor> lstm_projected_layer(const Tensor& xp, const Tensor& h0,
                                                        const Tensor& c0, const Tensor& w_hh_in,
                                                        const Tensor& w_hr_in, const Tensor& masks,
                                                        bool reverse) {
  const int64_t T = xp.size(0);
  Tensor w_hh = w_hh_in.to(xp.dtype()), w_hr = w_hr_in.to(xp.dtype());
  Tensor h = h0.to(xp.dtype()), c = c0.to(xp.dtype());
  if (T == 0) return {empty({0, xp.size(1), w_hr.size(0)}, xp.options()), h, c};
  std::vector<Tensor> outs(static_cast<size_t>(T));
  for (int64_t s = 0; s < T; ++s) {
    int64_t t = reverse ? T - 1 - s : s;
    std::vector<Tensor> g = (xp.select(0, t) + matmul(h, w_hh.t())).chunk(4, 1);
    Tensor c_new = sigmoid(g[1]) * c + sigmoid(g[0]) * tanh(g[2]);
    Tensor h_new = matmul(sigmoid(g[3]) * tanh(c_new), w_hr.t());
    if (masks.defined()) {  // rows past their sequence's end keep their state
      Tensor m = masks.select(0, t).unsqueeze(1);
      c_new = where(m, c_new, c);
      h_new = where(m, h_new, h);
    }
    c = c_new;
    h = h_new;
    outs[static_cast<size_t>(t)] = h;
  }
  return {stack(outs), h, c};
}

// Dropout between stacked layers, as PyTorch applies it (not after the last).
Tensor drop_between_layers(const Tensor& input, double p) {
  return p >= 1 ? input * 0.0 : input * bernoulli(input, 1 - p) * (1.0 / (1 - p));
}

// Note [Recurrent layers on cuDNN]
// On CUDA with cuDNN a stack runs as one cuDNN call and one autograd node (CudnnRnnBackward0), as
// PyTorch's _cudnn_rnn; with dropout between layers, one call per layer, ember drawing the masks
// in between. The parameters stay PyTorch's tensors (Note [cuDNN weight space]); each call packs
// them into cuDNN's weight space and the backward unpacks the space's gradient. Without cuDNN, or
// with cudnn.enabled off, the layers below run on either device.
bool use_cudnn(const Tensor& x) {
  return x.is_cuda() && cudnn::built() && cudnn::enabled() && x.size(0) > 0 && x.size(1) > 0;
}

// weights: (w_ih, w_hh, b_ih, b_hh[, w_hr]) per layer and direction of `shape`; lengths: int64
// on the CPU or undefined. Returns (y, hy, cy).
std::tuple<Tensor, Tensor, Tensor> cudnn_stack(const cudnn::RnnShape& shape, const Tensor& x_in,
                                               const Tensor& hx_in, const Tensor& cx_in,
                                               std::vector<Tensor> weights, const Tensor& lengths) {
  const DType dtype = x_in.dtype();
  Tensor x = x_in.contiguous(), hx = hx_in.contiguous();
  Tensor cx = cx_in.defined() ? cx_in.contiguous() : Tensor();
  for (Tensor& w : weights)
    if (w.defined()) w = w.to(dtype);
  const cudnn::RnnLayout* layout = &cudnn::rnn_layout(shape, dtype, x.device().index());
  Tensor space = zeros({layout->elements}, x.options());
  {
    NoGradGuard no_grad;
    for (const cudnn::WeightBlock& b : layout->blocks)
      space.narrow(0, b.offset, b.rows * b.cols)
          .copy_(weights[b.weight].narrow(0, b.row, b.rows).reshape({-1}));
  }
  std::vector<Tensor> inputs{x, hx, cx};
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  const bool train = GradMode::is_enabled() && any_requires_grad(inputs);
  Tensor y = empty({x.size(0), x.size(1), shape.directions() * shape.output_size()}, x.options());
  Tensor hy = empty(hx.sizes(), hx.options());
  Tensor cy = cx.defined() ? empty(cx.sizes(), cx.options()) : Tensor();
  Tensor reserve;
  if (train)
    reserve = empty({cudnn::rnn_reserve_bytes(shape, x, lengths)},
                    TensorOptions(x.device()).with_dtype(kUInt8));
  cudnn::rnn_forward(shape, x, hx, cx, space, lengths, y, hy, cy, reserve);
  if (train) {
    std::vector<Tensor> outputs{y, hy};
    if (cy.defined()) outputs.push_back(cy);
    // Detached: the node keeps its own output without a cycle through its history.
    record_list("CudnnRnnBackward0", outputs, inputs,
                [shape, x, hx, cx, weights, layout, space, lengths, reserve, y = y.detach()](
                    std::vector<Tensor>& grads, const Node&) -> TensorList {
                  auto or_zeros = [](const Tensor& g, const Tensor& like) {
                    return g.defined() ? g.contiguous() : zeros_like(like);
                  };
                  Tensor dy = or_zeros(grads[0], y), dhy = or_zeros(grads[1], hx);
                  Tensor dcy = cx.defined() ? or_zeros(grads[2], cx) : Tensor();
                  // cuDNN documents its padding fill for outputs only: the input gradient of
                  // steps past a sequence's end starts as zeros rather than trusting it.
                  Tensor dx = lengths.defined() ? zeros(x.sizes(), x.options())
                                                : empty(x.sizes(), x.options());
                  Tensor dhx = empty(hx.sizes(), hx.options());
                  Tensor dcx = cx.defined() ? empty(cx.sizes(), cx.options()) : Tensor();
                  Tensor dspace = zeros_like(space);
                  cudnn::rnn_backward(shape, x, hx, cx, space, lengths, y, reserve, dy, dhy, dcy,
                                      dx, dhx, dcx, dspace);
                  TensorList out{dx, dhx, dcx};
                  for (const Tensor& w : weights)
                    out.push_back(w.defined() ? empty(w.sizes(), w.options()) : Tensor());
                  for (const cudnn::WeightBlock& b : layout->blocks) {
                    Tensor block = dspace.narrow(0, b.offset, b.rows * b.cols);
                    out[3 + b.weight]
                        .narrow(0, b.row, b.rows)
                        .copy_(b.cols == 1 ? block : block.view({b.rows, b.cols}));
                  }
                  return out;
                });
  }
  return {y, hy, cy};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& x_proj, const Tensor& h0_in,
                                              const Tensor& c0_in, const Tensor& w_hh,
                                              const Tensor& lengths, bool reverse) {
  EMBER_OP(lstm_layer, x_proj, h0_in, c0_in, w_hh, lengths, reverse);
  check_layer("lstm", x_proj, h0_in, w_hh, 4);
  const int64_t T = x_proj.size(0), B = x_proj.size(1), H = h0_in.size(1);
  Tensor h0 = h0_in.to(x_proj.dtype()).contiguous(), c0 = c0_in.to(x_proj.dtype()).contiguous();
  Tensor w = w_hh.to(x_proj.dtype());
  Tensor masks = step_masks(lengths, T, x_proj.device());
  TensorOptions o = x_proj.options();
  Tensor gates = empty({T, B, 4 * H}, o), cs = empty({T, B, H}, o), hs = empty({T, B, H}, o);
  {
    NoGradGuard no_grad;
    Tensor xp = x_proj.contiguous(), wt = w.t(), h = h0, c = c0;
    for (int64_t s = 0; s < T; ++s) {
      int64_t t = reverse ? T - 1 - s : s;
      Tensor g = gates.select(0, t);
      g.copy_(xp.select(0, t));
      gemm_into(h, wt, g, 1, 1);
      Tensor ct = cs.select(0, t), ht = hs.select(0, t);
      EMBER_DISPATCH_DEVICE(o.device, lstm_cell, g, c, h, ct, ht, mask_at(masks, t));
      h = ht;
      c = ct;
    }
  }
  int64_t last = reverse ? 0 : T - 1;
  Tensor out = hs, h_n = T > 0 ? hs.select(0, last).clone() : h0.clone(),
         c_n = T > 0 ? cs.select(0, last).clone() : c0.clone();
  if (any_requires_grad({&x_proj, &h0_in, &c0_in, &w_hh})) {
    // Detached aliases: the node keeps its own outputs without a cycle through their history.
    record("LstmBackward0", {&out, &h_n, &c_n}, {&x_proj, &h0_in, &c0_in, &w_hh},
           [gates, cs = cs.detach(), hs = hs.detach(), h0, c0, w, masks, reverse](
               std::vector<Tensor>& grads, const Node&) -> TensorList {
             const int64_t T = gates.size(0);
             const Tensor& dout = grads[0];
             Tensor dh = grads[1].defined() ? grads[1].contiguous() : zeros_like(h0);
             Tensor dc = grads[2].defined() ? grads[2].clone() : zeros_like(c0);
             Tensor dgates = empty(gates.sizes(), gates.options());
             for (int64_t s = T - 1; s >= 0; --s) {
               int64_t t = reverse ? T - 1 - s : s;
               Tensor dh_total = dout.defined() ? (dh + dout.select(0, t)).contiguous() : dh;
               int64_t prev = reverse ? t + 1 : t - 1;
               Tensor c_prev = s == 0 ? c0 : cs.select(0, prev);
               Tensor dg = dgates.select(0, t), mask = mask_at(masks, t);
               EMBER_DISPATCH_DEVICE(gates.device(), lstm_cell_backward, gates.select(0, t), c_prev,
                                     cs.select(0, t), dh_total, dc, dg, mask);
               dh = hidden_grad(dg, w, dh_total, mask);
             }
             Tensor hprev = states_before(h0, hs, reverse).reshape({-1, h0.size(1)});
             Tensor dw = matmul(dgates.reshape({-1, dgates.size(2)}).t(), hprev);
             return {dgates, dh, dc, dw};
           });
  }
  return {out, h_n, c_n};
}

std::tuple<Tensor, Tensor> gru_layer(const Tensor& x_proj, const Tensor& h0_in, const Tensor& w_hh,
                                     const Tensor& b_hh, const Tensor& lengths, bool reverse) {
  EMBER_OP(gru_layer, x_proj, h0_in, w_hh, b_hh, lengths, reverse);
  check_layer("gru", x_proj, h0_in, w_hh, 3);
  const int64_t T = x_proj.size(0), B = x_proj.size(1), H = h0_in.size(1);
  Tensor h0 = h0_in.to(x_proj.dtype()).contiguous();
  Tensor w = w_hh.to(x_proj.dtype());
  Tensor b = b_hh.defined() ? b_hh.to(x_proj.dtype()) : zeros({3 * H}, x_proj.options());
  Tensor masks = step_masks(lengths, T, x_proj.device());
  TensorOptions o = x_proj.options();
  Tensor gates = empty({T, B, 3 * H}, o), ghs = empty({T, B, 3 * H}, o), hs = empty({T, B, H}, o);
  {
    NoGradGuard no_grad;
    Tensor xp = x_proj.contiguous(), wt = w.t(), h = h0;
    for (int64_t s = 0; s < T; ++s) {
      int64_t t = reverse ? T - 1 - s : s;
      Tensor g = gates.select(0, t), gh = ghs.select(0, t);
      g.copy_(xp.select(0, t));
      gh.copy_(b.expand({B, 3 * H}));
      gemm_into(h, wt, gh, 1, 1);
      Tensor ht = hs.select(0, t);
      EMBER_DISPATCH_DEVICE(o.device, gru_cell, g, gh, h, ht, mask_at(masks, t));
      h = ht;
    }
  }
  Tensor out = hs, h_n = T > 0 ? hs.select(0, reverse ? 0 : T - 1).clone() : h0.clone();
  if (any_requires_grad({&x_proj, &h0_in, &w_hh, &b_hh})) {
    record("GruBackward0", {&out, &h_n}, {&x_proj, &h0_in, &w_hh, &b_hh},
           [gates, ghs, hs = hs.detach(), h0, w, masks, reverse](std::vector<Tensor>& grads,
                                                                 const Node&) -> TensorList {
             const int64_t T = gates.size(0);
             const Tensor& dout = grads[0];
             Tensor dh = grads[1].defined() ? grads[1].contiguous() : zeros_like(h0);
             Tensor dgx = empty(gates.sizes(), gates.options());
             Tensor dgh = empty(ghs.sizes(), ghs.options());
             Tensor dh_direct = empty(h0.sizes(), h0.options());
             for (int64_t s = T - 1; s >= 0; --s) {
               int64_t t = reverse ? T - 1 - s : s;
               Tensor dh_total = dout.defined() ? (dh + dout.select(0, t)).contiguous() : dh;
               int64_t prev = reverse ? t + 1 : t - 1;
               Tensor h_prev = s == 0 ? h0 : hs.select(0, prev);
               Tensor dx = dgx.select(0, t), dhh = dgh.select(0, t);
               EMBER_DISPATCH_DEVICE(gates.device(), gru_cell_backward, gates.select(0, t),
                                     ghs.select(0, t), h_prev, dh_total, dx, dhh, dh_direct,
                                     mask_at(masks, t));
               dh = dh_direct + matmul(dhh, w);
             }
             Tensor hprev = states_before(h0, hs, reverse).reshape({-1, h0.size(1)});
             Tensor flat = dgh.reshape({-1, dgh.size(2)});
             return {dgx, dh, matmul(flat.t(), hprev), flat.sum({0})};
           });
  }
  return {out, h_n};
}

std::tuple<Tensor, Tensor> rnn_layer(const Tensor& x_proj, const Tensor& h0_in, const Tensor& w_hh,
                                     bool relu, const Tensor& lengths, bool reverse) {
  EMBER_OP(rnn_layer, x_proj, h0_in, w_hh, relu, lengths, reverse);
  check_layer("rnn", x_proj, h0_in, w_hh, 1);
  const int64_t T = x_proj.size(0), B = x_proj.size(1), H = h0_in.size(1);
  Tensor h0 = h0_in.to(x_proj.dtype()).contiguous();
  Tensor w = w_hh.to(x_proj.dtype());
  Tensor masks = step_masks(lengths, T, x_proj.device());
  TensorOptions o = x_proj.options();
  Tensor pre = empty({T, B, H}, o), hs = empty({T, B, H}, o);
  {
    NoGradGuard no_grad;
    Tensor xp = x_proj.contiguous(), wt = w.t(), h = h0;
    for (int64_t s = 0; s < T; ++s) {
      int64_t t = reverse ? T - 1 - s : s;
      Tensor p = pre.select(0, t);
      p.copy_(xp.select(0, t));
      gemm_into(h, wt, p, 1, 1);
      Tensor ht = hs.select(0, t);
      EMBER_DISPATCH_DEVICE(o.device, rnn_cell, p, h, ht, relu, mask_at(masks, t));
      h = ht;
    }
  }
  Tensor out = hs, h_n = T > 0 ? hs.select(0, reverse ? 0 : T - 1).clone() : h0.clone();
  if (any_requires_grad({&x_proj, &h0_in, &w_hh})) {
    record("RnnBackward0", {&out, &h_n}, {&x_proj, &h0_in, &w_hh},
           [hs = hs.detach(), h0, w, masks, relu, reverse](std::vector<Tensor>& grads,
                                                           const Node&) -> TensorList {
             const int64_t T = hs.size(0);
             const Tensor& dout = grads[0];
             Tensor dh = grads[1].defined() ? grads[1].contiguous() : zeros_like(h0);
             Tensor dpre = empty(hs.sizes(), hs.options());
             for (int64_t s = T - 1; s >= 0; --s) {
               int64_t t = reverse ? T - 1 - s : s;
               Tensor dh_total = dout.defined() ? (dh + dout.select(0, t)).contiguous() : dh;
               Tensor dp = dpre.select(0, t), mask = mask_at(masks, t);
               EMBER_DISPATCH_DEVICE(hs.device(), rnn_cell_backward, hs.select(0, t), dh_total, dp,
                                     relu, mask);
               dh = hidden_grad(dp, w, dh_total, mask);
             }
             Tensor hprev = states_before(h0, hs, reverse).reshape({-1, h0.size(1)});
             return {dpre, dh, matmul(dpre.reshape({-1, dpre.size(2)}).t(), hprev)};
           });
  }
  return {out, h_n};
}

std::tuple<Tensor, Tensor, Tensor> recurrent(const Tensor& x_in, const Tensor& h0_in,
                                             const Tensor& c0_in,
                                             const std::vector<Tensor>& weights,
                                             const RecurrentOptions& o, const Tensor& lengths) {
  EMBER_OP(recurrent, x_in, h0_in, c0_in, weights, o, lengths);
  using Kind = RecurrentOptions::Kind;
  const char* op = o.kind == Kind::Lstm ? "LSTM" : o.kind == Kind::Gru ? "GRU" : "RNN";
  check_defined(op, x_in);
  const int64_t D = o.bidirectional ? 2 : 1;
  EMBER_CHECK(o.proj_size == 0 || o.kind == Kind::Lstm, "[", op,
              "] proj_size argument is only supported for LSTM, not RNN or GRU");
  // (w_ih, w_hh, b_ih, b_hh) per layer and direction, and w_hr with projections.
  const int64_t per = o.proj_size > 0 ? 5 : 4;
  EMBER_CHECK(o.num_layers >= 1 && weights.size() == static_cast<size_t>(per * o.num_layers * D),
              "[", op, "] expected ", per * o.num_layers * D, " weights (w_ih, w_hh, b_ih, b_hh",
              per == 5 ? ", w_hr" : "", " for ", o.num_layers, " layers x ", D,
              " directions), got ", weights.size());
  bool unbatched = x_in.dim() == 2;
  EMBER_CHECK(x_in.dim() == 2 || x_in.dim() == 3, "[", op,
              "] expected a 2-D (unbatched) or 3-D input, got shape ", x_in.sizes());
  Tensor x = unbatched ? x_in.unsqueeze(1) : (o.batch_first ? x_in.transpose(0, 1) : x_in);
  // Autocast runs recurrent layers in float32 (ember's kernels take float32 and float64).
  if (x.dtype() != kFloat64) x = x.to(kFloat32);
  // H: the cells' width; P: h's (proj_size, or H without projections).
  const int64_t T = x.size(0), B = x.size(1), H = weights[0].size(0) / gate_count(o.kind);
  const int64_t P = o.proj_size > 0 ? o.proj_size : H;
  EMBER_CHECK(o.proj_size < H, "[", op, "] proj_size has to be smaller than hidden_size, got ",
              o.proj_size, " and ", H);
  EMBER_CHECK(weights[0].size(1) == x.size(2), "[", op,
              "] input.size(-1) must be equal to input_size. Expected ", weights[0].size(1),
              ", got ", x.size(2));
  auto state = [&](const Tensor& s, const char* name, int64_t features) {
    if (!s.defined()) return zeros({o.num_layers * D, B, features}, x.options());
    Tensor v = unbatched ? s.unsqueeze(1) : s;
    EMBER_CHECK(
        v.dim() == 3 && v.size(0) == o.num_layers * D && v.size(1) == B && v.size(2) == features,
        "[", op, "] Expected hidden size (", o.num_layers * D, ", ", B, ", ", features, ") for ",
        name, ", got ", s.sizes());
    return v.to(x.dtype());
  };
  Tensor h0 = state(h0_in, "hx", P);
  Tensor c0 = o.kind == Kind::Lstm ? state(c0_in, "cx", H) : Tensor();
  EMBER_CHECK(!lengths.defined() || (lengths.dim() == 1 && lengths.numel() == B), "[", op,
              "] expected one sequence length per batch entry (", B, "), got shape ",
              lengths.defined() ? lengths.sizes() : Shape{});
  const bool drop = o.dropout > 0 && o.training;
  Tensor output, h_n, c_n;
  if (use_cudnn(x)) {
    check_same_device(op, {&x, &h0});
    if (c0.defined()) check_same_device(op, {&x, &c0});
    for (const Tensor& w : weights)
      if (w.defined()) check_same_device(op, {&x, &w});
    Tensor cpu_lengths;
    if (lengths.defined()) {
      cpu_lengths = lengths.to(Device(kCPU, 0), kInt64).contiguous();
      const int64_t* l = cpu_lengths.data_ptr<int64_t>();
      for (int64_t b = 0; b < cpu_lengths.numel(); ++b)
        EMBER_CHECK(l[b] >= 1 && l[b] <= T, "[", op, "] sequence lengths must be in [1, ", T,
                    "], got ", l[b], " for sequence ", b);
    }
    cudnn::RnnShape shape;
    shape.mode = o.kind == Kind::Lstm      ? cudnn::RnnMode::Lstm
                 : o.kind == Kind::Gru     ? cudnn::RnnMode::Gru
                 : o.kind == Kind::RnnRelu ? cudnn::RnnMode::RnnRelu
                                           : cudnn::RnnMode::RnnTanh;
    shape.hidden_size = H;
    shape.proj_size = o.proj_size;
    shape.num_layers = drop ? 1 : o.num_layers;
    shape.bidirectional = o.bidirectional;
    shape.bias = weights[2].defined();
    const int64_t layers = shape.num_layers;  // per call
    Tensor input = x;
    std::vector<Tensor> hs, cs;
    for (int64_t l = 0; l < o.num_layers; l += layers) {
      shape.input_size = input.size(2);
      auto first = weights.begin() + per * l * D;
      auto [y, hy, cy] =
          cudnn_stack(shape, input, h0.narrow(0, l * D, layers * D),
                      c0.defined() ? c0.narrow(0, l * D, layers * D) : Tensor(),
                      std::vector<Tensor>(first, first + per * layers * D), cpu_lengths);
      hs.push_back(hy);
      if (cy.defined()) cs.push_back(cy);
      input = drop && l + layers < o.num_layers ? drop_between_layers(y, o.dropout) : y;
    }
    output = input;
    h_n = hs.size() == 1 ? hs[0] : cat(hs);
    c_n = cs.empty() ? Tensor() : cs.size() == 1 ? cs[0] : cat(cs);
  } else {
    Tensor input = x;
    std::vector<Tensor> hs, cs;
    for (int64_t l = 0; l < o.num_layers; ++l) {
      std::vector<Tensor> outs;
      for (int64_t d = 0; d < D; ++d) {
        size_t k = static_cast<size_t>(per * (l * D + d));
        const Tensor &w_ih = weights[k], &w_hh = weights[k + 1], &b_ih = weights[k + 2],
                     &b_hh = weights[k + 3];
        Tensor h = h0.select(0, l * D + d);
        bool rev = d == 1;
        if (o.kind == Kind::Gru) {
          Tensor xp = linear(input, w_ih.to(x.dtype()), b_ih.defined() ? b_ih.to(x.dtype()) : b_ih);
          auto [out, hn] = gru_layer(xp, h, w_hh, b_hh, lengths, rev);
          outs.push_back(out);
          hs.push_back(hn);
          continue;
        }
        // LSTM and RNN add both biases to the input's projection.
        Tensor xp = linear(input, w_ih.to(x.dtype()), b_ih.defined() ? b_ih.to(x.dtype()) : b_ih);
        if (b_hh.defined()) xp = xp + b_hh.to(x.dtype());
        if (o.kind == Kind::Lstm) {
          auto [out, hn, cn] =
              o.proj_size > 0
                  ? lstm_projected_layer(xp, h, c0.select(0, l * D + d), w_hh, weights[k + 4],
                                         step_masks(lengths, T, x.device()), rev)
                  : lstm_layer(xp, h, c0.select(0, l * D + d), w_hh, lengths, rev);
          outs.push_back(out);
          hs.push_back(hn);
          cs.push_back(cn);
        } else {
          auto [out, hn] = rnn_layer(xp, h, w_hh, o.kind == Kind::RnnRelu, lengths, rev);
          outs.push_back(out);
          hs.push_back(hn);
        }
      }
      input = D == 2 ? cat(outs, 2) : outs[0];
      if (drop && l + 1 < o.num_layers) input = drop_between_layers(input, o.dropout);
    }
    output = input;
    if (lengths.defined()) {  // padded steps are zeros, as pad_packed_sequence gives them
      Tensor masks = step_masks(lengths, T, x.device());
      output = output * masks.unsqueeze(2).to(output.dtype());
    }
    h_n = stack(hs);
    c_n = cs.empty() ? Tensor() : stack(cs);
  }
  if (unbatched)
    output = output.squeeze(1);
  else if (o.batch_first)
    output = output.transpose(0, 1);
  if (unbatched) {
    h_n = h_n.squeeze(1);
    if (c_n.defined()) c_n = c_n.squeeze(1);
  }
  return {output, h_n, c_n};
}

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& x, const Tensor& h, const Tensor& c,
                                     const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                     const Tensor& b_hh) {
  EMBER_OP(lstm_cell, x, h, c, w_ih, w_hh, b_ih, b_hh);
  bool unbatched = x.dim() == 1;
  Tensor xb = unbatched ? x.unsqueeze(0) : x;
  Tensor xp = linear(xb, w_ih, b_ih);
  if (b_hh.defined()) xp = xp + b_hh;
  int64_t H = w_hh.size(1);
  Tensor hb = h.defined() ? (unbatched ? h.unsqueeze(0) : h) : zeros({xb.size(0), H}, xb.options());
  Tensor cb = c.defined() ? (unbatched ? c.unsqueeze(0) : c) : zeros({xb.size(0), H}, xb.options());
  auto [out, hn, cn] = lstm_layer(xp.unsqueeze(0), hb, cb, w_hh);
  return {unbatched ? hn.squeeze(0) : hn, unbatched ? cn.squeeze(0) : cn};
}

Tensor gru_cell(const Tensor& x, const Tensor& h, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh) {
  EMBER_OP(gru_cell, x, h, w_ih, w_hh, b_ih, b_hh);
  bool unbatched = x.dim() == 1;
  Tensor xb = unbatched ? x.unsqueeze(0) : x;
  int64_t H = w_hh.size(1);
  Tensor hb = h.defined() ? (unbatched ? h.unsqueeze(0) : h) : zeros({xb.size(0), H}, xb.options());
  auto [out, hn] = gru_layer(linear(xb, w_ih, b_ih).unsqueeze(0), hb, w_hh, b_hh);
  return unbatched ? hn.squeeze(0) : hn;
}

Tensor rnn_cell(const Tensor& x, const Tensor& h, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh, bool relu) {
  EMBER_OP(rnn_cell, x, h, w_ih, w_hh, b_ih, b_hh, relu);
  bool unbatched = x.dim() == 1;
  Tensor xb = unbatched ? x.unsqueeze(0) : x;
  Tensor xp = linear(xb, w_ih, b_ih);
  if (b_hh.defined()) xp = xp + b_hh;
  int64_t H = w_hh.size(1);
  Tensor hb = h.defined() ? (unbatched ? h.unsqueeze(0) : h) : zeros({xb.size(0), H}, xb.options());
  auto [out, hn] = rnn_layer(xp.unsqueeze(0), hb, w_hh, relu);
  return unbatched ? hn.squeeze(0) : hn;
}

}  // namespace ember
