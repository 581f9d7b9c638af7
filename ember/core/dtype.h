// Element types, PyTorch's type promotion, and the switch that turns a run-time dtype into a C++
// type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <type_traits>

#include "ember/core/complex.h"
#include "ember/core/half.h"

namespace ember {

// (Later dtypes come last: the values of the others stay what files and peers know.)
enum class DType : int8_t {
  Bool, UInt8, Int32, Int64, Float16, BFloat16, Float32, Float64, Int8, Int16, Complex64,
  Complex128, Complex32
};
inline constexpr int kNumDTypes = 13;

inline constexpr DType kBool = DType::Bool;
inline constexpr DType kUInt8 = DType::UInt8;
inline constexpr DType kInt8 = DType::Int8;
inline constexpr DType kInt16 = DType::Int16;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kHalf = DType::Float16;
inline constexpr DType kFloat = DType::Float32;
inline constexpr DType kDouble = DType::Float64;
inline constexpr DType kLong = DType::Int64;
inline constexpr DType kInt = DType::Int32;
inline constexpr DType kShort = DType::Int16;
inline constexpr DType kChar = DType::Int8;
inline constexpr DType kComplex32 = DType::Complex32;
inline constexpr DType kComplexHalf = DType::Complex32;
inline constexpr DType kComplex64 = DType::Complex64;
inline constexpr DType kComplex128 = DType::Complex128;
inline constexpr DType kComplexFloat = DType::Complex64;
inline constexpr DType kComplexDouble = DType::Complex128;

/// Bytes per element.
constexpr size_t itemsize(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8:
      return 1;
    case DType::Int16:
    case DType::Float16:
    case DType::BFloat16:
      return 2;
    case DType::Int32:
    case DType::Float32:
    case DType::Complex32:
      return 4;
    case DType::Int64:
    case DType::Float64:
    case DType::Complex64:
      return 8;
    case DType::Complex128:
      return 16;
  }
  return 0;
}

/// "float32", "int64", ... (PyTorch's names without the "torch." prefix).
const char* dtype_name(DType t);
std::ostream& operator<<(std::ostream& os, DType t);

constexpr bool is_floating_point(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}
constexpr bool is_complex(DType t) {
  return t == DType::Complex32 || t == DType::Complex64 || t == DType::Complex128;
}
/// complex32 -> float16, complex64 -> float32, complex128 -> float64; the others are their own.
constexpr DType to_real_dtype(DType t) {
  switch (t) {
    case DType::Complex32:
      return DType::Float16;
    case DType::Complex64:
      return DType::Float32;
    case DType::Complex128:
      return DType::Float64;
    default:
      return t;
  }
}
/// The complex dtype with a real dtype's precision, as PyTorch's toComplexType: float64 ->
/// complex128, float16 -> complex32, the others complex64.
constexpr DType to_complex_dtype(DType t) {
  if (t == DType::Float64 || t == DType::Complex128) return DType::Complex128;
  if (t == DType::Float16 || t == DType::Complex32) return DType::Complex32;
  return DType::Complex64;
}
constexpr bool is_integral(DType t, bool include_bool) {
  return t == DType::UInt8 || t == DType::Int8 || t == DType::Int16 || t == DType::Int32 ||
         t == DType::Int64 || (include_bool && t == DType::Bool);
}

/// The smallest and the largest value of an integral dtype (bool: 0 and 1).
constexpr int64_t integral_min(DType t) {
  switch (t) {
    case DType::Int8:
      return -128;
    case DType::Int16:
      return -32768;
    case DType::Int32:
      return -2147483648LL;
    case DType::Int64:
      return INT64_MIN;
    default:
      return 0;
  }
}
constexpr int64_t integral_max(DType t) {
  switch (t) {
    case DType::Bool:
      return 1;
    case DType::UInt8:
      return 255;
    case DType::Int8:
      return 127;
    case DType::Int16:
      return 32767;
    case DType::Int32:
      return 2147483647LL;
    default:
      return INT64_MAX;
  }
}

/// PyTorch's torch.promote_types: the smallest dtype that holds values of both.
DType promote_types(DType a, DType b);
/// PyTorch's torch.can_cast: whether an in-place op may store a `from` result into `to` (no
/// complex into real, no floating into integral, nothing but bool into bool).
constexpr bool can_cast(DType from, DType to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating_point(from) && !is_floating_point(to) && !is_complex(to)) return false;
  return from == DType::Bool || to != DType::Bool;
}

/// The default floating dtype (float32), used for Python-like float scalars and factories.
inline constexpr DType kDefaultFloat = DType::Float32;

