#include "ember/ops/tensor_index.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "ember/core/grad_mode.h"
#include "ember/ops/copy.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/reduce.h"

namespace ember {
namespace {

// Note [Basic and advanced indices]: integers, slices, None, the ellipsis and Python bools only
// change the geometry, so they are applied first as views. What is left are "advanced" indices:
// integer tensors (a boolean mask becomes one integer tensor per dim it covers, through nonzero),
// each naming a dim of that view. NumPy's rule places their broadcast shape where the first of
// them was when they are adjacent, and in front otherwise.
struct Advanced {
  int64_t dim;   // in the view
  Tensor index;  // int64, on the view's device
};

struct Parsed {
  Tensor view;
  std::vector<Advanced> advanced;
};

// s with `count` dims from `at` replaced by `with`.
Shape splice(const Shape& s, size_t at, size_t count, const Shape& with) {
  Shape out;
  for (size_t i = 0; i < at; ++i) out.push_back(s[i]);
  for (int64_t w : with) out.push_back(w);
  for (size_t i = at + count; i < s.size(); ++i) out.push_back(s[i]);
  return out;
}

Shape concat(const Shape& a, const Shape& b) { return splice(a, a.size(), 0, b); }

bool is_mask(const Tensor& t) { return t.dtype() == kBool || t.dtype() == kUInt8; }

// How many dims of x an index consumes.
int64_t consumed(const TensorIndex& i) {
  switch (i.kind()) {
    case TensorIndex::Kind::Integer:
    case TensorIndex::Kind::Slice:
      return 1;
    case TensorIndex::Kind::Tensor:
      return is_mask(i.tensor()) ? i.tensor().dim() : 1;
    default:
      return 0;
  }
}

Parsed parse(const Tensor& x, const std::vector<TensorIndex>& indices, const char* op) {
  EMBER_CHECK(x.defined(), "[", op, "] the tensor is undefined");
  int64_t used = 0, ellipses = 0;
  for (const TensorIndex& i : indices) {
    used += consumed(i);
    ellipses += i.kind() == TensorIndex::Kind::Ellipsis;
  }
  EMBER_CHECK_INDEX(ellipses <= 1, "[", op, "] an index can only have a single ellipsis ('...')");
  EMBER_CHECK_INDEX(used <= x.dim(), "[", op, "] too many indices for tensor of dimension ",
                    x.dim(), " (got ", used, ")");
  Parsed p{x, {}};
  int64_t d = 0;
  for (size_t k = 0; k < indices.size(); ++k) {
    const TensorIndex& i = indices[k];
    switch (i.kind()) {
      case TensorIndex::Kind::Integer:
        p.view = p.view.select(d, i.integer());
        break;
      case TensorIndex::Kind::Slice: {
        const Slice& s = i.slice();
        EMBER_CHECK_VALUE(s.step > 0, "[", op, "] step must be greater than zero, got ", s.step);
        p.view = p.view.slice(d, s.start.value_or(0),
                              s.stop.value_or(std::numeric_limits<int64_t>::max()), s.step);
        ++d;
        break;
      }
      case TensorIndex::Kind::None:
        p.view = p.view.unsqueeze(d++);
        break;
      case TensorIndex::Kind::Boolean:
        p.view = p.view.unsqueeze(d);
        if (i.integer() == 0) p.view = p.view.slice(d, 0, 0);
        ++d;
        break;
      case TensorIndex::Kind::Ellipsis:
        d += x.dim() - used;
        break;
      case TensorIndex::Kind::Tensor: {
        const Tensor& t = i.tensor();
        EMBER_CHECK(t.defined(), "[", op, "] index ", k, " is an undefined tensor");
        EMBER_CHECK(t.device() == x.device() || t.is_cpu(), "[", op,
                    "] indices should be on the tensor's device (", x.device(),
                    ") or the cpu, got ", t.device());
        if (is_mask(t)) {
          for (int64_t j = 0; j < t.dim(); ++j)
            EMBER_CHECK_INDEX(t.size(j) == p.view.size(d + j), "[", op, "] the shape of the mask ",
                              t.sizes(), " at index ", k,
                              " does not match the shape of the indexed tensor ", p.view.sizes(),
                              " from dim ", d);
          Tensor nz = nonzero(t).to(x.device());
          for (int64_t j = 0; j < t.dim(); ++j) p.advanced.push_back({d + j, nz.select(1, j)});
          d += t.dim();
        } else {
          EMBER_CHECK_INDEX(is_integral(t.dtype(), /*include_bool=*/false), "[", op,
                            "] tensors used as indices must be long, int, byte or bool tensors, "
                            "got ",
                            t.dtype());
          p.advanced.push_back({d++, t.to(x.device(), kInt64)});
        }
        break;
      }
    }
  }
  return p;
}

// idx with negative entries wrapped; an entry out of [-size, size) is an IndexError.
Tensor wrapped(const Tensor& idx, int64_t size, int64_t dim, const char* op) {
  if (idx.numel() == 0) return idx;
  int64_t lo = min(idx).item<int64_t>(), hi = max(idx).item<int64_t>();
  EMBER_CHECK_INDEX(lo >= -size && hi < size, "[", op, "] index ", lo < -size ? lo : hi,
                    " is out of bounds for dimension ", dim, " with size ", size);
  return lo < 0 ? where(lt(idx, 0), add(idx, size), idx) : idx;
}

// The advanced indices folded into one: the view with the indexed dims moved to the front and
// flattened into dim 0 (`flat`, or the permuted view when flattening is left to the caller), and
// one int64 index of the indices' broadcast shape into that dim.
struct Folded {
  Tensor permuted;    // advanced dims first, in order, then the others
  Shape index_shape;  // the indices' broadcast shape
  Tensor linear;      // int64, index_shape: row-major position among the advanced dims
  Shape rest;         // sizes of the other dims, in order
  bool adjacent;      // whether the advanced dims were next to each other
  int64_t first;      // the first advanced dim
};

Folded fold(const Parsed& p, const char* op) {
  const Tensor& v = p.view;
  Folded f;
  f.first = p.advanced.front().dim;
  f.adjacent = true;
  std::vector<int64_t> perm;
  std::vector<bool> is_adv(static_cast<size_t>(v.dim()), false);
  for (size_t k = 0; k < p.advanced.size(); ++k) {
    perm.push_back(p.advanced[k].dim);
    is_adv[static_cast<size_t>(p.advanced[k].dim)] = true;
    if (k > 0 && p.advanced[k].dim != p.advanced[k - 1].dim + 1) f.adjacent = false;
    f.index_shape = k == 0 ? p.advanced[0].index.sizes()
                           : broadcast_shapes(f.index_shape, p.advanced[k].index.sizes(), op);
  }
  for (int64_t d = 0; d < v.dim(); ++d)
    if (!is_adv[static_cast<size_t>(d)]) {
      perm.push_back(d);
      f.rest.push_back(v.size(d));
    }
  f.permuted = v.permute(perm);
  NoGradGuard no_grad;  // indices carry no gradient
  int64_t stride = 1;
  for (size_t k = p.advanced.size(); k-- > 0;) {
    int64_t size = v.size(p.advanced[k].dim);
    Tensor term = mul(wrapped(p.advanced[k].index, size, p.advanced[k].dim, op), stride);
    f.linear = f.linear.defined() ? add(f.linear, term) : term;
    stride *= size;
  }
  f.linear = f.linear.expand(f.index_shape);
  return f;
}

// The shape x[indices] has: the indices' shape where the first advanced dim was (adjacent) or
// in front.
Shape result_shape(const Folded& f) {
  return splice(f.rest, static_cast<size_t>(f.adjacent ? f.first : 0), 0, f.index_shape);
}

// The permutation taking the (index dims, rest) layout to result_shape's, or back with `inverse`.
std::vector<int64_t> index_dims_in_place(const Folded& f, bool inverse) {
  auto b = static_cast<int64_t>(f.index_shape.size());
  auto r = static_cast<int64_t>(f.rest.size());
  int64_t first = f.adjacent ? f.first : 0;
  std::vector<int64_t> perm;  // result dim -> (index dims, rest) dim
  for (int64_t d = 0; d < first; ++d) perm.push_back(b + d);
  for (int64_t d = 0; d < b; ++d) perm.push_back(d);
  for (int64_t d = first; d < r; ++d) perm.push_back(b + d);
  if (!inverse) return perm;
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

}  // namespace

Tensor index(const Tensor& x, const std::vector<TensorIndex>& indices) {
  EMBER_OP(index, x, indices);
  Parsed p = parse(x, indices, "index");
  if (p.advanced.empty()) return p.view;
  if (p.advanced.size() == 1) {
    // One integer tensor: index_select along its dim, then its shape in place of that dim.
    const Advanced& a = p.advanced[0];
    Shape sizes = splice(p.view.sizes(), static_cast<size_t>(a.dim), 1, a.index.sizes());
    return p.view.index_select(a.dim, a.index.reshape({-1})).reshape(sizes);
  }
  Folded f = fold(p, "index");
  Tensor flat = f.permuted.reshape(concat({-1}, f.rest));
  Tensor out = flat.index_select(0, f.linear.reshape({-1})).reshape(concat(f.index_shape, f.rest));
  return f.adjacent && f.first > 0 ? out.permute(index_dims_in_place(f, false)) : out;
}

Tensor& index_put_(Tensor& x, const std::vector<TensorIndex>& indices, const Tensor& value) {
  EMBER_OP(index_put_, x, indices, value);
  EMBER_CHECK(value.defined(), "[index_put_] the value is an undefined tensor");
  Parsed p = parse(x, indices, "index_put_");
  Tensor& v = p.view;
  if (p.advanced.empty()) {
    v.copy_(value);
    return x;
  }
  Tensor src = value.to(v.device(), v.dtype());
  if (p.advanced.size() == 1) {
    // scatter_ along the indexed dim: the index and the value broadcast to the target's shape.
    const Advanced& a = p.advanced[0];
    Tensor idx = wrapped(a.index.reshape({-1}), v.size(a.dim), a.dim, "index_put_");
    Shape target = v.sizes();
    target[static_cast<size_t>(a.dim)] = idx.numel();
    Shape by_index =
        splice(v.sizes(), static_cast<size_t>(a.dim), 1, a.index.sizes());  // x[indices]'s
    Shape along(static_cast<size_t>(v.dim()), 1);
    along[static_cast<size_t>(a.dim)] = idx.numel();
    v.scatter_(a.dim, idx.view(along).expand(target),
               src.expand(by_index).contiguous().reshape(target));
    return x;
  }
  Folded f = fold(p, "index_put_");
  Tensor flat;
  try {
    flat = f.permuted.view(concat({-1}, f.rest));  // must stay a view: the writes go through it
  } catch (const Error&) {
    EMBER_FAIL(
        "[index_put_] these indices name dims of x that cannot be viewed as one (x of "
        "shape ",
        x.sizes(), ", strides ", x.strides(),
        "); assign through one tensor index or make x contiguous first");
  }
  Tensor values = src.expand(result_shape(f));
  if (f.adjacent && f.first > 0) values = values.permute(index_dims_in_place(f, true));
  Tensor lin = f.linear.reshape({-1});
  Shape target = flat.sizes();
  target[0] = lin.numel();
  Shape along(static_cast<size_t>(flat.dim()), 1);
  along[0] = lin.numel();
  flat.scatter_(0, lin.view(along).expand(target), values.contiguous().reshape(target));
  return x;
}

Tensor& index_put_(Tensor& x, const std::vector<TensorIndex>& indices, Scalar value) {
  EMBER_OP(index_put_, x, indices, value);
  if (indices.size() == 1 && indices[0].kind() == TensorIndex::Kind::Tensor &&
      indices[0].tensor().dtype() == kBool && indices[0].tensor().sizes() == x.sizes() &&
      indices[0].tensor().device() == x.device()) {
    x.masked_fill_(indices[0].tensor(), value);  // x[mask] = v needs no nonzero (no sync)
    return x;
  }
  Parsed p = parse(x, indices, "index_put_");
  if (p.advanced.empty()) {
    p.view.fill_(value);
    return x;
  }
  return index_put_(x, indices,
                    scalar_tensor(value, TensorOptions(x.dtype()).with_device(x.device())));
}

Tensor nonzero(const Tensor& x) {
  EMBER_OP(nonzero, x);
  EMBER_CHECK(x.defined(), "[nonzero] the tensor is undefined");
  NoGradGuard no_grad;
  Tensor m = ne(x, 0).to(Device(kCPU, 0)).contiguous();
  const bool* p = m.data_ptr<bool>();
  int64_t n = std::count(p, p + m.numel(), true);
  Tensor out = empty({n, x.dim()}, kInt64);
  int64_t* o = out.data_ptr<int64_t>();
  Shape pos(static_cast<size_t>(x.dim()), 0);
  for (int64_t i = 0; i < m.numel(); ++i) {
    if (p[i]) o = std::copy(pos.begin(), pos.end(), o);
    for (int64_t d = x.dim() - 1; d >= 0; --d) {  // the next row-major position
      auto du = static_cast<size_t>(d);
      if (++pos[du] < x.size(d)) break;
      pos[du] = 0;
    }
  }
  return out.to(x.device());
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  EMBER_OP(masked_select, x, mask);
  EMBER_CHECK(mask.dtype() == kBool, "[masked_select] expected a bool mask, got ", mask.dtype());
  Shape shape = broadcast_shapes(x.sizes(), mask.sizes(), "masked_select");
  Tensor where_true = nonzero(mask.expand(shape).reshape({-1})).reshape({-1});
  return x.expand(shape).reshape({-1}).index_select(0, where_true);
}

}  // namespace ember
