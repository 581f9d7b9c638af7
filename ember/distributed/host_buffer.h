// A CPU tensor's memory handed to a communication library, and the checks of tensor lists shared
// by the CPU backends.
#pragma once

#include "ember/core/error.h"
#include "ember/core/tensor.h"

namespace ember::distributed {

/// The tensor itself when contiguous, else a contiguous copy written back after the collective.
class HostBuffer {
 public:
  HostBuffer(Tensor t, const char* op) : tensor_(std::move(t)) {
    EMBER_CHECK(tensor_.defined(), "[", op, "] undefined tensor");
    EMBER_CHECK(tensor_.device().is_cpu(), "[", op,
                "] the gloo and mpi backends take CPU tensors, got a tensor on ", tensor_.device(),
                " (use the nccl backend for CUDA tensors)");
    buffer_ = tensor_.is_contiguous() ? tensor_ : tensor_.contiguous();
  }
  void* data() const { return buffer_.data_ptr(); }
  size_t nbytes() const { return buffer_.nbytes(); }
  size_t numel() const { return static_cast<size_t>(buffer_.numel()); }
  void write_back() {
    if (buffer_.unsafe_impl() != tensor_.unsafe_impl()) tensor_.copy_(buffer_);
  }

 private:
  Tensor tensor_;
  Tensor buffer_;
};

inline void check_like(const Tensor& t, const Tensor& like, const char* op, const char* what) {
  EMBER_CHECK(t.defined() && t.sizes() == like.sizes() && t.dtype() == like.dtype(), "[", op,
              "] expected every ", what, " to have shape ", like.sizes(), " and dtype ",
              like.dtype(), ", got ", t.defined() ? t.sizes() : Shape{}, " ",
              t.defined() ? t.dtype() : like.dtype());
}

}  // namespace ember::distributed
