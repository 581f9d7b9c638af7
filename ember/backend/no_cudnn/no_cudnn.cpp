// Built where cuDNN is not (no CUDA backend, or a CUDA toolkit without cuDNN): convolutions and
// recurrent layers run ember's own kernels, and reaching a cuDNN entry point is a bug in the
// caller.
#include "ember/backend/cudnn.h"

#include "ember/core/error.h"

namespace ember::cudnn {
namespace {
[[noreturn]] void not_built(const char* call) {
  EMBER_FAIL("[cudnn] ", call, ": ember was built without cuDNN (check cudnn::built() first)");
}
}  // namespace

bool built() { return false; }
int64_t version() { return 0; }

bool use_for_conv(const Tensor&, const Tensor&, const Tensor&, const Conv2dParams&) {
  return false;
}
bool conv_forward(const Tensor&, const Tensor&, const Tensor&, const Conv2dParams&) {
  not_built("conv_forward");
}
bool conv_backward_data(const Tensor&, const Tensor&, const Tensor&, const Conv2dParams&) {
  not_built("conv_backward_data");
}
bool conv_backward_filter(const Tensor&, const Tensor&, const Tensor&, const Conv2dParams&) {
  not_built("conv_backward_filter");
}

const RnnLayout& rnn_layout(const RnnShape&, DType, int) { not_built("rnn_layout"); }
int64_t rnn_reserve_bytes(const RnnShape&, const Tensor&, const Tensor&) {
  not_built("rnn_reserve_bytes");
}
void rnn_forward(const RnnShape&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                 const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  not_built("rnn_forward");
}
void rnn_backward(const RnnShape&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                  const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                  const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  not_built("rnn_backward");
}

}  // namespace ember::cudnn
