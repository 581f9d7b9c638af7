// Matrix products: matmul (with batch broadcasting), mm, bmm, addmm, linear.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// torch.matmul: dot, matrix-vector, matrix-matrix, or batched with broadcast batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);
/// (n, m) @ (m, p).
Tensor mm(const Tensor& a, const Tensor& b);
/// (B, n, m) @ (B, m, p).
Tensor bmm(const Tensor& a, const Tensor& b);
/// beta * bias + alpha * (a @ b), bias broadcast to (n, p).
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, Scalar beta = 1,
             Scalar alpha = 1);
/// x @ weight^T + bias, for x of any leading shape (nn.Linear).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

}  // namespace ember
