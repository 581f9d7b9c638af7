// Capture at the op entry (ops/capture.h): the ops a user calls, in call order, with the tensors
// they took and gave; the ops inside them one level deeper; in-place ops and backward passes too;
// nothing outside the guard.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/ops/capture.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;

bool same(const Tensor& a, const Tensor& b) { return a.unsafe_impl() == b.unsafe_impl(); }

std::vector<CapturedOp> at_depth(const OpCapture& c, int depth) {
  std::vector<CapturedOp> out;
  for (const CapturedOp& op : c.ops())
    if (op.depth == depth) out.push_back(op);
  return out;
}

TEST(OpCapture, RecordsUserOpsInCallOrderWithTheirTensors) {
  Tensor x = uniform({3, 4});
  OpCapture capture;
  exp(x);  // before the guard: not recorded
  Tensor y, z;
  {
    OpCaptureGuard guard(capture);
    y = exp(x);
    z = add(y, 1.0);
    z.relu_();
  }
  relu(x);  // after: not recorded
  std::vector<CapturedOp> ops = at_depth(capture, 0);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].id, OpId::torch_exp);
  EXPECT_EQ(ops[1].id, OpId::torch_add);
  EXPECT_EQ(ops[2].id, OpId::torch_relu_);
  EXPECT_TRUE(same(ops[0].inputs[0], x));
  EXPECT_TRUE(same(ops[0].outputs[0], y));
  EXPECT_TRUE(same(ops[1].inputs[0], y));
  EXPECT_TRUE(same(ops[2].inputs[0], z) && same(ops[2].outputs[0], z));
  EXPECT_TRUE(op_tags(ops[2].id) & kInplace);
}

TEST(OpCapture, OpsInsideAnOpAreOneLevelDeeperAndComeAfterIt) {
  Tensor x = uniform({2, 3}), w = uniform({4, 3}), b = uniform({4});
  OpCapture capture;
  {
    OpCaptureGuard guard(capture);
    nn::functional::linear(x, w, b);
  }
  std::vector<CapturedOp> ops = capture.ops();
  ASSERT_GE(ops.size(), 2u);
  EXPECT_EQ(ops[0].id, OpId::torch_linear);
  EXPECT_EQ(ops[0].depth, 0);
  EXPECT_EQ(ops[0].inputs.size(), 3u);
  for (size_t i = 1; i < ops.size(); ++i) EXPECT_GE(ops[i].depth, 1) << op_name(ops[i].id);
}

TEST(OpCapture, ABackwardPassIsCapturedAndAFailedOpLeavesTheDepthAsItWas) {
  Tensor x = uniform({5}).requires_grad_(true);
  OpCapture capture;
  {
    OpCaptureGuard guard(capture);
    Tensor loss = mul(x, x).sum();
    size_t forward = at_depth(capture, 0).size();
    loss.backward();
    EXPECT_GT(at_depth(capture, 0).size(), forward);  // the backward formulas' ops
    EXPECT_THROW(mm(x, x), Error);                    // 1-d operands
    capture.clear();
    exp(x.detach());
  }
  std::vector<CapturedOp> ops = capture.ops();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].depth, 0);
}

}  // namespace
}  // namespace ember
