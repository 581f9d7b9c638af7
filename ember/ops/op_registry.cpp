// The op list as a table (Note [The op list]).
#include "ember/ops/op_registry.h"

#include <string>
#include <unordered_map>
#include <utility>

namespace ember {

namespace {

std::vector<OpInfo> make_ops() {
  std::vector<OpInfo> ops;
#define EMBER_OP_ROW(ns, id, policy, tags, ...) \
  ops.push_back({OpId::ns##_##id,               \
                 #ns,                           \
                 #id,                           \
                 amp::detail::policy,           \
                 static_cast<uint32_t>(tags),   \
                 #policy,                       \
                 {__VA_ARGS__}});
#include "ember/ops/ops.def"
#undef EMBER_OP_ROW
  return ops;
}

}  // namespace

std::vector<std::string_view> op_tag_names(uint32_t tags) {
  static constexpr std::pair<OpTag, std::string_view> kNames[] = {
      {kPointwise, "pointwise"},
      {kReduction, "reduction"},
      {kView, "view"},
      {kInplace, "inplace"},
      {kOut, "out"},
      {kRandom, "random"},
      {kHostSync, "host_sync"},
      {kNondeterministic, "nondeterministic"},
      {kInternal, "internal"},
      {kFunction, "function"},
      {kMethod, "method"}};
  std::vector<std::string_view> names;
  for (auto [tag, name] : kNames)
    if (tags & tag) names.push_back(name);
  return names;
}

const std::vector<OpInfo>& all_ops() {
  static const std::vector<OpInfo> ops = make_ops();
  return ops;
}

const OpInfo& op_info(OpId id) { return all_ops()[static_cast<size_t>(id)]; }

const OpInfo* find_op(std::string_view ns, std::string_view name) {
  static const auto index = [] {
    std::unordered_map<std::string, const OpInfo*> m;
    for (const OpInfo& op : all_ops())
      m.emplace(std::string(op.ns) + "." + std::string(op.name), &op);
    return m;
  }();
  auto it = index.find(std::string(ns) + "." + std::string(name));
  return it == index.end() ? nullptr : it->second;
}

}  // namespace ember
