#include "ember/ops/softmax.h"

#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/pointwise.h"
#include "ember/ops/reduce.h"

namespace ember {
namespace {

Tensor softmax_impl(const Tensor& x_in, int64_t dim, std::optional<DType> dtype, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  check_defined(name, x_in);
  Tensor x = dtype ? x_in.to(*dtype) : x_in;
  if (!x.is_floating_point()) x = x.to(kDefaultFloat);
  int64_t d = wrap_dim(dim, x.dim(), name);  // 0-dim: 0 or -1 only
  Tensor xc = x.contiguous();
  Tensor out = empty(x.sizes(), x.options());
  EMBER_DISPATCH_DEVICE(x.device(), softmax, x.dim() == 0 ? xc.reshape({1}) : xc, d, log,
                        x.dim() == 0 ? out.reshape({1}) : out);
  if (any_requires_grad({&x})) {
    record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {&out}, {&x},
           [so = SavedTensor(out, true), d, log](const Tensor& g) -> TensorList {
             const Tensor& y = so.get();
             if (GradMode::is_enabled()) {
               // Under create_graph, as differentiable ops (the kernel records nothing):
               // softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g).
               if (y.dim() == 0) return {g * 0.0};
               Dims along{d};
               if (log) return {g - exp(y) * sum(g, along, true)};
               return {y * (g - sum(g * y, along, true))};
             }
             Tensor gc = g.contiguous();
             Tensor gi = empty(y.sizes(), y.options());
             Tensor y1 = y.dim() == 0 ? y.reshape({1}) : y;
             EMBER_DISPATCH_DEVICE(y.device(), softmax_backward,
                                   y.dim() == 0 ? gc.reshape({1}) : gc, y1, d, log,
                                   y.dim() == 0 ? gi.reshape({1}) : gi);
             return {gi};
           });
  }
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  EMBER_OP(softmax, x, dim, dtype);
  return softmax_impl(x, dim, dtype, false);
}
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  EMBER_OP(log_softmax, x, dim, dtype);
  return softmax_impl(x, dim, dtype, true);
}
Tensor Tensor::softmax(int64_t dim) const { return ember::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return ember::log_softmax(*this, dim); }

}  // namespace ember