// C++ type <-> DType.
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::UInt8;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::Int8;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::Int16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::Int32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::Int64;
};
template <>
struct DTypeOf<Half> {
  static constexpr DType value = DType::Float16;
};
template <>
struct DTypeOf<BFloat16> {
  static constexpr DType value = DType::BFloat16;
};
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::Float32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::Float64;
};
template <>
struct DTypeOf<Complex<Half>> {
  static constexpr DType value = DType::Complex32;
};
template <>
struct DTypeOf<Complex<float>> {
  static constexpr DType value = DType::Complex64;
};
template <>
struct DTypeOf<Complex<double>> {
  static constexpr DType value = DType::Complex128;
};
template <typename T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

/// The type elementwise math runs in: float for the 16-bit floats (complex<float> for complex32),
/// the type itself otherwise.
template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<Half> {
  using type = float;
};
template <>
struct OpMath<BFloat16> {
  using type = float;
};
template <>
struct OpMath<Complex<Half>> {
  using type = Complex<float>;
};
template <typename T>
using opmath_t = typename OpMath<T>::type;

/// A value carrying a C++ type through a generic lambda: `[&](auto tag) { using T =
/// EMBER_TYPE(tag); }`.
template <typename T>
struct TypeTag {
  using type = T;
};
#define EMBER_TYPE(tag) typename decltype(tag)::type

[[noreturn]] void throw_unsupported_dtype(const char* op, DType t);

/// Calls f(TypeTag<T>{}) for the C++ type of `t`, any of the ten real dtypes (the complex ones
/// are dispatched only where an op asks for them: dispatch_with_complex).
template <typename F>
decltype(auto) dispatch_all(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Bool:
      return f(TypeTag<bool>{});
    case DType::UInt8:
      return f(TypeTag<uint8_t>{});
    case DType::Int8:
      return f(TypeTag<int8_t>{});
    case DType::Int16:
      return f(TypeTag<int16_t>{});
    case DType::Int32:
      return f(TypeTag<int32_t>{});
    case DType::Int64:
      return f(TypeTag<int64_t>{});
    case DType::Float16:
      return f(TypeTag<Half>{});
    case DType::BFloat16:
      return f(TypeTag<BFloat16>{});
    case DType::Float32:
      return f(TypeTag<float>{});
    case DType::Float64:
      return f(TypeTag<double>{});
    case DType::Complex32:
    case DType::Complex64:
    case DType::Complex128:
      break;
  }
  throw_unsupported_dtype(op, t);
}

/// Like dispatch_all, for the four floating dtypes; others are a clear error naming `op`.
template <typename F>
decltype(auto) dispatch_floating(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Float16:
      return f(TypeTag<Half>{});
    case DType::BFloat16:
      return f(TypeTag<BFloat16>{});
    case DType::Float32:
      return f(TypeTag<float>{});
    case DType::Float64:
      return f(TypeTag<double>{});
    default:
      throw_unsupported_dtype(op, t);
  }
}

/// The integer dtypes and bool (the bitwise ops).
template <typename F>
decltype(auto) dispatch_integral(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Bool:
      return f(TypeTag<bool>{});
    case DType::UInt8:
      return f(TypeTag<uint8_t>{});
    case DType::Int8:
      return f(TypeTag<int8_t>{});
    case DType::Int16:
      return f(TypeTag<int16_t>{});
    case DType::Int32:
      return f(TypeTag<int32_t>{});
    case DType::Int64:
      return f(TypeTag<int64_t>{});
    default:
      throw_unsupported_dtype(op, t);
  }
}

/// Numeric dtypes (all but bool).
template <typename F>
decltype(auto) dispatch_numeric(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::UInt8:
      return f(TypeTag<uint8_t>{});
    case DType::Int8:
      return f(TypeTag<int8_t>{});
    case DType::Int16:
      return f(TypeTag<int16_t>{});
    case DType::Int32:
      return f(TypeTag<int32_t>{});
    case DType::Int64:
      return f(TypeTag<int64_t>{});
    case DType::Float16:
      return f(TypeTag<Half>{});
    case DType::BFloat16:
      return f(TypeTag<BFloat16>{});
    case DType::Float32:
      return f(TypeTag<float>{});
    case DType::Float64:
      return f(TypeTag<double>{});
    default:
      throw_unsupported_dtype(op, t);
  }
}

/// complex32, complex64 and complex128 (complex32 computes in complex64: OpMath).
template <typename F>
decltype(auto) dispatch_complex(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Complex32:
      return f(TypeTag<Complex<Half>>{});
    case DType::Complex64:
      return f(TypeTag<Complex<float>>{});
    case DType::Complex128:
      return f(TypeTag<Complex<double>>{});
    default:
      throw_unsupported_dtype(op, t);
  }
}

/// Every dtype, the complex ones included (copies, fills, gathers: ops that move values).
template <typename F>
decltype(auto) dispatch_all_and_complex(DType t, const char* op, F&& f) {
  if (is_complex(t)) return dispatch_complex(t, op, f);
  return dispatch_all(t, op, f);
}

}  // namespace ember
