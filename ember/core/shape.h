// Shapes, strides and the arithmetic on them: broadcasting, dimension wrapping, contiguity.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>

#include "ember/core/small_vector.h"

namespace ember {

/// Sizes or strides of a tensor (in elements), or a list of dimensions.
using Shape = SmallVector<int64_t, 6>;

/// The dims a reduction runs over, taken as PyTorch takes them: one dim (`x.sum(0)`) or a list
/// (`x.sum({0, 1})`, a Shape); empty means all dims where the op allows it.
struct Dims : Shape {
  Dims() = default;
  Dims(int64_t dim) : Shape{dim} {}                           // NOLINT: x.sum(0)
  Dims(std::initializer_list<int64_t> dims) : Shape(dims) {}  // NOLINT
  Dims(const Shape& dims) : Shape(dims) {}                    // NOLINT
  template <typename U>
  Dims(const std::vector<U>& dims) : Shape(dims) {}  // NOLINT
};

std::ostream& operator<<(std::ostream& os, const Shape& s);  // [2, 3]
std::string to_string(const Shape& s);

/// Product of the sizes; 1 for a 0-dim shape. Throws on overflow.
int64_t numel_of(const Shape& sizes);

/// Row-major strides for `sizes`.
Shape contiguous_strides(const Shape& sizes);

/// Whether (sizes, strides) describe a row-major dense layout (size-1 dims may have any stride).
bool is_contiguous_layout(const Shape& sizes, const Shape& strides);

/// Wraps a possibly negative `dim` into [0, ndim); `op` names the caller in the error.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

/// The broadcast of two shapes (NumPy rules); `op` names the caller in the error.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

/// Infers one -1 entry so that the shape holds `numel` elements.
Shape infer_size(const Shape& shape, int64_t numel, const char* op);

}  // namespace ember
