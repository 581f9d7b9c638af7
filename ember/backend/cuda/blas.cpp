// Matrix products through cuBLAS: float32 (TF32 tensor cores when allowed), float64, and float16
// or bfloat16 accumulating in float32 (integers: bmm_integer.cu). Row-major problems are given to
// the column-major cuBLAS as their transposes: C^T = B^T A^T.
#include "ember/backend/cuda/blas.h"

#include <cublas_v2.h>

#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include "ember/backend/cuda/bmm_integer.h"
#include "ember/backend/cuda/device.h"
#include "ember/backend/cuda/handle_pool.h"
#include "ember/backend/cuda/memory.h"
#include "ember/backend/cuda/runtime.h"
#include "ember/backend/kernels.h"
#include "ember/backend/matmul_layout.h"
#include "ember/core/device_backend.h"

namespace ember::cuda {
namespace {

cublasHandle_t new_cublas_handle() {
  cublasHandle_t h;
  EMBER_CUBLAS_CHECK(cublasCreate(&h));
  return h;
}
// Note [Library handles]
using BorrowedCublas = BorrowedHandle<cublasHandle_t, new_cublas_handle>;

// cuBLAS's default workspace belongs to a handle, and one handle's kernels could then share it on
// two streams at once: each (device, stream) gets its own from the caching allocator, as in
// PyTorch, kept for the life of the process. Kernels on one stream run one after another, so the
// handles that take turns on a stream can share its workspace. 32 MiB is what cuBLAS recommends
// for Hopper.
constexpr size_t kWorkspaceBytes = size_t{32} << 20;
void* workspace(int device, cudaStream_t stream) {
  static std::mutex mutex;
  static auto* spaces = new std::map<std::pair<int, cudaStream_t>, DataPtr>();
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(device, stream);
  auto it = spaces->find(key);
  if (it == spaces->end())
    it = spaces
             ->emplace(key,
                       device_backend(kCUDA).allocator(device).allocate(
                           kWorkspaceBytes, stream_id(device, reinterpret_cast<uintptr_t>(stream))))
             .first;
  return it->second.get();
}

}  // namespace

void gemm_strided_batched(int device, DType dtype, bool ta, bool tb, int64_t m, int64_t n,
                          int64_t k, double alpha, const void* a, int64_t lda, int64_t sa,
                          const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc,
                          int64_t sc, int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  // cuBLAS takes dims, leading dims and the batch count as int: a larger one must not wrap.
  for (int64_t v : {m, n, k, lda, ldb, ldc, batch})
    EMBER_CHECK(v <= std::numeric_limits<int>::max(),
                "[matmul] cuBLAS takes sizes below 2^31, got ", v, " in a ", batch, " x (", m,
                " x ", k, ") @ (", k, " x ", n, ") product");
  LaunchScope launch(device);
  BorrowedCublas borrowed(device);
  cublasHandle_t h = borrowed.get();
  EMBER_CUBLAS_CHECK(cublasSetStream(h, launch.stream));
  EMBER_CUBLAS_CHECK(cublasSetWorkspace(h, workspace(device, launch.stream), kWorkspaceBytes));
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
  // Integers wrap as on the CPU (PyTorch has no integer matmul on CUDA at all).
  if (!is_floating_point(out.dtype())) return cuda::bmm_integer(a, b, out, alpha, beta);
  int64_t m = out.size(1), n = out.size(2), k = a.size(2);
  MatrixOperand A = blas_operand(a), B = blas_operand(b);
  cuda::gemm_strided_batched(out.device().index(), out.dtype(), A.trans, B.trans, m, n, k, alpha,
                             A.t.data_ptr(), A.ld, A.batch_stride, B.t.data_ptr(), B.ld,
                             B.batch_stride, beta, out.data_ptr(), n, m * n, out.size(0));
}

}  // namespace ember
