#include "ember/ops/join.h"

#include <algorithm>
#include <cstring>

#include "ember/ops/autograd_support.h"
#include "ember/ops/copy.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/factory.h"
#include "ember/ops/op_entry.h"

namespace ember {
namespace {

// Contiguous CPU parts of the output's dtype are `outer` blocks of bytes each (outer: the product
// of the output's sizes before the join dim), with fixed places in the output: memcpy them. A
// DataLoader batch stacks 64 small samples, where a view and a copy_ dispatch per part took half
// the time. Large joins keep the threaded copy kernels.
bool joinable_by_memcpy(const std::vector<Tensor>& parts, DType dtype, size_t out_bytes) {
  return out_bytes <= (size_t{4} << 20) &&
         std::all_of(parts.begin(), parts.end(), [&](const Tensor& t) {
           return t.is_cpu() && t.is_contiguous() && t.dtype() == dtype;
         });
}

void memcpy_join(Tensor& out, const std::vector<Tensor>& parts, int64_t dim) {
  int64_t outer = 1;
  for (int64_t k = 0; k < dim; ++k) outer *= out.size(k);
  if (outer == 0) return;
  size_t row = out.nbytes() / static_cast<size_t>(outer);
  auto* dst = static_cast<char*>(out.data_ptr());
  size_t offset = 0;
  for (const Tensor& t : parts) {
    size_t block = t.nbytes() / static_cast<size_t>(outer);
    if (block == 0) continue;
    const auto* src = static_cast<const char*>(t.data_ptr());
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + static_cast<size_t>(o) * row + offset, src + static_cast<size_t>(o) * block,
                  block);
    offset += block;
  }
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  EMBER_OP(cat, tensors, dim);
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
  if (parts.empty()) {
    // All skipped: still a result autograd follows, as PyTorch's (each gradient is empty too).
    Tensor out = empty({0}, TensorOptions(dt).with_device(tensors[0].device()));
    if (any_requires_grad(tensors))
      record_list("CatBackward0", {out}, tensors,
                  [n = tensors.size()](std::vector<Tensor>& g, const Node&) {
                    return TensorList(n, g[0]);
                  });
    return out;
  }
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
  if (joinable_by_memcpy(parts, dt, out.nbytes())) {
    memcpy_join(out, parts, d);
  } else {
    NoGradGuard no_grad;
    int64_t start = 0;
    for (const Tensor& t : parts) {
      out.narrow(d, start, t.size(d)).copy_(t);
      start += t.size(d);
    }
  }
  if (any_requires_grad(tensors)) {
    // Every input takes part, the skipped empty ones too (with empty gradients), as PyTorch's.
    Shape lengths;
    std::vector<bool> skipped;
    for (const Tensor& t : tensors) {
      skipped.push_back(t.dim() == 1 && t.numel() == 0);
      if (!skipped.back()) lengths.push_back(t.size(d));
    }
    record_list("CatBackward0", {out}, tensors,
                [lengths, skipped, d](std::vector<Tensor>& g, const Node& n) -> TensorList {
                  std::vector<Tensor> pieces = g[0].split(lengths, d);
                  TensorList grads;
                  size_t k = 0;
                  for (size_t i = 0; i < skipped.size(); ++i) {
                    Tensor piece = skipped[i] ? zeros({0}, g[0].options()) : pieces[k++];
                    grads.push_back(n.needs_input_grad(i) ? piece : Tensor());
                  }
                  return grads;
                });
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  EMBER_OP(stack, tensors, dim);
  EMBER_CHECK(!tensors.empty(), "[stack] expected a non-empty list of tensors");
  int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  for (size_t i = 0; i < tensors.size(); ++i) {
    check_defined("stack", tensors[i]);
    EMBER_CHECK(tensors[i].sizes() == tensors[0].sizes(),
                "[stack] stack expects each tensor to be equal size, but got ", tensors[0].sizes(),
                " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
  }
  if (!any_requires_grad(tensors) && tensors[0].is_cpu()) {
    Shape sizes = tensors[0].sizes();
    sizes.insert(sizes.begin() + d, static_cast<int64_t>(tensors.size()));
    if (joinable_by_memcpy(tensors, tensors[0].dtype(),
                           static_cast<size_t>(numel_of(sizes)) * tensors[0].element_size())) {
      Tensor out = empty(sizes, TensorOptions(tensors[0].dtype()));
      memcpy_join(out, tensors, d);
      return out;
    }
  }
  // Otherwise (autograd, mixed dtypes, large or strided parts) as cat along the new dim.
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(t.unsqueeze(d));
  return cat(parts, d);
}

Tensor repeat(const Tensor& t, const Shape& repeats) {
  EMBER_OP(repeat, t, repeats);
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
  EMBER_OP(tile, t, dims);
  Shape repeats;
  for (int64_t i = static_cast<int64_t>(dims.size()); i < t.dim(); ++i) repeats.push_back(1);
  for (int64_t d : dims) repeats.push_back(d);
  return repeat(t, repeats);
}

}  // namespace ember
