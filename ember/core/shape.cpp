#include "ember/core/shape.h"

#include <sstream>

#include "ember/core/error.h"

namespace ember {

std::ostream& operator<<(std::ostream& os, const Shape& s) {
  os << '[';
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  return os << ']';
}

std::string to_string(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

int64_t numel_of(const Shape& sizes) {
  int64_t n = 1;
  for (int64_t d : sizes) {
    EMBER_CHECK(d >= 0, "negative dimension in shape ", sizes);
    EMBER_CHECK(!__builtin_mul_overflow(n, d, &n), "shape ", sizes, " has too many elements");
  }
  return n;
}

Shape contiguous_strides(const Shape& sizes) {
  Shape strides(sizes.size(), 1);
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return strides;
}

bool is_contiguous_layout(const Shape& sizes, const Shape& strides) {
  for (int64_t s : sizes)
    if (s == 0) return true;
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = ndim == 0 ? 1 : ndim;  // a 0-dim tensor accepts dim 0 and -1, like PyTorch
  EMBER_CHECK_INDEX(dim >= -n && dim < n, "[", op,
              "] dimension out of range (expected to be in range of [", -n, ", ", n - 1,
              "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    EMBER_CHECK(da == db || da == 1 || db == 1, "[", op, "] shapes ", a, " and ", b,
                " cannot be broadcast: size ", da, " vs ", db, " at dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape infer_size(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      EMBER_CHECK(infer < 0, "[", op, "] only one dimension can be inferred, got shape ", shape);
      infer = static_cast<int>(i);
    } else {
      EMBER_CHECK(shape[i] >= 0, "[", op, "] invalid shape dimension ", shape[i], " in ", shape);
      EMBER_CHECK(!__builtin_mul_overflow(known, shape[i], &known), "[", op, "] shape ", shape,
                  " has too many elements");
    }
  }
  if (infer >= 0) {
    EMBER_CHECK(known != 0 && numel % known == 0, "[", op, "] shape ", shape,
                " is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    EMBER_CHECK(known == numel, "[", op, "] shape ", shape, " is invalid for input of size ",
                numel);
  }
  return out;
}

}  // namespace ember
