// Every error ember raises, and the macros that raise them. Nothing in ember aborts the process:
// a failed check throws, so a training job can catch it, save a checkpoint and go on.
#pragma once

#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>

#include "ember/core/macros.h"

namespace ember {

/// A user error: bad arguments, shapes, dtypes or devices. The message says what was expected.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An index or dimension out of range (Python's IndexError, as PyTorch raises it).
class IndexError : public Error {
 public:
  using Error::Error;
};

/// An argument of the right type but an unacceptable value: a negative learning rate, a batch size
/// of 0 (Python's ValueError, where PyTorch raises it).
class ValueError : public Error {
 public:
  using Error::Error;
};

/// An argument of the wrong kind: a tensor where a number was expected (Python's TypeError).
class TypeError : public Error {
 public:
  using Error::Error;
};

/// A bug in ember: an invariant that should hold did not.
class InternalError : public Error {
 public:
  using Error::Error;
};

/// A device (or a capped virtual CPU device) could not satisfy an allocation.
class OutOfMemoryError : public Error {
 public:
  OutOfMemoryError(std::string message, size_t requested)
      : Error(std::move(message)), requested_(requested) {}
  size_t requested() const { return requested_; }

 private:
  size_t requested_;
};

/// An error reported by the CUDA runtime, cuBLAS, cuDNN or NCCL.
class CudaError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
inline std::string str_cat() { return {}; }

[[noreturn]] void throw_error(std::string message);
[[noreturn]] void throw_index_error(std::string message);
[[noreturn]] void throw_value_error(std::string message);
[[noreturn]] void throw_type_error(std::string message);
[[noreturn]] void throw_internal(const char* file, int line, const char* cond, std::string message);
// Defined by the CUDA backend; `code` is the library's status, `library` is "CUDA", "cuBLAS", ...
[[noreturn]] void throw_cuda_error(const char* library, int code, const char* call,
                                   const char* file, int line);
}  // namespace detail

}  // namespace ember

/// User error: throws ember::Error with the concatenated message.
#define EMBER_CHECK(cond, ...)                                             \
  do {                                                                     \
    if (EMBER_UNLIKELY(!(cond))) {                                         \
      ::ember::detail::throw_error(::ember::detail::str_cat(__VA_ARGS__)); \
    }                                                                      \
  } while (0)

/// User errors of a kind Python names apart (IndexError, ValueError, TypeError); otherwise as
/// EMBER_CHECK.
#define EMBER_CHECK_INDEX(cond, ...)                                             \
  do {                                                                           \
    if (EMBER_UNLIKELY(!(cond))) {                                               \
      ::ember::detail::throw_index_error(::ember::detail::str_cat(__VA_ARGS__)); \
    }                                                                            \
  } while (0)
#define EMBER_CHECK_VALUE(cond, ...)                                             \
  do {                                                                           \
    if (EMBER_UNLIKELY(!(cond))) {                                               \
      ::ember::detail::throw_value_error(::ember::detail::str_cat(__VA_ARGS__)); \
    }                                                                            \
  } while (0)
#define EMBER_CHECK_TYPE(cond, ...)                                             \
  do {                                                                          \
    if (EMBER_UNLIKELY(!(cond))) {                                              \
      ::ember::detail::throw_type_error(::ember::detail::str_cat(__VA_ARGS__)); \
    }                                                                           \
  } while (0)

/// Unconditional user error.
#define EMBER_FAIL(...) ::ember::detail::throw_error(::ember::detail::str_cat(__VA_ARGS__))

/// Bug check: throws ember::InternalError naming the condition and file:line.
#define EMBER_ASSERT(cond, ...)                                               \
  do {                                                                        \
    if (EMBER_UNLIKELY(!(cond))) {                                            \
      ::ember::detail::throw_internal(__FILE__, __LINE__, #cond,              \
                                      ::ember::detail::str_cat(__VA_ARGS__)); \
    }                                                                         \
  } while (0)

/// Checks a call of a library whose success status is 0 (CUDA, cuBLAS, NCCL, MPI); the error
/// names the library, the call, the reason and file:line.
#define EMBER_LIBRARY_CHECK(library, expr)                                                         \
  do {                                                                                             \
    auto ember_status_ = (expr);                                                                   \
    if (EMBER_UNLIKELY(ember_status_ != 0)) {                                                      \
      ::ember::detail::throw_cuda_error(library, static_cast<int>(ember_status_), #expr, __FILE__, \
                                        __LINE__);                                                 \
    }                                                                                              \
  } while (0)

/// Checks a CUDA runtime call.
#define EMBER_CUDA_CHECK(expr) EMBER_LIBRARY_CHECK("CUDA", expr)
/// Checks a cuBLAS call.
#define EMBER_CUBLAS_CHECK(expr) EMBER_LIBRARY_CHECK("cuBLAS", expr)
