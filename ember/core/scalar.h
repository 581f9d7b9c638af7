// A number given where a tensor could be (`x + 2`, `full(shape, 0.5)`), remembering whether it was
// a floating, integral or boolean value: PyTorch's promotion treats each kind differently.
#pragma once

#include <cstdint>
#include <ostream>
#include <type_traits>

#include "ember/core/dtype.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float, Complex };

  Scalar() : kind_(Kind::Int), i_(0) {}
  template <typename T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Bool), i_(v) {}  // NOLINT
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float), d_(static_cast<double>(v)) {}        // NOLINT
  Scalar(Half v) : kind_(Kind::Float), d_(static_cast<float>(v)) {}      // NOLINT
  Scalar(BFloat16 v) : kind_(Kind::Float), d_(static_cast<float>(v)) {}  // NOLINT
  template <typename T>
  Scalar(Complex<T> v)  // NOLINT
      : kind_(Kind::Complex), d_(static_cast<double>(v.re)), im_(static_cast<double>(v.im)) {}

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_complex() const { return kind_ == Kind::Complex; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }

  /// The value as T; a complex value converted to a real type keeps its real part.
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return is_float_like() ? (d_ != 0 || im_ != 0) : i_ != 0;
    } else if constexpr (is_complex_v<T>) {
      using R = real_of_t<T>;
      return is_float_like() ? T(static_cast<R>(d_), static_cast<R>(im_)) : T(static_cast<R>(i_));
    } else {
      return is_float_like() ? static_cast<T>(d_) : static_cast<T>(i_);
    }
  }
  double to_double() const { return is_float_like() ? d_ : static_cast<double>(i_); }
  int64_t to_int() const { return is_float_like() ? static_cast<int64_t>(d_) : i_; }
  /// The imaginary part (0 for a real value).
  double imag() const { return im_; }

  /// The dtype a tensor made from this value gets: bool, int64, the default float or its complex.
  DType dtype() const {
    switch (kind_) {
      case Kind::Bool:
        return DType::Bool;
      case Kind::Int:
        return DType::Int64;
      case Kind::Float:
        return kDefaultFloat;
      case Kind::Complex:
        return to_complex_dtype(kDefaultFloat);
    }
    return kDefaultFloat;
  }

  friend std::ostream& operator<<(std::ostream& os, const Scalar& s) {
    if (s.kind_ == Kind::Complex)
      return os << "(" << s.d_ << (s.im_ < 0 ? "" : "+") << s.im_ << "j)";
    if (s.kind_ == Kind::Float) return os << s.d_;
    if (s.kind_ == Kind::Bool) return os << (s.i_ ? "True" : "False");
    return os << s.i_;
  }

 private:
  bool is_float_like() const { return kind_ == Kind::Float || kind_ == Kind::Complex; }

  Kind kind_;
  union {
    int64_t i_;
    double d_;  // the real part of a complex value
  };
  double im_ = 0;
};

}  // namespace ember
