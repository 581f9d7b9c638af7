#include "ember/ops/dispatch.h"

namespace ember {

void check_same_device(const char* op, std::initializer_list<const Tensor*> tensors) {
  const Tensor* first = nullptr;
  for (const Tensor* t : tensors) {
    if (!t->defined()) continue;
    if (!first) {
      first = t;
    } else if (t->device() != first->device()) {
      EMBER_FAIL(
          "[", op,
          "] expected all tensors to be on the same device, but found at least two devices, ",
          first->device(), " and ", t->device(),
          " (ember never moves data implicitly: call .to(device) first)");
    }
  }
}

void check_no_overlap(const char* op, const Tensor& out,
                      std::initializer_list<const Tensor*> inputs) {
  for (int64_t d = 0; d < out.dim(); ++d) {
    EMBER_CHECK(
        out.size(d) <= 1 || out.stride(d) != 0, "[", op,
        "] more than one element of the written-to tensor refers to a single memory location (shape ",
        out.sizes(), ", strides ", out.strides(), "); clone() it first");
  }
  if (!out.is_contiguous() || out.numel() == 0) return;
  auto begin = [](const Tensor& t) { return static_cast<const char*>(t.data_ptr()); };
  for (const Tensor* in : inputs) {
    if (!in->defined() || !in->is_contiguous() || in->numel() == 0 ||
        in->storage() != out.storage())
      continue;
    bool same = begin(*in) == begin(out) && in->nbytes() == out.nbytes();
    bool apart = begin(*in) + in->nbytes() <= begin(out) || begin(out) + out.nbytes() <= begin(*in);
    EMBER_CHECK(
        same || apart, "[", op,
        "] some elements of the input tensor and the written-to tensor refer to a single memory location; "
        "clone() the input first");
  }
}

void check_defined(const char* op, const Tensor& t, const char* name) {
  EMBER_CHECK(t.defined(), "[", op, "] ", name, " is an undefined tensor");
}

namespace {
int category(DType t) {
  return t == DType::Bool ? 0 : is_complex(t) ? 3 : is_floating_point(t) ? 2 : 1;
}

// PyTorch's combine_categories: `higher` is the result of the more important class of operands.
DType combine(DType higher, DType lower) {
  if (is_complex(higher)) return higher;
  // A complex scalar keeps a floating tensor's precision (float64 + 1j is complex128).
  if (is_complex(lower)) return is_floating_point(higher) ? to_complex_dtype(higher) : lower;
  if (is_floating_point(higher)) return higher;
  if (higher == DType::Bool || is_floating_point(lower)) return promote_types(higher, lower);
  return higher;
}
}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) return a.dtype();
  bool za = a.dim() == 0, zb = b.dim() == 0;
  if (za == zb) return promote_types(a.dtype(), b.dtype());
  const Tensor& dim = za ? b : a;
  const Tensor& zero = za ? a : b;
  return category(zero.dtype()) > category(dim.dtype()) ? combine(dim.dtype(), zero.dtype())
                                                        : dim.dtype();
}

DType result_type(const Tensor& a, const Scalar& b) {
  DType s = b.dtype();
  return category(s) > category(a.dtype()) ? combine(a.dtype(), s) : a.dtype();
}

}  // namespace ember
