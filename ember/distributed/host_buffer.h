// A CPU tensor's memory handed to a communication library, and the checks of tensor lists shared
// by the CPU backends.
#pragma once

#include <cstring>
#include <vector>

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

/// `bytes` of scratch memory for a collective, from ember's caching allocator: reused from call
/// to call, where a fresh std::vector's pages are faulted in again each time (70 ms for 24 MB
/// here, more than the transfer). data() of an empty one is null.
class HostScratch {
 public:
  explicit HostScratch(size_t bytes)
      : tensor_(bytes ? empty({static_cast<int64_t>(bytes)}, kUInt8) : Tensor()), size_(bytes) {}
  char* data() const { return size_ ? static_cast<char*>(tensor_.data_ptr()) : nullptr; }
  size_t size() const { return size_; }

 private:
  Tensor tensor_;
  size_t size_;
};

/// Copies `flat` (the ranks' n-byte blocks one after another) into outputs[r], rank by rank.
inline void unpack_gathered(const char* flat, const std::vector<Tensor>& outputs, size_t n,
                            const char* op) {
  for (size_t r = 0; r < outputs.size(); ++r) {
    HostBuffer out(outputs[r], op);
    std::memcpy(out.data(), flat + r * n, n);
    out.write_back();
  }
}

}  // namespace ember::distributed
