// Capture at the op entry (Note [Capture at the op entry]).
#include "ember/ops/capture.h"

#include <utility>

#include "ember/core/thread_local_state.h"

namespace ember {

std::vector<CapturedOp> OpCapture::ops() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ops_;
}

void OpCapture::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  ops_.clear();
  breaks_.clear();
}

void OpCapture::mark_break(std::string reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  breaks_.push_back(std::move(reason));
}

std::vector<std::string> OpCapture::breaks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return breaks_;
}

size_t OpCapture::begin(OpId id, std::vector<Tensor> inputs, int depth, OpReplay replay) {
  std::lock_guard<std::mutex> lock(mutex_);
  ops_.push_back({id, std::move(inputs), {}, depth, std::move(replay)});
  return ops_.size() - 1;
}

void OpCapture::end(size_t index, std::vector<Tensor> outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (index < ops_.size()) ops_[index].outputs = std::move(outputs);  // a clear() in between
}

OpCaptureGuard::OpCaptureGuard(OpCapture& capture) : saved_(detail::t_local_state.capture) {
  detail::t_local_state.capture = &capture;
}

OpCaptureGuard::~OpCaptureGuard() { detail::t_local_state.capture = saved_; }

}  // namespace ember
