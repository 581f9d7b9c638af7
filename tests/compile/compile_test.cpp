// ember::compile: a traced call replayed as a graph (new inputs, eager ember's bits), elementwise
// chains fused, a new signature traced again, and the graph breaks (backward, values read on the
// host, fullgraph) run eagerly or refused.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/ops/tensor_index.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using Fn = CompiledFunction::Fn;

// A 15-op elementwise chain over two tensors, with a number and a one-element tensor.
std::vector<Tensor> chain(const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  Tensor t = (x * 2.0 + 1.0).exp();
  t = (t - y) / (x.abs() + 1.0);
  t = tanh(t) * sigmoid(y) + sqrt(abs(x));
  return {t * in[2] + sin(x) * cos(y)};  // sin and cos: glibc's vector variants, fused or not
}

std::vector<Tensor> inputs(int64_t n, uint64_t seed) {
  manual_seed(seed);
  return {randn({n}), randn({n}), full({}, 0.5)};
}

TEST(Compile, AChainFusesAndItsReplayGivesEagerBitsOnNewInputs) {
  CompiledFunction f = compile(chain);
  std::vector<Tensor> first = inputs(100000, 1);
  EXPECT_TRUE(equal(f(first)[0], chain(first)[0]));  // the trace: eager itself
  const compiler::Graph* g = f.graph_for(first);
  ASSERT_NE(g, nullptr);
  EXPECT_GE(g->fused_ops(), 10) << g->describe();
  EXPECT_NE(g->describe().find("fused["), std::string::npos) << g->describe();
  for (uint64_t seed : {2, 3}) {
    std::vector<Tensor> in = inputs(100000, seed);
    EXPECT_TRUE(equal(f(in)[0], chain(in)[0])) << "seed " << seed;
  }
  CompiledFunction::Stats s = f.stats();
  EXPECT_EQ(s.traces, 1);
  EXPECT_EQ(s.graph_runs, 2);
  EXPECT_TRUE(s.breaks.empty());
}

TEST(Compile, FusionOffReplaysTheSameOps) {
  CompiledFunction f = compile(chain, {.fuse = false});
  std::vector<Tensor> first = inputs(1000, 1), second = inputs(1000, 2);
  f(first);
  EXPECT_EQ(f.graph_for(first)->fused_ops(), 0);
  EXPECT_TRUE(equal(f(second)[0], chain(second)[0]));
}

TEST(Compile, ANewShapeOrDtypeIsTracedAgain) {
  CompiledFunction f = compile(chain);
  f(inputs(64, 1));
  f(inputs(64, 2));
  std::vector<Tensor> other = inputs(65, 3);
  EXPECT_TRUE(equal(f(other)[0], chain(other)[0]));
  std::vector<Tensor> dbl = inputs(64, 4);
  for (Tensor& t : dbl) t = t.to(kFloat64);
  EXPECT_TRUE(equal(f(dbl)[0], chain(dbl)[0]));
  EXPECT_EQ(f.stats().traces, 3);
  EXPECT_EQ(f.stats().graph_runs, 1);
}

TEST(Compile, ATensorGivenTwiceIsASignatureOfItsOwn) {
  CompiledFunction f = compile([](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    return {in[0] * 2.0 - in[1]};
  });
  Tensor a = ones({3}), b = zeros({3});
  f({a, a});
  EXPECT_TRUE(equal(f({a, b})[0], full({3}, 2.0)));
  EXPECT_EQ(f.stats().traces, 2);
}

TEST(Compile, TheGraphSeesParametersUpdatedInPlaceAndWritesIntoItsInputs) {
  Tensor w = ones({4});
  CompiledFunction f = compile([&w](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    Tensor x = in[0];
    x.add_(1.0);  // in place on the argument
    return {x * w};
  });
  f({zeros({4})});
  w.mul_(3.0);
  Tensor x = full({4}, 2.0);
  Tensor out = f({x})[0];
  EXPECT_TRUE(equal(x, full({4}, 3.0)));
  EXPECT_TRUE(equal(out, full({4}, 9.0)));
  EXPECT_EQ(f.stats().graph_runs, 1);
}

TEST(Compile, GradientsFlowThroughAReplayAndNeedingThemStopsFusion) {
  Tensor w = randn({8}).requires_grad_();
  Fn fn = [&w](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    return {sum(sin(w * in[0]) * 2.0 + 1.0)};
  };
  CompiledFunction f = compile(fn);
  Tensor x1 = randn({8}), x2 = randn({8});
  f({x1});
  EXPECT_EQ(f.graph_for({x1})->fused_ops(), 0);
  f({x2})[0].backward();
  Tensor replayed = w.grad().clone();
  w.set_grad(Tensor());
  fn({x2})[0].backward();
  EXPECT_TRUE(equal(replayed, w.grad()));
}

TEST(Compile, RandomOpsDrawAnewOnEachReplay) {
  CompiledFunction f = compile([](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    return {nn::functional::dropout(in[0], 0.5, true)};
  });
  Tensor x = ones({1000});
  f({x});
  Tensor a = f({x})[0], b = f({x})[0];
  EXPECT_EQ(f.stats().graph_runs, 2);
  EXPECT_FALSE(equal(a, b));
}

TEST(Compile, BackwardInsideIsAGraphBreakAndRunsEagerly) {
  Tensor w = randn({4}).requires_grad_();
  CompiledFunction f = compile([&w](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    Tensor loss = sum(w * in[0]);
    loss.backward();
    return {loss.detach()};
  });
  Tensor x = ones({4});
  f({x});
  f({x});
  EXPECT_TRUE(equal(w.grad(), full({4}, 2.0)));  // both calls ran their backward
  CompiledFunction::Stats s = f.stats();
  ASSERT_EQ(s.breaks.size(), 1u);
  EXPECT_NE(s.breaks[0].find("backward"), std::string::npos) << s.breaks[0];
  EXPECT_EQ(s.eager_runs, 1);
}

TEST(Compile, AResultShapedByValuesIsABreakAndFullgraphRefusesBreaks) {
  Fn fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> { return {nonzero(in[0])}; };
  CompiledFunction f = compile(fn);
  f({tensor({0.0, 1.0, 2.0})});
  Tensor other = tensor({1.0, 1.0, 0.0});
  EXPECT_TRUE(equal(f({other})[0], nonzero(other)));
  EXPECT_NE(f.stats().breaks.at(0).find("nonzero"), std::string::npos);
  CompiledFunction strict = compile(fn, {.fullgraph = true});
  EXPECT_THROW_WITH(strict({other}), "fullgraph=True");
}

}  // namespace
}  // namespace ember
