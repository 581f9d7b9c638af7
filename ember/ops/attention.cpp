#include "ember/ops/attention.h"

#include <array>
#include <atomic>
#include <cmath>
#include <limits>

#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/linalg.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/shape.h"
#include "ember/ops/softmax.h"

namespace ember {
namespace {
std::array<std::atomic<bool>, 4> g_sdp_enabled{true, true, true, true};

void check_qkv(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  const char* op = "scaled_dot_product_attention";
  check_defined(op, q, "query");
  check_defined(op, k, "key");
  check_defined(op, v, "value");
  // The mask too: the fused kernels read it on q's device (a GPU mask read by the CPU crashed).
  check_same_device(op, {&q, &k, &v, &mask});
  EMBER_CHECK(q.dim() >= 2 && k.dim() == q.dim() && v.dim() == q.dim(), "[", op,
              "] expected query, key and value with the same number of dims (at least 2), got ",
              q.sizes(), ", ", k.sizes(), " and ", v.sizes());
  EMBER_CHECK(q.size(-1) == k.size(-1) && k.size(-2) == v.size(-2), "[", op,
              "] shapes do not agree: query ", q.sizes(), ", key ", k.sizes(), ", value ",
              v.sizes());
  for (int64_t d = 0; d < q.dim() - 2; ++d)
    EMBER_CHECK(q.size(d) == k.size(d) && q.size(d) == v.size(d), "[", op,
                "] query, key and value must have the same leading dims, got ", q.sizes(), ", ",
                k.sizes(), " and ", v.sizes());
  EMBER_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), "[", op,
              "] expected query, key and value of one dtype, got ", q.dtype(), ", ", k.dtype(),
              " and ", v.dtype());
}

// A bool mask as additive (0 where attended, -inf where not) in `dtype`.
Tensor additive(const Tensor& mask, DType dtype) {
  if (!mask.defined()) return mask;
  if (mask.dtype() == kBool)
    return where(mask, scalar_tensor(0.0, TensorOptions(dtype).with_device(mask.device())),
                 scalar_tensor(-std::numeric_limits<double>::infinity(),
                               TensorOptions(dtype).with_device(mask.device())));
  return mask.to(dtype);
}

}  // namespace

std::tuple<Tensor, Tensor> attention_math(const Tensor& q, const Tensor& k, const Tensor& v,
                                          const Tensor& attn_mask, double dropout_p,
                                          bool is_causal, std::optional<double> scale,
                                          Generator* gen) {
  EMBER_OP(attention_math, q, k, v, attn_mask, dropout_p, is_causal, scale, gen);
  check_qkv(q, k, v, attn_mask);
  double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  Tensor scores = matmul(q, k.transpose(-2, -1)) * s;
  if (is_causal) {
    Tensor causal = tril(ones({q.size(-2), k.size(-2)},
                              TensorOptions(kBool).with_device(q.device())));
    scores = scores.masked_fill(logical_not(causal), -std::numeric_limits<double>::infinity());
  }
  if (attn_mask.defined()) scores = scores + additive(attn_mask, scores.dtype());
  Tensor weights = softmax(scores, -1);
  Tensor dropped = weights;
  if (dropout_p > 0) {
    Tensor keep = bernoulli(empty(weights.sizes(), weights.options()), 1 - dropout_p, gen);
    dropped = weights * keep * (1.0 / (1 - dropout_p));
  }
  return {matmul(dropped, v), weights};
}

void set_sdp_backend_enabled(SdpBackend backend, bool enabled) {
  g_sdp_enabled[static_cast<size_t>(backend)].store(enabled);
}
bool sdp_backend_enabled(SdpBackend backend) {
  return g_sdp_enabled[static_cast<size_t>(backend)].load();
}

