// Matrix products: matmul (with batch broadcasting), mm, bmm, addmm, linear.
#pragma once

#include <string>
#include <vector>

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
/// x1 W_k x2 + b_k for each output k (nn.Bilinear): W (O, I, J), x1 (..., I), x2 (..., J).
Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight,
                const Tensor& bias = Tensor());
/// out = beta * out + alpha * (a @ b) for 2-D a (n, m), b (m, p) and a contiguous out (n, p), in
/// place and without autograd: the building block of loops that own their buffers (the
/// recurrent layers' time steps).
void gemm_into(const Tensor& a, const Tensor& b, Tensor& out, double alpha = 1, double beta = 0);
/// beta * input + alpha * (b1 @ b2), batched.
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, Scalar beta = 1,
               Scalar alpha = 1);
/// beta * input + alpha * the sum over the batch of b1 @ b2.
Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, Scalar beta = 1,
              Scalar alpha = 1);
/// beta * input + alpha * (mat @ vec).
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, Scalar beta = 1,
             Scalar alpha = 1);
/// beta * input + alpha * outer(vec1, vec2) (input not read when beta is 0).
Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, Scalar beta = 1,
            Scalar alpha = 1);
/// The inner product of two 1-D tensors.
Tensor dot(const Tensor& a, const Tensor& b);
/// The outer product of two 1-D tensors.
Tensor outer(const Tensor& a, const Tensor& b);
/// (n, m) @ (m).
Tensor mv(const Tensor& a, const Tensor& v);
/// torch.einsum: the subscripts ("bij,bjk->bik", "...ij,...jk", implicit output) over the
/// operands, as permutes, broadcast products, sums and batched matrix products.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
/// The cross product of 3-vectors along dim.
Tensor cross(const Tensor& a, const Tensor& b, int64_t dim = -1);

}  // namespace ember
