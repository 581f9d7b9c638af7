#include "ember/core/error.h"

namespace ember::detail {

void throw_error(std::string message) { throw Error(std::move(message)); }
void throw_index_error(std::string message) { throw IndexError(std::move(message)); }
void throw_value_error(std::string message) { throw ValueError(std::move(message)); }
void throw_type_error(std::string message) { throw TypeError(std::move(message)); }

void throw_internal(const char* file, int line, const char* cond, std::string message) {
  throw InternalError(str_cat("internal error (a bug in ember, please report it): ", message, " [",
                              cond, " failed at ", file, ":", line, "]"));
}

}  // namespace ember::detail
