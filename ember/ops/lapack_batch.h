// What the linalg ops share to hand batches of matrices to LAPACK (backend/cpu/lapack.h): the
// checks PyTorch's linalg makes on its inputs, column-major copies, the loop over the batch, and
// LAPACK's info turned into PyTorch's errors.
#pragma once

#include <string>
#include <vector>

#include "ember/core/complex.h"
#include "ember/core/error.h"
#include "ember/core/tensor.h"

namespace ember::detail {

/// PyTorch's checks: at least 2 dims, float32, float64, complex64 or complex128, on the CPU;
/// `square` also wants (..., n, n).
void check_linalg_input(const char* op, const Tensor& a, bool square, const char* name = "A");

/// a's options with its real dtype: those of singular values, Hermitian eigenvalues, norms.
inline TensorOptions real_options(const Tensor& a) {
  return a.options().with_dtype(to_real_dtype(a.dtype()));
}

/// The number of matrices in a (..., m, n) tensor.
int64_t batch_count(const Tensor& a);

/// A (..., m, n) copied so that each matrix is column-major: a contiguous (..., n, m) tensor.
Tensor column_major(const Tensor& a);
/// The logical (..., m, n) tensor of such a buffer (a view, not contiguous).
inline Tensor from_column_major(const Tensor& buf) { return buf.transpose(-2, -1); }

/// Calls f(T{}) with T float, double, Complex<float> or Complex<double> for a's dtype.
template <typename F>
void dispatch_lapack(DType t, const char* op, F&& f) {
  if (t == kFloat32)
    f(float{});
  else if (t == kFloat64)
    f(double{});
  else if (t == kComplex64)
    f(Complex<float>{});
  else if (t == kComplex128)
    f(Complex<double>{});
  else
    EMBER_CHECK(false, "[", op, "] not implemented for '", t, "'");
}

/// PyTorch's message for a failed factorization: `what(info)` says what LAPACK's positive info
/// means; with a batch, "(Batch element i): " comes first.
template <typename What>
void check_infos(const char* op, const std::vector<int>& infos, bool batched, What what) {
  for (size_t i = 0; i < infos.size(); ++i) {
    if (infos[i] == 0) continue;
    std::string prefix = std::string(op) + ": ";
    if (batched) prefix += "(Batch element " + std::to_string(i) + "): ";
    EMBER_CHECK(infos[i] < 0, prefix, what(infos[i]));
    EMBER_ASSERT(infos[i] == 0, prefix, "LAPACK rejected argument ", -infos[i]);
  }
}

/// The int32 tensor of a batch's infos, shaped as a's batch dims.
Tensor infos_tensor(const std::vector<int>& infos, const Tensor& a);

}  // namespace ember::detail
