// The op list (ops/ops.def) as data: each op's id, name, autocast policy, tags and PyTorch
// schemas, for the op entry (ops/op_entry.h), the Python bindings, capture and the docs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ember/ops/autocast.h"

namespace ember {

// Note [The op list]
// ops/ops.def has one row per op, and nothing else declares one. From a row come:
// - OpId::<namespace>_<id>, and the name `op_id::<id>` in the op's C++ namespace (ember::op_id,
//   ember::linalg::op_id, ...), which its EMBER_OP line names: an entry line for an op that has no
//   row does not compile. An op_id namespace below ember's also sees ember's own ids
//   (ember::linalg::geqrf is torch.geqrf), and ember's sees nn.functional's (ember::softsign is
//   F.softsign: torch has no softsign);
// - the autocast policy and the tags the entry reads, as constants (op_policy, op_tags), so that
//   the entry line costs what it did when each op spelled its policy;
// - the schemas, which the Python op tables (python/src/op_table.h) bind by key: a binding names
//   "add.Tensor", not a signature; a row whose overloads are not all bound, or a key bound twice,
//   is an error when ember is imported;
// - docs/ops.md, which scripts/op-docs writes from all_ops().
// The rows were first written from the Python bindings' signatures, with PyTorch 2.6's tags
// (pointwise, nondeterministic_seeded, dynamic_output_shape, view aliasing) for the same names.

/// What an op is, for whoever wants to know without running it. A bit set.
enum OpTag : uint32_t {
  kPointwise = 1u << 0,         // elementwise: each output element from the same input elements
  kReduction = 1u << 1,         // reduces over dimensions
  kView = 1u << 2,              // returns a view of an input (no copy)
  kInplace = 1u << 3,           // writes into its first argument (name_)
  kOut = 1u << 4,               // has an out= overload
  kRandom = 1u << 5,            // draws from a generator
  kHostSync = 1u << 6,          // waits for the device: its result's shape or a check reads data
  kNondeterministic = 1u << 7,  // may differ bitwise between runs on a GPU (atomics)
  kInternal = 1u << 8,          // ember's own building block, not a PyTorch op
  kFunction = 1u << 9,          // Python: ember.<name> (or ember.linalg.<name>, ...)
  kMethod = 1u << 10,           // Python: Tensor.<name>
};

/// Every op, as OpId::<namespace>_<id>.
enum class OpId : uint16_t {
#define EMBER_OP_ROW(ns, id, ...) ns##_##id,
#include "ember/ops/ops.def"
#undef EMBER_OP_ROW
};

namespace detail {
inline constexpr amp::detail::Policy kOpPolicies[] = {
#define EMBER_OP_ROW(ns, id, policy, ...) amp::detail::policy,
#include "ember/ops/ops.def"
#undef EMBER_OP_ROW
};
inline constexpr uint32_t kOpTags[] = {
#define EMBER_OP_ROW(ns, id, policy, tags, ...) static_cast<uint32_t>(tags),
#include "ember/ops/ops.def"
#undef EMBER_OP_ROW
};
inline constexpr const char* kOpNames[] = {
#define EMBER_OP_ROW(ns, id, ...) #id,
#include "ember/ops/ops.def"
#undef EMBER_OP_ROW
};
}  // namespace detail

inline constexpr size_t kOpCount = std::size(detail::kOpNames);

/// The op's autocast policy (kNotListed when it is on none of autocast's lists).
constexpr const amp::detail::Policy& op_policy(OpId id) {
  return detail::kOpPolicies[static_cast<size_t>(id)];
}
/// The op's OpTag bits.
constexpr uint32_t op_tags(OpId id) { return detail::kOpTags[static_cast<size_t>(id)]; }
/// The op's name without its namespace ("svd" for linalg.svd), as the profiler records it.
constexpr const char* op_name(OpId id) { return detail::kOpNames[static_cast<size_t>(id)]; }

/// One row of the op list.
struct OpInfo {
  OpId id;
  std::string_view ns;    // "torch", "linalg", "fft", "special", "nn_functional"
  std::string_view name;  // the id
  amp::detail::Policy policy;
  uint32_t tags;
  std::string_view policy_name;           // "kLowerPrecisionFp", for the docs
  std::vector<std::string_view> schemas;  // Python overloads, or PyTorch's schema
};

/// The names of the OpTag bits set in `tags` ("pointwise", "inplace", ...), for the docs.
std::vector<std::string_view> op_tag_names(uint32_t tags);

/// Every row, in ops.def's order.
const std::vector<OpInfo>& all_ops();
/// The row of an op.
const OpInfo& op_info(OpId id);
/// The row of `name` in namespace `ns`, or nullptr.
const OpInfo* find_op(std::string_view ns, std::string_view name);

}  // namespace ember

// The names EMBER_OP lines use, in each op's C++ namespace (Note [The op list]): each row reopens
// its namespace's op_id for its one name. Below ember, an op_id namespace also sees ember's ids,
// and ember's sees nn.functional's.
namespace ember::nn::functional::op_id {}
namespace ember::op_id {
using namespace ::ember::nn::functional::op_id;
}
namespace ember::linalg::op_id {
using namespace ::ember::op_id;
}
namespace ember::fft::op_id {
using namespace ::ember::op_id;
}
namespace ember::special::op_id {
using namespace ::ember::op_id;
}
namespace ember::nn::functional::op_id {
using namespace ::ember::op_id;
}
#define EMBER_OP_ID_(cpp_ns, ns, id)                            \
  namespace cpp_ns::op_id {                                     \
  inline constexpr ::ember::OpId id = ::ember::OpId::ns##_##id; \
  }
#define EMBER_OP_ID_torch(id) EMBER_OP_ID_(ember, torch, id)
#define EMBER_OP_ID_linalg(id) EMBER_OP_ID_(ember::linalg, linalg, id)
#define EMBER_OP_ID_fft(id) EMBER_OP_ID_(ember::fft, fft, id)
#define EMBER_OP_ID_special(id) EMBER_OP_ID_(ember::special, special, id)
#define EMBER_OP_ID_nn_functional(id) EMBER_OP_ID_(ember::nn::functional, nn_functional, id)
#define EMBER_OP_ROW(ns, id, ...) EMBER_OP_ID_##ns(id)
#include "ember/ops/ops.def"
#undef EMBER_OP_ROW
#undef EMBER_OP_ID_torch
#undef EMBER_OP_ID_linalg
#undef EMBER_OP_ID_fft
#undef EMBER_OP_ID_special
#undef EMBER_OP_ID_nn_functional
#undef EMBER_OP_ID_
