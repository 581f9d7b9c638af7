#include "ember/ops/linalg.h"

#include "ember/ops/autograd_support.h"
#include "ember/ops/complex.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/join.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/reduce.h"

namespace ember {
namespace {

void check_matmul_args(const char* op, const Tensor& a, const Tensor& b) {
  check_defined(op, a, "self");
  check_defined(op, b, "mat2");
  check_same_device(op, {&a, &b});
  EMBER_CHECK(a.dtype() == b.dtype(), "[", op,
              "] expected both operands to have the same dtype, but got ", a.dtype(),
              " != ", b.dtype());
}

// The raw product of 3-D operands: out = beta * out + alpha * a @ b.
Tensor bmm_raw(const Tensor& a, const Tensor& b, Tensor out, double alpha, double beta) {
  if (out.numel() == 0) return out;
  // As PyTorch: bool has no matmul kernel, but an empty sum (k = 0) is all false.
  EMBER_CHECK(a.dtype() != kBool || (a.size(2) == 0 && beta == 0),
              "[matmul] is not implemented for bool");
  if (a.size(2) == 0) {
    // An empty sum: out = beta * out, where beta 0 means "do not read out" (BLAS's rule), which
    // matters for uninitialised outputs.
    NoGradGuard no_grad;
    if (beta == 0)
      out.fill_(0);
    else if (beta != 1)  // an integer out takes an integer beta (a double would not cast back)
      out.mul_(out.is_floating_point() ? Scalar(beta) : Scalar(static_cast<int64_t>(beta)));
    return out;
  }
  EMBER_DISPATCH_DEVICE(a.device(), bmm, a, b, out, alpha, beta);
  return out;
}

}  // namespace

Tensor bmm(const Tensor& a, const Tensor& b) {
  EMBER_OP(bmm, a, b);
  check_matmul_args("bmm", a, b);
  EMBER_CHECK(a.dim() == 3 && b.dim() == 3, "[bmm] expected 3-D tensors, got ", a.sizes(), " and ",
              b.sizes());
  EMBER_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1), "[bmm] shapes ", a.sizes(), " and ",
              b.sizes(), " cannot be multiplied (batch sizes and inner dims must match)");
  Tensor out = empty({a.size(0), a.size(1), b.size(2)}, a.options());
  bmm_raw(a, b, out, 1.0, 0.0);
  if (any_requires_grad({&a, &b})) {
    record(
        "BmmBackward0", {&out}, {&a, &b},
        [sa = SavedTensor(a), sb = SavedTensor(b)](const Tensor& g, const Node& n) -> TensorList {
          Tensor ga, gb;
          if (n.needs_input_grad(0)) ga = bmm(g, conj(sb.get().transpose(1, 2)));
          if (n.needs_input_grad(1)) gb = bmm(conj(sa.get().transpose(1, 2)), g);
          return {ga, gb};
        });
  }
  return out;
}

namespace {
// The gradients of a @ b. An operand stored column-major (a weight used as w.t()) gets its gradient
// column-major too, so that after the transpose's backward the weight's gradient is contiguous:
// kept as .grad as it is, not copied (PyTorch's mm_mat1/mat2_backward do the same).
bool column_major(const Tensor& m) { return m.stride(0) == 1 && m.stride(1) == m.size(0); }
// Complex operands take the conjugate transpose (PyTorch's convention; conj is free on reals).
Tensor mm_grad_a(const Tensor& g, const Tensor& a, const Tensor& b) {
  return column_major(a) ? conj(mm(b, conj(g.t())).t()) : mm(g, conj(b.t()));
}
Tensor mm_grad_b(const Tensor& g, const Tensor& a, const Tensor& b) {
  return column_major(b) ? conj(mm(conj(g.t()), a).t()) : mm(conj(a.t()), g);
}
}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  EMBER_OP(mm, a, b);
  check_matmul_args("mm", a, b);
  EMBER_CHECK(a.dim() == 2 && b.dim() == 2, "[mm] expected 2-D tensors, got ", a.sizes(), " and ",
              b.sizes());
  EMBER_CHECK(a.size(1) == b.size(0), "[mm] mat1 and mat2 shapes cannot be multiplied (", a.size(0),
              "x", a.size(1), " and ", b.size(0), "x", b.size(1), ")");
  Tensor out = empty({a.size(0), b.size(1)}, a.options());
  {
    NoGradGuard no_grad;
    bmm_raw(a.unsqueeze(0), b.unsqueeze(0), out.unsqueeze(0), 1.0, 0.0);
  }
  if (any_requires_grad({&a, &b})) {
    record(
        "MmBackward0", {&out}, {&a, &b},
        [sa = SavedTensor(a), sb = SavedTensor(b)](const Tensor& g, const Node& n) -> TensorList {
          Tensor ga, gb;
          if (n.needs_input_grad(0)) ga = mm_grad_a(g, sa.get(), sb.get());
          if (n.needs_input_grad(1)) gb = mm_grad_b(g, sa.get(), sb.get());
          return {ga, gb};
        });
  }
  return out;
}

