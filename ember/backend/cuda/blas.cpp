// Matrix products through cuBLAS: float32 (TF32 tensor cores when allowed), float64, and float16
// or bfloat16 accumulating in float32. Row-major problems are given to the column-major cuBLAS as
// their transposes: C^T = B^T A^T.
#include "ember/backend/cuda/blas.h"

#include <cublas_v2.h>

#include <map>
#include <mutex>

#include "ember/backend/cuda/memory.h"
#include "ember/backend/cuda/runtime.h"
#include "ember/backend/kernels.h"
#include "ember/backend/matmul_layout.h"
#include "ember/core/device_backend.h"

#define EMBER_CUBLAS_CHECK(expr)                                                          \
  do {                                                                                    \
    cublasStatus_t ember_status_ = (expr);                                                \
    if (ember_status_ != CUBLAS_STATUS_SUCCESS)                                           \
      ::ember::detail::throw_cuda_error("cuBLAS", static_cast<int>(ember_status_), #expr, \
                                        __FILE__, __LINE__);                              \
  } while (0)

namespace ember::cuda {
namespace {

// One handle per thread and device: cuBLAS handles must not be used by two threads at once.
cublasHandle_t handle(int device) {
  thread_local std::map<int, cublasHandle_t> handles;
  auto it = handles.find(device);
  if (it != handles.end()) return it->second;
  RawDeviceGuard guard(device);
  cublasHandle_t h;
  EMBER_CUBLAS_CHECK(cublasCreate(&h));
  handles.emplace(device, h);
  return h;
}

// cuBLAS's default workspace is one per handle, so kernels of one handle running at once on two
// streams would share it: each (device, stream) gets its own, from the caching allocator, as in
// PyTorch. 32 MiB is what cuBLAS recommends for Hopper.
constexpr size_t kWorkspaceBytes = size_t{32} << 20;
void bind(cublasHandle_t h, int device, cudaStream_t stream) {
  thread_local std::map<std::pair<int, cudaStream_t>, DataPtr> workspaces;
  auto key = std::make_pair(device, stream);
  auto it = workspaces.find(key);
  if (it == workspaces.end())
    it = workspaces
             .emplace(key,
                      device_backend(kCUDA).allocator(device).allocate(
                          kWorkspaceBytes, stream_id(device, reinterpret_cast<uintptr_t>(stream))))
             .first;
  EMBER_CUBLAS_CHECK(cublasSetStream(h, stream));
  EMBER_CUBLAS_CHECK(cublasSetWorkspace(h, it->second.get(), kWorkspaceBytes));
}

}  // namespace

void gemm_strided_batched(int device, DType dtype, bool ta, bool tb, int64_t m, int64_t n,
                          int64_t k, double alpha, const void* a, int64_t lda, int64_t sa,
                          const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc,
                          int64_t sc, int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  LaunchScope launch(device);
  cublasHandle_t h = handle(device);
  bind(h, device, launch.stream);
  cudaDataType_t type;
  cublasComputeType_t compute;
  switch (dtype) {
    case kFloat32:
      type = CUDA_R_32F;
      compute = allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case kFloat64:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    case kFloat16:
      type = CUDA_R_16F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case kBFloat16:
      type = CUDA_R_16BF;
      compute = CUBLAS_COMPUTE_32F;
      break;
    default:
      EMBER_FAIL("[matmul] cuBLAS has no ", dtype, " product");
  }
  float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
  const void* pa = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&alpha) : &alpha_f;
  const void* pb = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&beta) : &beta_f;
  // Column-major view: C^T (n x m) = op(B)^T (n x k) op(A)^T (k x m).
  EMBER_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
      static_cast<int>(m), static_cast<int>(k), pa, b, type, static_cast<int>(ldb), sb, a, type,
      static_cast<int>(lda), sa, pb, c, type, static_cast<int>(ldc), sc, static_cast<int>(batch),
      compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace ember::cuda

namespace ember {

void bmm_cuda(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) {
  if (!is_floating_point(out.dtype())) {
    // Integers go through float64 (exact below 2^53), as on the CPU.
    Tensor o = out.to(kFloat64);
    bmm_cuda(a.to(kFloat64), b.to(kFloat64), o, alpha, beta);
    TensorIter it(out, {o});
    copy_cuda(it);
    return;
  }
  int64_t m = out.size(1), n = out.size(2), k = a.size(2);
  MatrixOperand A = blas_operand(a), B = blas_operand(b);
  cuda::gemm_strided_batched(out.device().index(), out.dtype(), A.trans, B.trans, m, n, k, alpha,
                             A.t.data_ptr(), A.ld, A.batch_stride, B.t.data_ptr(), B.ld,
                             B.batch_stride, beta, out.data_ptr(), n, m * n, out.size(0));
}

}  // namespace ember
