// Tensor factories: filled, ranged, random, and from C++ values.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "ember/core/generator.h"
#include "ember/core/scalar.h"
#include "ember/core/tensor.h"

namespace ember {

Tensor zeros(const Shape& sizes, const TensorOptions& options = {});
Tensor ones(const Shape& sizes, const TensorOptions& options = {});
Tensor full(const Shape& sizes, Scalar value, const TensorOptions& options);
/// full() whose dtype follows the value, as PyTorch's: int -> int64, float -> float32, bool ->
/// bool.
Tensor full(const Shape& sizes, Scalar value);
Tensor zeros_like(const Tensor& t);
Tensor zeros_like(const Tensor& t, DType dtype);
Tensor ones_like(const Tensor& t);
Tensor ones_like(const Tensor& t, DType dtype);
Tensor full_like(const Tensor& t, Scalar value);
Tensor rand_like(const Tensor& t);
Tensor randn_like(const Tensor& t);
/// A 0-dim tensor holding `value`.
Tensor scalar_tensor(Scalar value, const TensorOptions& options = {});

/// [start, end) by step; int64 when all bounds are integers, else float32 (as PyTorch infers).
Tensor arange(Scalar end);
Tensor arange(Scalar end, const TensorOptions& options);
Tensor arange(Scalar start, Scalar end, Scalar step = 1);
Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& options);
Tensor linspace(double start, double end, int64_t steps, const TensorOptions& options = {});
Tensor eye(int64_t n, int64_t m = -1, const TensorOptions& options = {});

/// Uniform in [0, 1).
Tensor rand(const Shape& sizes, const TensorOptions& options = {}, Generator* gen = nullptr);
/// Standard normal.
Tensor randn(const Shape& sizes, const TensorOptions& options = {}, Generator* gen = nullptr);
/// Integers uniform in [low, high); int64 by default.
Tensor randint(int64_t low, int64_t high, const Shape& sizes, const TensorOptions& options = kInt64,
               Generator* gen = nullptr);
/// A random permutation of 0..n-1 (int64).
Tensor randperm(int64_t n, const TensorOptions& options = kInt64, Generator* gen = nullptr);
/// Fills `t` in place from the given distribution.
Tensor& uniform_(Tensor& t, double from = 0, double to = 1, Generator* gen = nullptr);
Tensor& normal_(Tensor& t, double mean = 0, double std = 1, Generator* gen = nullptr);
/// 1 with probability p, else 0, in t's dtype.
Tensor bernoulli(const Tensor& like, double p, Generator* gen = nullptr);

/// A tensor holding a copy of `values` with shape `sizes` (empty: 1-D; use scalar_tensor for
/// 0-dim).
template <typename T>
Tensor from_vector(const std::vector<T>& values, Shape sizes = {},
                   const TensorOptions& options = dtype_of<T>);
/// torch.tensor's data: a number, or a braced list of NestedLists of equal shape. {{5}, {6}} is a
/// 2x1 tensor; a braced list always makes a dimension, however many elements it has.
class NestedList {
 public:
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  NestedList(T value) : value_(value) {}  // NOLINT: numbers convert implicitly, as in Python
  NestedList(std::initializer_list<NestedList> items) : items_(items), is_list_(true) {}

  bool is_list() const { return is_list_; }
  const Scalar& value() const { return value_; }
  const std::vector<NestedList>& items() const { return items_; }

 private:
  Scalar value_;
  std::vector<NestedList> items_;
  bool is_list_ = false;
};

/// torch.tensor's data met one element at a time in row-major order, as a walk over nested lists
/// meets it (NestedList's here, Python's lists in ember.tensor): checks that the lists are
/// rectangular (ragged data is a ValueError naming the dim, as in PyTorch) and keeps the values.
class TensorData {
 public:
  /// A list of `length` items at depth `dim` (0: the outermost).
  void list(size_t dim, int64_t length);
  /// A number at depth `dim`; a lone number at depth 0 makes a 0-dim tensor.
  void value(size_t dim, const Scalar& v);
  /// The tensor. Its dtype, unless `options` gives one, comes from the values as PyTorch infers
  /// it: any float: float32, else any integer: int64, else bool; no values: float32.
  Tensor make(const TensorOptions& options) const;

 private:
  Shape sizes_;  // the first list's length at each depth; every other must agree
  std::vector<Scalar> values_;
  Scalar::Kind kind_ = Scalar::Kind::Bool;  // the widest kind among values_
};

/// torch.tensor(data) from C++ braces.
Tensor tensor(const NestedList& data, const TensorOptions& options = {});

}  // namespace ember
