// Internal to the cuDNN paths (cudnn_rnn.cpp, cudnn_conv.cpp): errors with cuDNN's own detail,
// handles borrowed per call from the device's pool, descriptors owned by their scope, dtypes.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <string>

#include "ember/backend/cuda/handle_pool.h"
#include "ember/core/dtype.h"
#include "ember/core/error.h"

namespace ember::cudnn {

[[noreturn]] inline void fail(cudnnStatus_t status, const char* call, const char* file, int line) {
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof detail);
  EMBER_FAIL("[cudnn] ", call, " failed: ", cudnnGetErrorString(status), " (",
             static_cast<int>(status), ")", detail[0] ? std::string(": ") + detail : "", " at ",
             file, ":", line);
}
#define EMBER_CUDNN_CHECK(expr)                                             \
  do {                                                                      \
    cudnnStatus_t ember_cudnn_status_ = (expr);                             \
    if (ember_cudnn_status_ != CUDNN_STATUS_SUCCESS)                        \
      ::ember::cudnn::fail(ember_cudnn_status_, #expr, __FILE__, __LINE__); \
  } while (0)

inline cudnnHandle_t new_handle() {
  cudnnHandle_t h;
  EMBER_CUDNN_CHECK(cudnnCreate(&h));
  return h;
}
// Note [Library handles]
using BorrowedCudnn = cuda::BorrowedHandle<cudnnHandle_t, new_handle>;

/// A cuDNN descriptor, destroyed with its scope.
template <typename T, cudnnStatus_t (*Make)(T*), cudnnStatus_t (*Destroy)(T)>
class Owned {
 public:
  Owned() { EMBER_CUDNN_CHECK(Make(&d_)); }
  ~Owned() { Destroy(d_); }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  T get() const { return d_; }

 private:
  T d_;
};
using TensorDescriptor =
    Owned<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;

/// cuDNN's name for a floating dtype; `what` names the caller in the error for any other.
inline cudnnDataType_t data_type(DType dtype, const char* what) {
  switch (dtype) {
    case kFloat16:
      return CUDNN_DATA_HALF;
    case kBFloat16:
      return CUDNN_DATA_BFLOAT16;
    case kFloat32:
      return CUDNN_DATA_FLOAT;
    case kFloat64:
      return CUDNN_DATA_DOUBLE;
    default:
      EMBER_FAIL("[cudnn] ", what, " take a floating dtype, got ", dtype);
  }
}

/// v as the int cuDNN's descriptors take; `what` names it in the error.
inline int to_int(int64_t v, const char* what) {
  EMBER_CHECK(v >= 0 && v <= INT32_MAX, "[cudnn] ", what, " must fit in 32 bits, got ", v);
  return static_cast<int>(v);
}

}  // namespace ember::cudnn