namespace {
// beta * input + alpha * product in product's dtype, as PyTorch's add*mm/mv family computes it:
// integer tensors take the scalars truncated to integers (addmv(ints, beta=0.2) ignores input),
// and beta = 0 ignores input, its NaNs included.
Tensor add_scaled(const Tensor& input, const Tensor& product, Scalar beta, Scalar alpha) {
  auto cast = [&product](Scalar s) {
    return is_floating_point(product.dtype()) || is_complex(product.dtype())
               ? s
               : Scalar(static_cast<int64_t>(s.to_double()));
  };
  auto is = [](Scalar s, double v) { return s.to_double() == v && s.imag() == 0; };
  beta = cast(beta);
  alpha = cast(alpha);
  Tensor prod = is(alpha, 1) ? product : product * alpha;
  if (is(beta, 0)) return prod;
  return (is(beta, 1) ? input + prod : input * beta + prod).to(product.dtype());
}

// op(input, a, b) = beta * input + alpha * (a . b), rounded once for 16-bit operands: PyTorch's
// CPU kernels keep the product in their float accumulators and round after the scaled sum, and
// so does ember, by taking 16-bit operands through float32.
template <typename Op>
Tensor rounded_once(const Tensor& input, const Tensor& a, const Tensor& b, Op op) {
  bool half = a.dtype() == kFloat16 || a.dtype() == kBFloat16;
  if (!half || input.dtype() != a.dtype() || b.dtype() != a.dtype()) return op(input, a, b);
  return op(input.to(kFloat32), a.to(kFloat32), b.to(kFloat32)).to(a.dtype());
}
}  // namespace

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  EMBER_OP(addmm, bias, a, b, beta, alpha);
  check_matmul_args("addmm", a, b);
  check_same_device("addmm", {&bias, &a});
  check_defined("addmm", bias, "self");
  EMBER_CHECK(bias.dtype() == a.dtype(), "[addmm] self and mat2 must have the same dtype, got ",
              bias.dtype(), " and ", a.dtype());
  EMBER_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0),
              "[addmm] mat1 and mat2 shapes cannot be multiplied (", a.sizes(), " and ", b.sizes(),
              ")");
  // Complex scalars: the product, then the scaled sum (BLAS's real alpha and beta cannot hold them).
  if (alpha.is_complex() || beta.is_complex()) return add_scaled(bias, mm(a, b), beta, alpha);
  Tensor out = empty({a.size(0), b.size(1)}, a.options());
  double be = beta.to_double(), al = alpha.to_double();
  {
    NoGradGuard no_grad;
    if (be != 0) out.copy_(bias.expand(out.sizes()));
    bmm_raw(a.unsqueeze(0), b.unsqueeze(0), out.unsqueeze(0), al, be != 0 ? be : 0.0);
  }
  if (any_requires_grad({&bias, &a, &b})) {
    record("AddmmBackward0", {&out}, {&bias, &a, &b},
           [bs = bias.sizes(), sa = SavedTensor(a), sb = SavedTensor(b), be, al](
               const Tensor& g, const Node& n) -> TensorList {
             Tensor gbias, ga, gb;
             if (n.needs_input_grad(0)) gbias = sum_to(be == 1 ? g : g * be, bs);
             if (n.needs_input_grad(1)) ga = mm_grad_a(g, sa.get(), sb.get());
             if (n.needs_input_grad(2)) gb = mm_grad_b(g, sa.get(), sb.get());
             if (al != 1) {
               if (ga.defined()) ga = ga * al;
               if (gb.defined()) gb = gb * al;
             }
             return {gbias, ga, gb};
           });
  }
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  EMBER_OP(matmul, a, b);
  check_matmul_args("matmul", a, b);
  int64_t da = a.dim(), db = b.dim();
  EMBER_CHECK(da > 0 && db > 0, "[matmul] both arguments need at least 1 dimension, got ", da,
              "D and ", db, "D");
  if (da == 1 && db == 1) {
    EMBER_CHECK(a.size(0) == b.size(0), "[matmul] inconsistent tensor size, expected tensor [",
                a.size(0), "] and src [", b.size(0), "] to have the same number of elements");
    return mm(a.unsqueeze(0), b.unsqueeze(1)).reshape({});
  }
  if (da == 2 && db == 1) return mm(a, b.unsqueeze(1)).squeeze(1);
  if (da == 1 && db == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (da == 2 && db == 2) return mm(a, b);
  if (da >= 3 && db <= 2) {
    // Fold the batch into the rows: one large product instead of many small ones.
    Tensor b2 = db == 1 ? b.unsqueeze(1) : b;
    Shape out_sizes = a.sizes();
    out_sizes.pop_back();
    int64_t rows = numel_of(out_sizes);  // not reshape(-1, k): k may be 0
    if (db == 2) out_sizes.push_back(b.size(1));
    Tensor r = mm(a.reshape({rows, a.size(-1)}), b2);
    return r.reshape(out_sizes);
  }
  // Batched: broadcast the batch dims, flatten them, bmm.
  Tensor a3 = da == 1 ? a.unsqueeze(0) : a;
  Tensor b3 = db == 1 ? b.unsqueeze(1) : b;
  int64_t n = a3.size(-2), m = a3.size(-1), p = b3.size(-1);
  EMBER_CHECK(m == b3.size(-2), "[matmul] shapes ", a.sizes(), " and ", b.sizes(),
              " cannot be multiplied (", m, " != ", b3.size(-2), ")");
  Shape ba(a3.sizes().begin(), a3.sizes().end() - 2), bb(b3.sizes().begin(), b3.sizes().end() - 2);
  Shape batch = broadcast_shapes(ba, bb, "matmul");
  int64_t B = numel_of(batch);
  Shape ea = batch, eb = batch;
  ea.push_back(n);
  ea.push_back(m);
  eb.push_back(m);
  eb.push_back(p);
  Tensor r = bmm(a3.expand(ea).reshape({B, n, m}), b3.expand(eb).reshape({B, m, p}));
  Shape out_sizes = batch;
  if (da > 1) out_sizes.push_back(n);
  if (db > 1) out_sizes.push_back(p);
  return r.reshape(out_sizes);
}

Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight, const Tensor& bias) {
  EMBER_OP(bilinear, x1, x2, weight, bias);
  // y_k = x1 W_k x2 + b_k: x1 (..., I), W (O, I, J), x2 (..., J); summed in the inputs' dtype.
  Tensor y = (matmul(x1.unsqueeze(-2).unsqueeze(-3), weight) * x2.unsqueeze(-2).unsqueeze(-3))
                 .sum({-1}, false, x1.dtype())
                 .squeeze(-1);
  return bias.defined() ? y + bias : y;
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  EMBER_OP(linear, x, weight, bias);
  check_defined("linear", x);
  check_defined("linear", weight, "weight");
  EMBER_CHECK(weight.dim() == 2, "[linear] expected a 2-D weight, got ", weight.sizes());
  EMBER_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(1), "[linear] input with last dimension ",
              x.dim() ? x.size(-1) : 0, " doesn't match weight of shape ", weight.sizes(),
              " (in_features = ", weight.size(1), ")");
  if (x.dim() == 2 && bias.defined()) return addmm(bias, x, weight.t());
  // (..., in) as rows of one product, the bias added by the GEMM itself (no extra pass).
  if (x.dim() > 2 && bias.defined() && x.is_contiguous()) {
    Shape out = x.sizes();
    out.back() = weight.size(0);
    int64_t rows = 1;
    for (int64_t d = 0; d + 1 < x.dim(); ++d) rows *= x.size(d);  // -1 fails for 0 features
    return addmm(bias, x.reshape({rows, x.size(-1)}), weight.t()).view(out);
  }
  Tensor y = matmul(x, weight.t());
  EMBER_CHECK(x.dtype() != kBool || !bias.defined() || y.numel() == 0,
              "[linear] is not implemented for bool");  // as PyTorch, but for empty results
  // The bias expands to the output, never the other way (a bias of 0 elements is an error).
  return bias.defined() ? y + bias.expand(y.sizes()) : y;
}

