#include "ember/ops/complex.h"

#include <cmath>

#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/join.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/pointwise.h"

namespace ember {
namespace {

// A view of x's memory with another dtype and geometry (sizes, strides and offset counted in
// elements of `dtype`).
Tensor reinterpret(const Tensor& x, DType dtype, Shape sizes, Shape strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>(x.storage(), std::move(sizes), std::move(strides),
                                           offset, dtype, x.device());
  if (GradMode::is_enabled()) {  // a view of x, as the other view ops make
    const std::shared_ptr<TensorImpl>& parent = x.impl();
    impl->view_base = parent->view_base ? parent->view_base : parent;
    impl->view_version = x._version();
  }
  return Tensor(std::move(impl));
}

}  // namespace

Tensor view_as_real(const Tensor& x) {
  EMBER_OP(view_as_real, x);
  check_defined("view_as_real", x);
  EMBER_CHECK(x.is_complex(), "[view_as_real] view_as_real is only supported for complex tensors, got ",
              x.dtype());
  Shape sizes = x.sizes(), strides = x.strides();
  for (int64_t& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  Tensor out = reinterpret(x, to_real_dtype(x.dtype()), sizes, strides, 2 * x.storage_offset());
  if (any_requires_grad({&x}))
    record("ViewAsRealBackward0", {&out}, {&x},
           [](const Tensor& g) -> TensorList { return {view_as_complex(g.contiguous())}; });
  return out;
}

Tensor view_as_complex(const Tensor& x) {
  EMBER_OP(view_as_complex, x);
  check_defined("view_as_complex", x);
  EMBER_CHECK(x.dtype() == kFloat16 || x.dtype() == kFloat32 || x.dtype() == kFloat64,
              "[view_as_complex] view_as_complex is only supported for half, float and double "
              "tensors, but got a tensor of scalar type: ", x.dtype());
  EMBER_CHECK(x.dim() > 0, "[view_as_complex] Input tensor must have one or more dimensions");
  EMBER_CHECK(x.size(-1) == 2, "[view_as_complex] Tensor must have a last dimension of size 2, got ",
              x.size(-1));
  EMBER_CHECK(x.stride(-1) == 1, "[view_as_complex] Tensor must have a last dimension with stride 1, got ",
              x.stride(-1));
  Shape sizes(x.sizes().begin(), x.sizes().end() - 1);
  Shape strides(x.strides().begin(), x.strides().end() - 1);
  for (int64_t& s : strides) {
    EMBER_CHECK(s % 2 == 0, "[view_as_complex] Tensor must have a stride divisible by 2 for all "
                            "but last dimension, got strides ", x.strides());
    s /= 2;
  }
  EMBER_CHECK(x.storage_offset() % 2 == 0,
              "[view_as_complex] Tensor must have a storage_offset divisible by 2, got ",
              x.storage_offset());
  Tensor out = reinterpret(x, to_complex_dtype(x.dtype()), sizes, strides, x.storage_offset() / 2);
  if (any_requires_grad({&x}))
    record("ViewAsComplexBackward0", {&out}, {&x},
           [](const Tensor& g) -> TensorList { return {view_as_real(g)}; });
  return out;
}

Tensor real(const Tensor& x) {
  EMBER_OP(real, x);
  check_defined("real", x);
  return x.is_complex() ? view_as_real(x).select(-1, 0) : x;
}

Tensor imag(const Tensor& x) {
  EMBER_OP(imag, x);
  check_defined("imag", x);
  EMBER_CHECK(x.is_complex(), "[imag] imag is not implemented for tensors with non-complex dtypes.");
  return view_as_real(x).select(-1, 1);
}

Tensor conj(const Tensor& x) {
  EMBER_OP(conj, x);
  check_defined("conj", x);
  if (!x.is_complex()) return x;
  return complex(real(x), neg(imag(x)));
}

Tensor view_dtype(const Tensor& x, DType dtype) {
  EMBER_OP(view_dtype, x, dtype);
  check_defined("view", x);
  if (dtype == x.dtype()) return x;
  EMBER_CHECK(!x.requires_grad() || !GradMode::is_enabled() ||
                  (is_floating_point(dtype) || is_complex(dtype)) == (x.is_floating_point() || x.is_complex()),
              "[view] viewing a tensor that requires grad as ", dtype, " is not differentiable");
  auto from = static_cast<int64_t>(itemsize(x.dtype())), to = static_cast<int64_t>(itemsize(dtype));
  Shape sizes = x.sizes(), strides = x.strides();
  int64_t offset = x.storage_offset();
  if (from != to) {
    const char* what = "to view ";
    EMBER_CHECK(x.dim() > 0, "[view] self.dim() cannot be 0 ", what, x.dtype(), " as ", dtype,
                " (different element sizes)");
    EMBER_CHECK(x.stride(-1) == 1, "[view] self.stride(-1) must be 1 ", what, x.dtype(), " as ",
                dtype, " (different element sizes), but got ", x.stride(-1));
    if (from > to) {
      int64_t r = from / to;
      for (size_t d = 0; d + 1 < strides.size(); ++d) strides[d] *= r;
      sizes.back() *= r;
      offset *= r;
    } else {
      int64_t r = to / from;
      EMBER_CHECK(sizes.back() % r == 0, "[view] self.size(-1) must be divisible by ", r, " ",
                  what, x.dtype(), " as ", dtype, " (different element sizes), but got ",
                  sizes.back());
      for (size_t d = 0; d + 1 < strides.size(); ++d) {
        EMBER_CHECK(strides[d] % r == 0, "[view] self.stride(", d, ") must be divisible by ", r,
                    " ", what, x.dtype(), " as ", dtype, " (different element sizes), but got ",
                    strides[d]);
        strides[d] /= r;
      }
      EMBER_CHECK(offset % r == 0, "[view] self.storage_offset() must be divisible by ", r, " ",
                  what, x.dtype(), " as ", dtype, " (different element sizes), but got ", offset);
      sizes.back() /= r;
      offset /= r;
    }
  }
  return reinterpret(x, dtype, sizes, strides, offset);
}

Tensor complex(const Tensor& re, const Tensor& im) {
  EMBER_OP(complex, re, im);
  check_defined("complex", re, "real");
  check_defined("complex", im, "imag");
  EMBER_CHECK(re.dtype() == im.dtype() &&
                  (re.dtype() == kFloat16 || re.dtype() == kFloat32 || re.dtype() == kFloat64),
              "[complex] Expected both inputs to be Half, Float or Double tensors but got ",
              re.dtype(), " and ", im.dtype());
  Shape shape = broadcast_shapes(re.sizes(), im.sizes(), "complex");
  return view_as_complex(stack({re.expand(shape), im.expand(shape)}, -1));
}

Tensor polar(const Tensor& abs, const Tensor& angle) {
  EMBER_OP(polar, abs, angle);
  check_defined("polar", abs, "abs");
  check_defined("polar", angle, "angle");
  EMBER_CHECK(abs.dtype() == angle.dtype() && (abs.dtype() == kFloat32 || abs.dtype() == kFloat64),
              "[polar] Expected both inputs to be Float or Double tensors but got ", abs.dtype(),
              " and ", angle.dtype());
  return complex(abs * cos(angle), abs * sin(angle));
}

Tensor angle(const Tensor& x) {
  EMBER_OP(angle, x);
  check_defined("angle", x);
  if (x.is_complex()) return atan2(imag(x), real(x));
  Tensor xf = x.is_floating_point() ? x : x.to(kDefaultFloat);
  Tensor a = where(lt(xf, 0.0), full_like(xf, M_PI), zeros_like(xf));
  return where(isnan(xf), xf, a);
}

Tensor sgn(const Tensor& x) {
  EMBER_OP(sgn, x);
  check_defined("sgn", x);
  if (!x.is_complex()) return sign(x);
  if (x.dtype() == kComplex32) {
    // PyTorch divides each part by |z| in float and rounds once: so does this, bit for bit
    // (x / abs(x) would round |z| to float16 first).
    Tensor z = x.to(kComplex64), r = abs(z);
    return where(eq(r, 0.0), zeros_like(z), complex(real(z) / r, imag(z) / r)).to(kComplex32);
  }
  Tensor r = abs(x);
  return where(eq(r, 0.0), zeros_like(x), x / r);
}

Tensor hypot(const Tensor& a, const Tensor& b) {
  EMBER_OP(hypot, a, b);
  Tensor out = detail::binary(BinaryOp::Hypot, a, b);
  if (any_requires_grad({&a, &b})) {
    record("HypotBackward0", {&out}, {&a, &b},
           [sa = SavedTensor(a), sb = SavedTensor(b), so = SavedTensor(out, true)](
               const Tensor& g, const Node& n) {
             const Tensor &a = sa.get(), &b = sb.get(), &out = so.get();
             Tensor ga, gb;
             if (n.needs_input_grad(0)) ga = sum_to(g * a / out, a.sizes());
             if (n.needs_input_grad(1)) gb = sum_to(g * b / out, b.sizes());
             return TensorList{ga, gb};
           });
  }
  return out;
}

namespace detail {
Tensor complex_abs(const Tensor& x) {
  NoGradGuard no_grad;
  return hypot(real(x), imag(x));
}
}  // namespace detail

}  // namespace ember
