#include <cctype>
#include <string>
#include <vector>

#include "ember/backend/functors/binary.h"
#include "ember/backend/functors/unary.h"

namespace ember {
namespace {

// "LogicalAnd" -> "logical_and": the tables' names as PyTorch spells its ops.
std::string snake(const char* pascal) {
  std::string out;
  for (const char* c = pascal; *c; ++c) {
    if (std::isupper(static_cast<unsigned char>(*c))) {
      if (c != pascal) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    } else {
      out += *c;
    }
  }
  return out;
}

#define EMBER_NAME_ENTRY(name, fn, kind) snake(#name),
#define EMBER_KIND_ENTRY(name, fn, kind) OpKind::kind,

const std::vector<std::string>& unary_names() {
  static const std::vector<std::string> names{EMBER_UNARY_OPS(EMBER_NAME_ENTRY)};
  return names;
}
const std::vector<std::string>& binary_names() {
  static const std::vector<std::string> names{EMBER_BINARY_OPS(EMBER_NAME_ENTRY)};
  return names;
}
const std::vector<std::string>& ternary_names() {
  static const std::vector<std::string> names{EMBER_TERNARY_OPS(EMBER_NAME_ENTRY)};
  return names;
}
constexpr OpKind kUnaryKinds[] = {EMBER_UNARY_OPS(EMBER_KIND_ENTRY)};
constexpr OpKind kBinaryKinds[] = {EMBER_BINARY_OPS(EMBER_KIND_ENTRY)};

}  // namespace

const char* unary_op_name(UnaryOp op) { return unary_names()[static_cast<size_t>(op)].c_str(); }
OpKind unary_op_kind(UnaryOp op) { return kUnaryKinds[static_cast<size_t>(op)]; }
const char* binary_op_name(BinaryOp op) { return binary_names()[static_cast<size_t>(op)].c_str(); }
OpKind binary_op_kind(BinaryOp op) { return kBinaryKinds[static_cast<size_t>(op)]; }
const char* ternary_op_name(TernaryOp op) {
  return ternary_names()[static_cast<size_t>(op)].c_str();
}

}  // namespace ember
