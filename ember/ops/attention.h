// Scaled dot-product attention: softmax(q k^T scale + mask) v, with a fused kernel (FlashAttention's
// tiling and online softmax, CPU and CUDA) that never holds the L x L weights, and the math path
// that does (for need_weights and as the oracle).
#pragma once

#include <optional>
#include <tuple>

#include "ember/core/generator.h"
#include "ember/core/tensor.h"

namespace ember {

/// The kernels scaled_dot_product_attention may choose, as torch.backends.cuda's switches and
/// torch.nn.attention.sdpa_kernel name them (all allowed by default, process-wide). ember's fused
/// kernel is a FlashAttention-style one, so Flash allows it; with Flash off it runs the math path,
/// and with neither allowed it raises. The other two have no kernel in ember.
enum class SdpBackend { Math, Flash, MemEfficient, Cudnn };
void set_sdp_backend_enabled(SdpBackend backend, bool enabled);
bool sdp_backend_enabled(SdpBackend backend);

/// q (..., L, E), k (..., S, E), v (..., S, Ev) with the same leading dims; attn_mask
/// broadcastable to (..., L, S), bool (true: attend) or additive; is_causal: query i attends keys
/// j <= i; scale defaults to 1 / sqrt(E); dropout_p drops attention weights (training). Returns
/// (..., L, Ev). Runs the fused kernel (memory that grows with L) unless the mask needs a
/// gradient.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0,
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt,
                                    bool enable_gqa = false, Generator* gen = nullptr);

/// The same by materialising the weights: (output, weights (..., L, S)).
std::tuple<Tensor, Tensor> attention_math(const Tensor& q, const Tensor& k, const Tensor& v,
                                          const Tensor& attn_mask = Tensor(), double dropout_p = 0,
                                          bool is_causal = false,
                                          std::optional<double> scale = std::nullopt,
                                          Generator* gen = nullptr);

}  // namespace ember
