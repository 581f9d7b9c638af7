#include "tests/util/test_util.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace ember::testing {

std::vector<double> values(const Tensor& t) {
  NoGradGuard no_grad;
  return t.tolist<double>();
}

::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected, double rtol,
                                     double atol) {
  if (!actual.defined() || !expected.defined())
    return ::testing::AssertionFailure() << "undefined tensor";
  if (actual.sizes() != expected.sizes())
    return ::testing::AssertionFailure()
           << "shape " << actual.sizes() << " != expected " << expected.sizes();
  std::vector<double> a = values(actual), e = values(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    bool both_nan = std::isnan(a[i]) && std::isnan(e[i]);
    bool same_inf = std::isinf(e[i]) && a[i] == e[i];
    if (both_nan || same_inf) continue;
    if (!(std::fabs(a[i] - e[i]) <= atol + rtol * std::fabs(e[i])))
      return ::testing::AssertionFailure()
             << "element " << i << " of " << a.size() << ": " << a[i] << " vs expected " << e[i]
             << " (diff " << std::fabs(a[i] - e[i]) << ", rtol " << rtol << ", atol " << atol
             << ")";
  }
  return ::testing::AssertionSuccess();
}

Tensor noncontiguous(const Tensor& t) {
  if (t.dim() == 0) return t.clone();
  Shape wide = t.sizes();
  wide.back() *= 2;
  Tensor buf = zeros(wide, t.options());
  Tensor view = buf.slice(t.dim() - 1, 0, wide.back(), 2);
  NoGradGuard no_grad;
  view.copy_(t);
  return view;
}

Tensor uniform(const Shape& sizes, DType dtype, double lo, double hi) {
  Tensor t = empty(sizes, kFloat64);
  uniform_(t, lo, hi);
  return t.to(dtype);
}

double tolerance(DType dtype) {
  switch (dtype) {
    case kFloat16:
      return 2e-3;
    case kBFloat16:
      return 1.6e-2;
    case kFloat32:
      return 2e-5;
    case kFloat64:
      return 1e-12;
    default:
      return 0;
  }
}

std::string torch_python() {
  static const std::string path = [] {
    if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0)
      return std::string("/usr/bin/python3");
    return std::string();
  }();
  return path;
}

}  // namespace ember::testing
