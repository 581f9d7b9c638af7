// Tensor's op methods: each forwards to the free function of the same name.
#include "ember/ops/elementwise.h"
#include "ember/ops/join.h"
#include "ember/ops/reduce.h"

namespace ember {

Tensor Tensor::repeat(const Shape& repeats) const { return ember::repeat(*this, repeats); }
Tensor Tensor::add(const Tensor& o, Scalar alpha) const { return ember::add(*this, o, alpha); }
Tensor Tensor::add(Scalar o, Scalar alpha) const { return ember::add(*this, o, alpha); }
Tensor Tensor::sub(const Tensor& o, Scalar alpha) const { return ember::sub(*this, o, alpha); }
Tensor Tensor::sub(Scalar o, Scalar alpha) const { return ember::sub(*this, o, alpha); }
Tensor Tensor::mul(const Tensor& o) const { return ember::mul(*this, o); }
Tensor Tensor::mul(Scalar o) const { return ember::mul(*this, o); }
Tensor Tensor::div(const Tensor& o) const { return ember::div(*this, o); }
Tensor Tensor::div(Scalar o) const { return ember::div(*this, o); }
Tensor Tensor::pow(const Tensor& e) const { return ember::pow(*this, e); }
Tensor Tensor::pow(Scalar e) const { return ember::pow(*this, e); }
Tensor Tensor::maximum(const Tensor& o) const { return ember::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return ember::minimum(*this, o); }
Tensor Tensor::addcmul(const Tensor& a, const Tensor& b, Scalar v) const {
  return ember::addcmul(*this, a, b, v);
}
Tensor Tensor::addcdiv(const Tensor& a, const Tensor& b, Scalar v) const {
  return ember::addcdiv(*this, a, b, v);
}
Tensor Tensor::lerp(const Tensor& end, Scalar w) const { return ember::lerp(*this, end, w); }
Tensor Tensor::eq(const Tensor& o) const { return ember::eq(*this, o); }
Tensor Tensor::eq(Scalar o) const { return ember::eq(*this, o); }
Tensor Tensor::ne(const Tensor& o) const { return ember::ne(*this, o); }
Tensor Tensor::ne(Scalar o) const { return ember::ne(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return ember::lt(*this, o); }
Tensor Tensor::lt(Scalar o) const { return ember::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return ember::le(*this, o); }
Tensor Tensor::le(Scalar o) const { return ember::le(*this, o); }
Tensor Tensor::gt(const Tensor& o) const { return ember::gt(*this, o); }
Tensor Tensor::gt(Scalar o) const { return ember::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return ember::ge(*this, o); }
Tensor Tensor::ge(Scalar o) const { return ember::ge(*this, o); }
Tensor Tensor::logical_and(const Tensor& o) const { return ember::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return ember::logical_or(*this, o); }
Tensor Tensor::masked_fill(const Tensor& mask, Scalar v) const {
  return ember::masked_fill(*this, mask, v);
}
bool Tensor::equal(const Tensor& o) const { return ember::equal(*this, o); }
bool Tensor::allclose(const Tensor& o, double rtol, double atol) const {
  return ember::allclose(*this, o, rtol, atol);
}

Tensor Tensor::sum(std::optional<DType> dtype) const { return ember::sum(*this, dtype); }
Tensor Tensor::sum(const Dims& dims, bool keepdim, std::optional<DType> dtype) const {
  return ember::sum(*this, dims, keepdim, dtype);
}
Tensor Tensor::mean() const { return ember::mean(*this); }
Tensor Tensor::mean(const Dims& dims, bool keepdim) const {
  return ember::mean(*this, dims, keepdim);
}
Tensor Tensor::prod() const { return ember::prod(*this); }
Tensor Tensor::prod(int64_t dim, bool keepdim) const { return ember::prod(*this, dim, keepdim); }
Tensor Tensor::max() const { return ember::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return ember::max(*this, dim, keepdim);
}
Tensor Tensor::min() const { return ember::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return ember::min(*this, dim, keepdim);
}
Tensor Tensor::amax(const Dims& dims, bool keepdim) const {
  return ember::amax(*this, dims, keepdim);
}
Tensor Tensor::amin(const Dims& dims, bool keepdim) const {
  return ember::amin(*this, dims, keepdim);
}
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  return ember::argmax(*this, dim, keepdim);
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const {
  return ember::argmin(*this, dim, keepdim);
}
Tensor Tensor::var(const Dims& dims, bool unbiased, bool keepdim) const {
  return ember::var(*this, dims, unbiased, keepdim);
}
Tensor Tensor::std(const Dims& dims, bool unbiased, bool keepdim) const {
  return ember::std(*this, dims, unbiased, keepdim);
}
Tensor Tensor::all() const { return ember::all(*this); }
Tensor Tensor::any() const { return ember::any(*this); }
Tensor Tensor::norm(Scalar p) const { return ember::norm(*this, p); }
Tensor Tensor::logsumexp(const Dims& dims, bool keepdim) const {
  return ember::logsumexp(*this, dims, keepdim);
}

}  // namespace ember
