#include "tests/util/reference.h"

#include "tests/util/test_util.h"

namespace ember::testing {

std::vector<double> broadcast_values(const Tensor& t, const Shape& shape) {
  std::vector<double> src = values(t);
  int64_t n = numel_of(shape);
  std::vector<double> out(static_cast<size_t>(n));
  int64_t nd = static_cast<int64_t>(shape.size()), td = t.dim();
  Shape tstrides = contiguous_strides(t.sizes());
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0;
    for (int64_t d = nd - 1; d >= 0; --d) {
      int64_t k = rem % shape[static_cast<size_t>(d)];
      rem /= shape[static_cast<size_t>(d)];
      int64_t sd = d - (nd - td);
      if (sd >= 0 && t.size(sd) != 1) off += k * tstrides[static_cast<size_t>(sd)];
    }
    out[static_cast<size_t>(i)] = src[static_cast<size_t>(off)];
  }
  return out;
}

std::vector<double> ref_binary(const Tensor& a, const Tensor& b,
                               const std::function<double(double, double)>& f) {
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), "ref");
  std::vector<double> va = broadcast_values(a, shape), vb = broadcast_values(b, shape);
  for (size_t i = 0; i < va.size(); ++i) va[i] = f(va[i], vb[i]);
  return va;
}

std::vector<double> ref_unary(const Tensor& a, const std::function<double(double)>& f) {
  std::vector<double> v = values(a);
  for (double& x : v) x = f(x);
  return v;
}

Tensor ref_mm_wrapping(const Tensor& a, const Tensor& b) {
  Tensor a64 = a.to(kInt64).contiguous(), b64 = b.to(kInt64).contiguous();
  int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  Tensor c = zeros({m, n}, kInt64);
  const int64_t* pa = a64.data_ptr<int64_t>();
  const int64_t* pb = b64.data_ptr<int64_t>();
  int64_t* pc = c.data_ptr<int64_t>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      uint64_t sum = 0;  // unsigned: overflow wraps instead of being undefined
      for (int64_t l = 0; l < k; ++l)
        sum += static_cast<uint64_t>(pa[i * k + l]) * static_cast<uint64_t>(pb[l * n + j]);
      pc[i * n + j] = static_cast<int64_t>(sum);
    }
  return c.to(a.dtype());
}

Tensor make(const std::vector<double>& v, const Shape& shape, DType dtype) {
  if (shape.empty()) return scalar_tensor(v.at(0), dtype);
  return from_vector(v, shape, kFloat64).to(dtype);
}

}  // namespace ember::testing
