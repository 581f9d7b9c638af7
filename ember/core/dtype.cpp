#include "ember/core/dtype.h"

#include "ember/core/error.h"

namespace ember {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::UInt8:
      return "uint8";
    case DType::Int8:
      return "int8";
    case DType::Int16:
      return "int16";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
    case DType::Float16:
      return "float16";
    case DType::BFloat16:
      return "bfloat16";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::Complex32:
      return "complex32";
    case DType::Complex64:
      return "complex64";
    case DType::Complex128:
      return "complex128";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_complex(a) || is_complex(b)) {
    // The complex type whose parts hold both: complex64 + float64 is complex128, complex32 +
    // bfloat16 complex64 (float16 and bfloat16 meet in float32).
    DType real = promote_types(to_real_dtype(a), to_real_dtype(b));
    return real == DType::Float64   ? DType::Complex128
           : real == DType::Float16 ? DType::Complex32
                                    : DType::Complex64;
  }
  bool fa = is_floating_point(a), fb = is_floating_point(b);
  if (fa != fb) return fa ? a : b;  // integer + floating -> the floating one
  if (fa) {
    // float16 and bfloat16 have no common 16-bit type; otherwise the wider wins.
    if (itemsize(a) == 2 && itemsize(b) == 2) return DType::Float32;
    return itemsize(a) > itemsize(b) ? a : b;
  }
  // uint8 and int8 meet in int16 (neither holds the other); otherwise the wider wins:
  // int8 < int16 < int32 < int64, uint8 < int16.
  if (itemsize(a) == itemsize(b)) return DType::Int16;
  return itemsize(a) > itemsize(b) ? a : b;
}

void throw_unsupported_dtype(const char* op, DType t) {
  EMBER_FAIL("[", op, "] not implemented for dtype ", t);
}

}  // namespace ember
