#include "ember/ops/layer_norm.h"

#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/factory.h"
#include "ember/ops/op_entry.h"

namespace ember {

Tensor layer_norm(const Tensor& x_in, int64_t ndims, const Tensor& weight_in,
                  const Tensor& bias_in, double eps) {
  // PyTorch's CPU and CUDA autocast lists keep layer_norm in float32.
  EMBER_OP(layer_norm, x_in, ndims, weight_in, bias_in, eps);
  check_defined("layer_norm", x_in);
  check_same_device("layer_norm", {&x_in, &weight_in, &bias_in});
  EMBER_CHECK(ndims >= 1 && ndims <= x_in.dim(), "[layer_norm] cannot normalise the last ", ndims,
              " dims of a tensor of shape ", x_in.sizes());
  Tensor x = x_in.is_floating_point() ? x_in : x_in.to(kDefaultFloat);
  int64_t N = 1;
  for (int64_t d = x.dim() - ndims; d < x.dim(); ++d) N *= x.size(d);
  for (const Tensor* p : {&weight_in, &bias_in})
    EMBER_CHECK(!p->defined() || p->numel() == N, "[layer_norm] weight and bias must have ", N,
                " elements (the normalised dims), got shape ", p->sizes());
  // Weight and bias in x's dtype, flat (they share x's device: checked above).
  Tensor w = weight_in.defined() ? weight_in.to(x.dtype()).reshape({N}).contiguous() : Tensor();
  Tensor b = bias_in.defined() ? bias_in.to(x.dtype()).reshape({N}).contiguous() : Tensor();
  int64_t M = N == 0 ? 0 : x.numel() / N;
  Tensor xc = x.contiguous().reshape({M, N});
  DType stats = x.dtype() == kFloat16 || x.dtype() == kBFloat16 ? kFloat32 : x.dtype();
  TensorOptions so = TensorOptions(stats).with_device(x.device());
  Tensor y = empty({M, N}, x.options()), mean = empty({M}, so), rstd = empty({M}, so);
  if (M > 0 && N > 0) EMBER_DISPATCH_DEVICE(x.device(), layer_norm, xc, w, b, eps, y, mean, rstd);
  Tensor out = y.view(x.sizes());
  if (any_requires_grad({&x, &weight_in, &bias_in})) {
    record("NativeLayerNormBackward0", {&out}, {&x, &weight_in, &bias_in},
           [sx = SavedTensor(xc), sw = SavedTensor(w), mean, rstd, xs = x.sizes(),
            ws = weight_in.defined() ? weight_in.sizes() : Shape{},
            bs = bias_in.defined() ? bias_in.sizes() : Shape{}](const Tensor& g,
                                                                const Node& n) -> TensorList {
             const Tensor& xc = sx.get();
             const Tensor& w = sw.get();
             Tensor gc = g.contiguous().reshape(xc.sizes());
             Tensor dx = n.needs_input_grad(0) ? empty(xc.sizes(), xc.options()) : Tensor();
             Tensor dw = w.defined() && n.needs_input_grad(1) ? empty(w.sizes(), w.options())
                                                              : Tensor();
             Tensor db = n.needs_input_grad(2) ? empty({xc.size(1)}, xc.options()) : Tensor();
             if (xc.numel() > 0) {
               EMBER_DISPATCH_DEVICE(xc.device(), layer_norm_backward, gc, xc, mean, rstd, w, dx,
                                     dw, db);
             } else {  // no samples: the affine parameters' gradients are empty sums
               if (dw.defined()) dw.zero_();
               if (db.defined()) db.zero_();
             }
             return {dx.defined() ? dx.view(xs) : dx, dw.defined() ? dw.view(ws) : dw,
                     db.defined() ? db.view(bs) : db};
           });
  }
  return out;
}

}  // namespace ember