Tensor Tensor::matmul(const Tensor& o) const { return ember::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return ember::mm(*this, o); }
Tensor Tensor::bmm(const Tensor& o) const { return ember::bmm(*this, o); }

void gemm_into(const Tensor& a, const Tensor& b, Tensor& out, double alpha, double beta) {
  EMBER_ASSERT(a.dim() == 2 && b.dim() == 2 && out.dim() == 2 && out.is_contiguous(),
               "gemm_into takes 2-D operands and a contiguous output");
  NoGradGuard no_grad;
  bmm_raw(a.unsqueeze(0), b.unsqueeze(0), out.unsqueeze(0), alpha, beta);
}


Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, Scalar beta, Scalar alpha) {
  EMBER_OP(baddbmm, input, b1, b2, beta, alpha);
  return rounded_once(input, b1, b2, [&](const Tensor& i, const Tensor& x, const Tensor& y) {
    return add_scaled(i, bmm(x, y), beta, alpha);
  });
}

Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, Scalar beta, Scalar alpha) {
  EMBER_OP(addbmm, input, b1, b2, beta, alpha);
  return rounded_once(input, b1, b2, [&](const Tensor& i, const Tensor& x, const Tensor& y) {
    Tensor prod = bmm(x, y);
    return add_scaled(i, prod.sum({0}, false, prod.dtype()), beta, alpha);
  });
}

Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, Scalar beta,
             Scalar alpha) {
  EMBER_OP(addmv, input, mat, vec, beta, alpha);
  return rounded_once(input, mat, vec, [&](const Tensor& i, const Tensor& m, const Tensor& v) {
    return add_scaled(i, mv(m, v), beta, alpha);
  });
}

Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, Scalar beta,
            Scalar alpha) {
  EMBER_OP(addr, input, vec1, vec2, beta, alpha);
  EMBER_CHECK(vec1.dim() == 1, "addr: Expected 1-D argument vec1, but got ", vec1.dim(), "-D");
  EMBER_CHECK(vec2.dim() == 1, "addr: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  return rounded_once(input, vec1, vec2, [&](const Tensor& i, const Tensor& x, const Tensor& y) {
    return add_scaled(i, outer(x, y), beta, alpha);
  });
}

