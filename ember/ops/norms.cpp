#include "ember/ops/norms.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "ember/ops/decompositions.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/lapack_batch.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/reduce.h"
#include "ember/ops/solvers.h"
#include "ember/ops/views.h"

namespace ember::linalg {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string ord_text(const NormOrd& ord) {
  if (const auto* s = std::get_if<std::string>(&ord)) return *s;
  double d = std::get<double>(ord);
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::ostringstream o;
  o << d;
  return o.str();
}

int64_t wrap(int64_t d, int64_t n) { return d < 0 ? d + n : d; }

}  // namespace

Tensor vector_norm(const Tensor& x_in, double ord, const Dims& dims, bool keepdim,
                   std::optional<DType> dtype) {
  EMBER_OP(vector_norm, x_in, ord, dims, keepdim, dtype);
  check_defined("linalg.vector_norm", x_in);
  EMBER_CHECK(x_in.is_floating_point() || x_in.is_complex(), "linalg.vector_norm: Expected a "
              "floating point or complex tensor as input. Got ", x_in.dtype());
  if (dtype)
    EMBER_CHECK(is_floating_point(*dtype) || is_complex(*dtype), "linalg.vector_norm: dtype "
                "should be floating point or complex, but got ", *dtype);
  Tensor x = dtype ? x_in.to(*dtype) : x_in;
  if (ord < 0 || std::isinf(ord)) {
    bool empty_reduction = dims.empty() && x.numel() == 0;
    for (int64_t d : dims) empty_reduction = empty_reduction || x.size(d) == 0;
    EMBER_CHECK(!empty_reduction, "linalg.vector_norm cannot compute the ", ord_text(ord),
                " norm on an empty tensor because the operation does not have an identity");
  }
  return ember::norm(x, ord, dims, keepdim);
}

Tensor matrix_norm(const Tensor& a, const NormOrd& ord, std::pair<int64_t, int64_t> dims,
                   bool keepdim, std::optional<DType> dtype) {
  EMBER_OP(matrix_norm, a, ord, dims, keepdim, dtype);
  const char* op = "linalg.matrix_norm";
  check_defined(op, a);
  EMBER_CHECK(a.dim() >= 2, op, ": The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(a.is_floating_point() || a.is_complex(), op, ": Expected a floating point or "
              "complex tensor as input. Got ", a.dtype());
  int64_t d0 = wrap(dims.first, a.dim()), d1 = wrap(dims.second, a.dim());
  EMBER_CHECK(d0 >= 0 && d0 < a.dim() && d1 >= 0 && d1 < a.dim(), op, ": dims out of range");
  EMBER_CHECK(d0 != d1, op, ": dims must be different. Got (", dims.first, ", ", dims.second, ")");
  Tensor x = dtype ? a.to(*dtype) : a;
  if (const auto* s = std::get_if<std::string>(&ord)) {
    EMBER_CHECK_VALUE(*s == "fro" || *s == "nuc", op, ": Order ", *s, " not supported.");
    if (*s == "fro") return vector_norm(x, 2, {d0, d1}, keepdim);
  } else {
    double p = std::get<double>(ord);
    EMBER_CHECK_VALUE(p == 1 || p == -1 || p == 2 || p == -2 || std::isinf(p), op, ": Order ",
                      ord_text(ord), " not supported.");
    if (p == 1 || p == -1 || std::isinf(p)) {
      // 1: the largest column sum (sum over the rows d0, then max over d1); inf: the largest
      // row sum. Negative orders take the smallest.
      bool columns = std::abs(p) == 1;
      int64_t sum_dim = columns ? d0 : d1, max_dim = columns ? d1 : d0;
      Tensor sums = sum(abs(x), Dims{sum_dim}, /*keepdim=*/true);
      Tensor out = p > 0 ? amax(sums, Dims{max_dim}, true) : amin(sums, Dims{max_dim}, true);
      if (!keepdim) out = out.squeeze(std::max(d0, d1)).squeeze(std::min(d0, d1));
      return out;
    }
  }
  // Singular values: the two dims moved last.
  std::vector<int64_t> order;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != d0 && d != d1) order.push_back(d);
  order.push_back(d0);
  order.push_back(d1);
  Tensor s = svdvals(x.permute(order));
  Tensor out;
  if (std::holds_alternative<std::string>(ord))
    out = sum(s, Dims{-1});  // nuclear
  else
    out = std::get<double>(ord) > 0 ? amax(s, Dims{-1}) : amin(s, Dims{-1});
  if (keepdim) {
    out = out.unsqueeze(std::min(d0, d1)).unsqueeze(std::max(d0, d1));
  }
  return out;
}

Tensor norm(const Tensor& a, const std::optional<NormOrd>& ord, const Dims& dims, bool keepdim,
            std::optional<DType> dtype) {
  EMBER_OP(norm, a, ord, dims, keepdim, dtype);
  if (!dims.empty()) {
    EMBER_CHECK(dims.size() == 1 || dims.size() == 2, "linalg.norm: If dim is specified, it must "
                "be of length 1 or 2. Got [", dims.size(), "]");
    if (dims.size() == 1) {
      double p = 2;
      if (ord) {
        EMBER_CHECK(std::holds_alternative<double>(*ord), "linalg.vector_norm: ord must be a "
                    "number for a vector norm, got '", ord_text(*ord), "'");
        p = std::get<double>(*ord);
      }
      return vector_norm(a, p, dims, keepdim, dtype);
    }
    return matrix_norm(a, ord.value_or(NormOrd(std::string("fro"))), {dims[0], dims[1]}, keepdim,
                       dtype);
  }
  if (!ord) {
    Tensor out = vector_norm(a, 2, {}, false, dtype);
    if (keepdim) out = out.reshape(Shape(static_cast<size_t>(a.dim()), 1));
    return out;
  }
  EMBER_CHECK(a.dim() == 1 || a.dim() == 2, "linalg.norm: If dim is not specified but ord is, the "
              "input must be 1D or 2D. Got ", a.dim(), "D.");
  if (a.dim() == 1) {
    EMBER_CHECK(std::holds_alternative<double>(*ord), "linalg.vector_norm: ord must be a number "
                "for a vector norm, got '", ord_text(*ord), "'");
    return vector_norm(a, std::get<double>(*ord), {0}, keepdim, dtype);
  }
  return matrix_norm(a, *ord, {0, 1}, keepdim, dtype);
}

Tensor cond(const Tensor& a, const std::optional<NormOrd>& p) {
  EMBER_OP(cond, a, p);
  const char* op = "linalg.cond";
  detail::check_linalg_input(op, a, false);
  bool two = !p || (std::holds_alternative<double>(*p) && std::abs(std::get<double>(*p)) == 2);
  if (two) {
    Tensor s = svdvals(a);
    int64_t k = s.size(-1);
    if (k == 0)
      return zeros(Shape(a.sizes().begin(), a.sizes().end() - 2), detail::real_options(a));
    Tensor hi = s.narrow(-1, 0, 1).squeeze(-1), lo = s.narrow(-1, k - 1, 1).squeeze(-1);
    bool negative = p && std::get<double>(*p) < 0;
    return negative ? lo / hi : hi / lo;
  }
  detail::check_linalg_input(op, a, true);
  auto [ainv, info] = inv_ex(a);
  Tensor c = matrix_norm(a, *p) * matrix_norm(ainv, *p);
  // Singular matrices have an infinite condition number.
  return where(gt(info, 0), scalar_tensor(kInf, c.options()), c);
}

}  // namespace ember::linalg