Tensor scaled_dot_product_attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa, Generator* gen) {
  EMBER_OP(scaled_dot_product_attention, q_in, k_in, v_in, attn_mask, dropout_p, is_causal, scale,
           enable_gqa, gen);
  if (enable_gqa && q_in.dim() >= 3 && k_in.dim() >= 3 && v_in.dim() >= 3) {
    // Grouped-query attention: each key/value head serves query.size(-3) / key.size(-3) query
    // heads (repeat_interleave along the heads).
    int64_t hq = q_in.size(-3), hk = k_in.size(-3), hv = v_in.size(-3);
    EMBER_CHECK(hk > 0 && hv > 0 && hq % hk == 0 && hq % hv == 0,
                "Number of heads in key and value must divide the number of heads in query (",
                hq, " query heads, ", hk, " key heads, ", hv, " value heads)");
    auto repeat_heads = [hq](const Tensor& t) {
      int64_t h = t.size(-3);
      if (h == hq) return t;
      Shape grouped = t.sizes(), full = t.sizes();
      grouped.insert(grouped.end() - 2, hq / h);
      full[full.size() - 3] = hq;
      return t.unsqueeze(-3).expand(grouped).reshape(full);
    };
    return scaled_dot_product_attention(q_in, repeat_heads(k_in), repeat_heads(v_in), attn_mask,
                                        dropout_p, is_causal, scale, false, gen);
  }
  check_qkv(q_in, k_in, v_in, attn_mask);
  EMBER_CHECK_VALUE(dropout_p >= 0 && dropout_p < 1,
                    "[scaled_dot_product_attention] dropout_p must be in [0, 1), got ", dropout_p);
  bool fused = sdp_backend_enabled(SdpBackend::Flash);
  EMBER_CHECK(fused || sdp_backend_enabled(SdpBackend::Math),
              "No available kernel. Aborting execution. (ember's scaled_dot_product_attention "
              "has the flash-style fused kernel and the math path; both are disabled)");
  // The math path where the fused kernel is switched off, or has no gradient for the mask.
  if (!fused || (attn_mask.defined() && attn_mask.requires_grad()))
    return std::get<0>(attention_math(q_in, k_in, v_in, attn_mask, dropout_p, is_causal, scale,
                                      gen));
  // The kernels compute in float32 or float64; 16-bit inputs come back in their dtype.
  DType dt = q_in.dtype() == kFloat64 ? kFloat64 : kFloat32;
  const int64_t L = q_in.size(-2), S = k_in.size(-2), E = q_in.size(-1), Ev = v_in.size(-1);
  Shape lead(q_in.sizes().begin(), q_in.sizes().end() - 2);
  int64_t N = 1;
  for (int64_t d : lead) N *= d;
  Tensor q = q_in.to(dt).reshape({N, L, E}).contiguous();
  Tensor k = k_in.to(dt).reshape({N, S, E}).contiguous();
  Tensor v = v_in.to(dt).reshape({N, S, Ev}).contiguous();
  Tensor mask;
  if (attn_mask.defined()) {
    Shape full = lead;
    full.push_back(L);
    full.push_back(S);
    // Broadcast dims stay stride 0 where the reshape allows it (a (L, S) mask is never copied).
    mask = additive(attn_mask, dt).expand(full).reshape({N, L, S});
  }
  AttentionParams p;
  p.scale = scale.value_or(1.0 / std::sqrt(static_cast<double>(E)));
  p.causal = is_causal;
  p.dropout = dropout_p;
  if (dropout_p > 0) std::tie(p.seed, p.offset) = (gen ? *gen : default_generator()).next();
  Tensor out = empty({N, L, Ev}, q.options());
  Tensor lse = empty({N, L}, q.options());
  {
    NoGradGuard no_grad;
    EMBER_DISPATCH_DEVICE(q.device(), attention, q, k, v, mask, p, out, lse);
  }
  if (any_requires_grad({&q, &k, &v})) {
    record("ScaledDotProductFlashAttentionBackward0", {&out}, {&q, &k, &v},
           [sq = SavedTensor(q), sk = SavedTensor(k), sv = SavedTensor(v), mask, p,
            so = SavedTensor(out, true), lse](const Tensor& g) -> TensorList {
             const Tensor &q = sq.get(), &k = sk.get(), &v = sv.get();
             Tensor dq = empty(q.sizes(), q.options()), dk = empty(k.sizes(), k.options()),
                    dv = empty(v.sizes(), v.options());
             EMBER_DISPATCH_DEVICE(q.device(), attention_backward, q, k, v, mask, p, so.get(),
                                   lse, g.contiguous(), dq, dk, dv);
             return {dq, dk, dv};
           });
  }
  Shape out_shape = lead;
  out_shape.push_back(L);
  out_shape.push_back(Ev);
  Tensor r = out.view(out_shape);
  return q_in.dtype() == dt ? r : r.to(q_in.dtype());
}

}  // namespace ember
