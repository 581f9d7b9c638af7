// The op list (ops/ops.def, Note [The op list]): every schema names its row, tags agree with the
// schemas, find_op finds each row, and the entry line records what the row says (the name, the
// autocast policy) for in-place methods and comparisons too, which once had no entry line.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ember/ember.h"
#include "ember/ops/op_registry.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;

// "Tensor.where.self(Tensor condition, ...)" -> ("where", "self").
std::pair<std::string, std::string> schema_name(std::string_view schema) {
  std::string_view head = schema.substr(0, schema.find('('));
  for (std::string_view prefix : {"Tensor.", "torch."})
    if (head.substr(0, prefix.size()) == prefix) head.remove_prefix(prefix.size());
  size_t dot = head.find('.');
  return {std::string(head.substr(0, dot)),
          dot == std::string_view::npos ? "" : std::string(head.substr(dot + 1))};
}

TEST(OpList, EverySchemaNamesItsRowAndEachOverloadOnce) {
  ASSERT_GT(all_ops().size(), 600u);
  for (const OpInfo& op : all_ops()) {
    std::set<std::string> overloads;
    for (std::string_view schema : op.schemas) {
      auto [name, overload] = schema_name(schema);
      EXPECT_EQ(name, op.name) << op.ns << "." << op.name << ": " << schema;
      EXPECT_TRUE(overloads.insert(overload).second)
          << op.ns << "." << op.name << " has two overloads named '" << overload << "'";
    }
  }
}

TEST(OpList, TagsAgreeWithNamesAndSchemas) {
  for (const OpInfo& op : all_ops()) {
    std::string where = std::string(op.ns) + "." + std::string(op.name);
    bool trailing = op.name.back() == '_' && op.name.substr(0, 2) != "__";
    EXPECT_EQ(trailing, (op.tags & kInplace) != 0) << where;
    bool python = op.tags & (kFunction | kMethod);
    bool has_out = false;
    for (std::string_view s : op.schemas) has_out |= s.find(" out=None") != std::string_view::npos;
    if (python) {
      EXPECT_FALSE(op.schemas.empty()) << where << " is bound in Python but has no schema";
      EXPECT_EQ(has_out, (op.tags & kOut) != 0) << where;
    }
    if (op.tags & kInternal) {
      EXPECT_TRUE(op.schemas.empty() && !python) << where << " is internal but has a schema";
    }
    EXPECT_EQ(&op, find_op(op.ns, op.name)) << where;
  }
  EXPECT_EQ(find_op("torch", "no_such_op"), nullptr);
}

TEST(OpList, PoliciesAreReadFromTheRowAtCompileTime) {
  static_assert(op_policy(OpId::torch_mm).listed);
  static_assert(op_policy(OpId::torch_mm).cuda == amp::detail::Cast::Lower);
  static_assert(!op_policy(OpId::torch_add).listed);
  static_assert(op_tags(OpId::torch_add_) & kInplace);
  EXPECT_STREQ(op_name(OpId::linalg_svd), "svd");
  EXPECT_EQ(find_op("torch", "softmax")->policy_name, "kFp32SetDtypeOnCuda");
}

TEST(OpList, InPlaceMethodsAndComparisonsAreEnteredAsOps) {
  Tensor x = uniform({3, 4}), y = uniform({3, 4});
  profiler::Profile prof;
  prof.start();
  x.add_(y);
  x.exp_();
  Tensor c = lt(x, y);
  x.copy_(y);
  prof.stop();
  std::multiset<std::string> names;
  for (const profiler::Event& e : prof.events())
    if (e.kind == profiler::EventKind::Op) names.insert(e.name);
  for (const char* name : {"add_", "exp_", "lt", "copy_"}) EXPECT_EQ(names.count(name), 1u) << name;
}

TEST(OpList, AutocastReadsThePolicyOfTheRow) {
  Tensor a = uniform({4, 6}), b = uniform({6, 3});
  amp::autocast guard(kCPU);
  EXPECT_EQ(mm(a, b).dtype(), kBFloat16);  // kLowerPrecisionFp in its row
  EXPECT_EQ(add(a, a).dtype(), kFloat32);  // kNotListed
}

}  // namespace
}  // namespace ember