Tensor dot(const Tensor& a, const Tensor& b) {
  EMBER_OP(dot, a, b);
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1, "[dot] 1D tensors expected, but got ", a.dim(),
              "D and ", b.dim(), "D tensors");
  EMBER_CHECK(a.size(0) == b.size(0), "[dot] inconsistent tensor size, expected tensor [",
              a.size(0), "] and src [", b.size(0), "] to have the same number of elements");
  return matmul(a, b);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  EMBER_OP(outer, a, b);
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1, "[outer] expected 1-D tensors, got ", a.dim(),
              "-D and ", b.dim(), "-D");
  return a.unsqueeze(1) * b.unsqueeze(0);
}

Tensor mv(const Tensor& a, const Tensor& v) {
  EMBER_OP(mv, a, v);
  EMBER_CHECK(a.dim() == 2 && v.dim() == 1, "[mv] expected a matrix and a vector, got shapes ",
              a.sizes(), " and ", v.sizes());
  return matmul(a, v);
}

Tensor cross(const Tensor& a, const Tensor& b, int64_t dim) {
  EMBER_OP(cross, a, b, dim);
  int64_t d = wrap_dim(dim, a.dim(), "cross");
  EMBER_CHECK(a.size(d) == 3 && b.size(d) == 3, "[cross] inputs dimension ", d,
              " must have length 3, got ", a.sizes(), " and ", b.sizes());
  auto c = [d](const Tensor& t, int64_t i) { return t.narrow(d, i, 1); };
  return cat({c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1), c(a, 2) * c(b, 0) - c(a, 0) * c(b, 2),
              c(a, 0) * c(b, 1) - c(a, 1) * c(b, 0)},
             d);
}

}  // namespace ember
