#include "ember/ops/join.h"

#include "ember/ops/autograd_support.h"
#include "ember/ops/copy.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/factory.h"

namespace ember {

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "[cat] expected a non-empty list of tensors");
  // Legacy rule kept by PyTorch: 1-D empty tensors are skipped.
  // The skipped ones still take part in type promotion: cat({float32 (0,), int64 [1, 2]}) is
  // float32.
  std::vector<Tensor> parts;
  DType dt = tensors[0].dtype();
  for (const Tensor& t : tensors) {
    check_defined("cat", t);
    dt = promote_types(dt, t.dtype());
    if (!(t.dim() == 1 && t.numel() == 0)) parts.push_back(t);
  }
  if (parts.empty()) return empty({0}, TensorOptions(dt).with_device(tensors[0].device()));
  const Tensor& ref = parts[0];
  EMBER_CHECK(ref.dim() > 0,
              "[cat] zero-dimensional tensor (at position 0) cannot be concatenated");
  int64_t d = wrap_dim(dim, ref.dim(), "cat");
  int64_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& t = parts[i];
    check_same_device("cat", {&ref, &t});
    EMBER_CHECK(t.dim() == ref.dim(), "[cat] tensors must have same number of dimensions: got ",
                ref.dim(), " and ", t.dim());
    for (int64_t k = 0; k < ref.dim(); ++k)
      EMBER_CHECK(k == d || t.size(k) == ref.size(k),
                  "[cat] sizes of tensors must match except in dimension ", d, ". Expected size ",
                  ref.size(k), " but got size ", t.size(k), " for tensor number ", i,
                  " in the list");
    total += t.size(d);
  }
  Shape sizes = ref.sizes();
  sizes[static_cast<size_t>(d)] = total;
  Tensor out = empty(sizes, TensorOptions(dt).with_device(ref.device()));
  {
    NoGradGuard no_grad;
    int64_t start = 0;
    for (const Tensor& t : parts) {
      out.narrow(d, start, t.size(d)).copy_(t);
      start += t.size(d);
    }
  }
  if (any_requires_grad(parts)) {
    Shape lengths;
    for (const Tensor& t : parts) lengths.push_back(t.size(d));
    record_list("CatBackward0", {out}, parts,
                [lengths, d](std::vector<Tensor>& g, const Node& n) -> TensorList {
                  std::vector<Tensor> pieces = g[0].split(lengths, d);
                  for (size_t i = 0; i < pieces.size(); ++i)
                    if (!n.needs_input_grad(i)) pieces[i] = Tensor();
                  return pieces;
                });
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "[stack] expected a non-empty list of tensors");
  int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].sizes() == tensors[0].sizes(),
                "[stack] stack expects each tensor to be equal size, but got ", tensors[0].sizes(),
                " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
    parts.push_back(tensors[i].unsqueeze(d));
  }
  return cat(parts, d);
}

Tensor repeat(const Tensor& t, const Shape& repeats) {
  check_defined("repeat", t);
  EMBER_CHECK(static_cast<int64_t>(repeats.size()) >= t.dim(),
              "[repeat] number of dimensions of repeat dims (", repeats.size(),
              ") can not be smaller than number of dimensions of tensor (", t.dim(), ")");
  // t (left-padded with 1s) seen as [1, s0, 1, s1, ...], broadcast to [r0, s0, r1, s1, ...] and
  // laid out as [r0*s0, r1*s1, ...]: one copy, and autograd sums the copies' gradients through
  // expand's backward.
  size_t pad = repeats.size() - static_cast<size_t>(t.dim());
  Shape split, expanded, out;
  for (size_t i = 0; i < repeats.size(); ++i) {
    int64_t size = i < pad ? 1 : t.sizes()[i - pad];
    EMBER_CHECK(repeats[i] >= 0, "[repeat] trying to create tensor with negative dimension ",
                repeats[i], ": ", repeats);
    split.push_back(1);
    split.push_back(size);
    expanded.push_back(repeats[i]);
    expanded.push_back(size);
    out.push_back(repeats[i] * size);
  }
  return t.reshape(split).expand(expanded).reshape(out);
}

Tensor tile(const Tensor& t, const Shape& dims) {
  Shape repeats;
  for (int64_t i = static_cast<int64_t>(dims.size()); i < t.dim(); ++i) repeats.push_back(1);
  for (int64_t d : dims) repeats.push_back(d);
  return repeat(t, repeats);
}

}  // namespace ember
