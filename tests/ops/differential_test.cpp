// ember against PyTorch 1.13 (/usr/bin/python3 with python3-torch) on random inputs: the same
// op, shapes, dtypes and arguments; results must agree in shape, dtype and values.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "tests/util/npy.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;
using json = nlohmann::json;

struct Case {
  std::string op;
  std::vector<Tensor> inputs;
  json args;
  std::function<Tensor(const std::vector<Tensor>&)> ember;
  double tol;
};

class Cases {
 public:
  explicit Cases(uint64_t seed) : rng_(seed) {}

  Shape shape(int max_dim = 4, int64_t max_size = 6) {
    Shape s;
    int nd = std::uniform_int_distribution<int>(0, max_dim)(rng_);
    for (int i = 0; i < nd; ++i)
      s.push_back(std::uniform_int_distribution<int64_t>(1, max_size)(rng_));
    return s;
  }
  // A shape that broadcasts with s: some dims dropped or set to 1.
  Shape broadcastable(const Shape& s) {
    Shape out;
    size_t drop = std::uniform_int_distribution<size_t>(0, s.size())(rng_);
    for (size_t i = drop; i < s.size(); ++i) out.push_back(coin() ? s[i] : 1);
    return out;
  }
  bool coin() { return std::uniform_int_distribution<int>(0, 1)(rng_) == 1; }
  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  DType dtype() {
    const DType all[] = {kFloat32, kFloat64, kInt32, kInt64, kFloat16};
    return all[pick(0, 4)];
  }
  Tensor values(const Shape& s, DType t, double lo = -3, double hi = 3) {
    Tensor v = uniform(s, kFloat64, lo, hi);
    if (!is_floating_point(t)) v = round(v * 3);
    return v.to(t);
  }

 private:
  std::mt19937_64 rng_;
};

std::vector<Case> make_cases() {
  Cases c(2024);
  std::vector<Case> cases;
  auto tol = [](DType t) { return t == kFloat16 ? 2e-3 : (t == kFloat32 ? 1e-5 : 1e-10); };
  // Binary ops with broadcasting and mixed dtypes (PyTorch's promotion decides the result type).
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&, const Tensor&)>>>
      binary = {
          {"add", [](auto& a, auto& b) { return a + b; }},
          {"sub", [](auto& a, auto& b) { return a - b; }},
          {"mul", [](auto& a, auto& b) { return a * b; }},
          {"div", [](auto& a, auto& b) { return a / b; }},
          {"maximum", [](auto& a, auto& b) { return maximum(a, b); }},
          {"minimum", [](auto& a, auto& b) { return minimum(a, b); }},
          {"eq", [](auto& a, auto& b) { return eq(a, b); }},
          {"lt", [](auto& a, auto& b) { return lt(a, b); }},
          {"ge", [](auto& a, auto& b) { return ge(a, b); }},
      };
  for (int rep = 0; rep < 6; ++rep) {
    for (auto& [name, f] : binary) {
      Shape sa = c.shape(), sb = c.broadcastable(sa);
      if (c.coin()) std::swap(sa, sb);
      DType ta = c.dtype(), tb = c.coin() ? ta : c.dtype();
      if ((ta == kFloat16) != (tb == kFloat16))
        tb = ta;  // keep mixed-precision cases out of float16
      Tensor a = c.values(sa, ta), b = c.values(sb, tb);
      if (name == "div") b = where(eq(b, 0), ones_like(b), b);
      cases.push_back({name,
                       {a, b},
                       {},
                       [f = f](auto& v) { return f(v[0], v[1]); },
                       tol(promote_types(ta, tb))});
    }
  }
  // Scalars and zero-dim tensors in promotion.
  for (DType t : {kInt32, kInt64, kFloat16, kFloat32, kUInt8}) {
    Tensor a = c.values({3, 4}, t, 0, 5);
    cases.push_back(
        {"add_scalar", {a}, {{"scalar", 2.5}}, [](auto& v) { return v[0] + 2.5; }, 2e-3});
    cases.push_back({"mul_scalar", {a}, {{"scalar", 3}}, [](auto& v) { return v[0] * 3; }, 2e-3});
    Tensor z = scalar_tensor(1.5, kFloat64);
    cases.push_back({"add", {a, z}, {}, [](auto& v) { return v[0] + v[1]; }, 2e-3});
  }
  // Unary.
  const std::vector<std::tuple<std::string, std::function<Tensor(const Tensor&)>, double, double>>
      unary = {
          {"neg", [](auto& x) { return -x; }, -3, 3},
          {"abs", [](auto& x) { return abs(x); }, -3, 3},
          {"exp", [](auto& x) { return exp(x); }, -20, 20},
          {"log", [](auto& x) { return log(x); }, 0.01, 10},
          {"sqrt", [](auto& x) { return sqrt(x); }, 0, 10},
          {"tanh", [](auto& x) { return tanh(x); }, -4, 4},
          {"sigmoid", [](auto& x) { return sigmoid(x); }, -10, 10},
          {"relu", [](auto& x) { return relu(x); }, -3, 3},
          {"sin", [](auto& x) { return sin(x); }, -5, 5},
          {"cos", [](auto& x) { return cos(x); }, -5, 5},
          {"floor", [](auto& x) { return floor(x); }, -5, 5},
          {"round", [](auto& x) { return round(x); }, -5, 5},
          {"rsqrt", [](auto& x) { return rsqrt(x); }, 0.1, 10},
          {"square", [](auto& x) { return square(x); }, -3, 3},
          {"log1p", [](auto& x) { return log1p(x); }, -0.5, 5},
      };
  for (auto& [name, f, lo, hi] : unary) {
    for (DType t : {kFloat32, kFloat64, kInt64}) {
      if (t == kInt64 && (name == "log" || name == "sqrt" || name == "rsqrt" || name == "log1p"))
        continue;
      Tensor x = c.values(c.shape(3, 7), t, lo, hi);
      if (x.numel() == 0) continue;
      cases.push_back(
          {name, {x}, {}, [f = f](auto& v) { return f(v[0]); }, t == kFloat64 ? 1e-10 : 3e-6});
    }
  }
  cases.push_back({"pow",
                   {c.values({4, 3}, kFloat64, 0.1, 3), c.values({3}, kFloat64, -2, 2)},
                   {},
                   [](auto& v) { return pow(v[0], v[1]); },
                   1e-10});
  cases.push_back({"pow",
                   {c.values({5}, kInt64, 0, 4), c.values({5}, kInt64, 0, 3).abs()},
                   {},
                   [](auto& v) { return pow(v[0], v[1]); },
                   0});
  cases.push_back({"clamp",
                   {c.values({10}, kFloat32)},
                   {{"lo", -1.0}, {"hi", 0.5}},
                   [](auto& v) { return clamp(v[0], -1.0, 0.5); },
                   0});
  cases.push_back(
      {"where",
       {c.values({3, 1}, kFloat32).gt(0), c.values({3, 4}, kFloat32), c.values({4}, kFloat64)},
       {},
       [](auto& v) { return where(v[0], v[1], v[2]); },
       1e-7});
  // Reductions.
  for (int rep = 0; rep < 8; ++rep) {
    Tensor x = c.values({c.pick(1, 5), c.pick(1, 6), c.pick(1, 4)}, c.coin() ? kFloat64 : kFloat32);
    double t = x.dtype() == kFloat32 ? 2e-5 : 1e-10;
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < 3; ++d)
      if (c.coin()) dims.push_back(d);
    if (dims.empty()) dims.push_back(c.pick(0, 2));
    bool keep = c.coin();
    Shape sd(dims.begin(), dims.end());
    json a = {{"dims", dims}, {"keepdim", keep}};
    cases.push_back({"sum", {x}, a, [sd, keep](auto& v) { return v[0].sum(sd, keep); }, t});
    cases.push_back({"mean", {x}, a, [sd, keep](auto& v) { return v[0].mean(sd, keep); }, t});
    cases.push_back({"amax", {x}, a, [sd, keep](auto& v) { return v[0].amax(sd, keep); }, 0});
    cases.push_back({"amin", {x}, a, [sd, keep](auto& v) { return v[0].amin(sd, keep); }, 0});
    cases.push_back(
        {"logsumexp", {x}, a, [sd, keep](auto& v) { return v[0].logsumexp(sd, keep); }, t});
    bool unbiased = c.coin();
    json av = {{"dims", dims}, {"keepdim", keep}, {"unbiased", unbiased}};
    cases.push_back({"var",
                     {x},
                     av,
                     [sd, keep, unbiased](auto& v) { return v[0].var(sd, unbiased, keep); },
                     t * 10});
    cases.push_back({"std",
                     {x},
                     av,
                     [sd, keep, unbiased](auto& v) { return v[0].std(sd, unbiased, keep); },
                     t * 10});
    int64_t d = c.pick(0, 2);
    cases.push_back({"argmax",
                     {x},
                     {{"dim", d}, {"keepdim", keep}},
                     [d, keep](auto& v) { return v[0].argmax(d, keep); },
                     0});
    cases.push_back({"prod",
                     {x},
                     {{"dim", d}, {"keepdim", keep}},
                     [d, keep](auto& v) { return v[0].prod(d, keep); },
                     t * 10});
    cases.push_back({"sum",
                     {c.values({4, 5}, kInt32)},
                     {{"dims", std::vector<int64_t>{1}}, {"keepdim", false}},
                     [](auto& v) { return v[0].sum({1}); },
                     0});
  }
  // Matmul in every arrangement torch.matmul supports.
  const std::vector<std::pair<Shape, Shape>> mm_shapes = {{{5}, {5}},
                                                          {{3, 5}, {5}},
                                                          {{5}, {5, 4}},
                                                          {{3, 5}, {5, 4}},
                                                          {{2, 3, 5}, {5, 4}},
                                                          {{2, 3, 5}, {2, 5, 4}},
                                                          {{2, 1, 3, 5}, {4, 5, 2}},
                                                          {{5}, {2, 5, 3}},
                                                          {{2, 3, 5}, {5}}};
  for (auto& [sa, sb] : mm_shapes)
    for (DType t : {kFloat32, kFloat64})
      cases.push_back({"matmul",
                       {c.values(sa, t), c.values(sb, t)},
                       {},
                       [](auto& v) { return matmul(v[0], v[1]); },
                       t == kFloat32 ? 1e-5 : 1e-10});
  // Softmax family on every dim.
  for (int64_t d = 0; d < 3; ++d) {
    Tensor x = c.values({3, 4, 5}, kFloat32, -10, 10);
    cases.push_back(
        {"softmax", {x}, {{"dim", d}}, [d](auto& v) { return softmax(v[0], d); }, 2e-6});
    cases.push_back(
        {"log_softmax", {x}, {{"dim", d}}, [d](auto& v) { return log_softmax(v[0], d); }, 2e-6});
  }
  // Convolutions and pooling with varied geometry.
  for (int rep = 0; rep < 6; ++rep) {
    int64_t groups = c.pick(1, 2), cin = groups * c.pick(1, 3), cout = groups * c.pick(1, 3);
    int64_t k = c.pick(1, 3), s = c.pick(1, 2), p = c.pick(0, 1), dil = c.pick(1, 2);
    int64_t h = c.pick(5, 9), w = c.pick(5, 9);
    Tensor x = c.values({2, cin, h, w}, kFloat32),
           wt = c.values({cout, cin / groups, k, k}, kFloat32);
    Tensor b = c.values({cout}, kFloat32);
    json a = {
        {"stride", {s, s}}, {"padding", {p, p}}, {"dilation", {dil, dil}}, {"groups", groups}};
    cases.push_back({"conv2d",
                     {x, wt, b},
                     a,
                     [=](auto& v) {
                       return conv2d(v[0], v[1], v[2], {s, s}, {p, p}, {dil, dil}, groups);
                     },
                     1e-4});
    int64_t pk = c.pick(2, 3), ps = c.pick(1, 2), pp = c.pick(0, 1);
    bool ceil = c.coin(), inc = c.coin();
    json pa = {{"kernel", {pk, pk}}, {"stride", {ps, ps}}, {"padding", {pp, pp}},
               {"dilation", {1, 1}}, {"ceil", ceil},       {"include_pad", inc}};
    cases.push_back({"max_pool2d",
                     {x},
                     pa,
                     [=](auto& v) {
                       return max_pool2d(v[0], {pk, pk}, Pair{ps, ps}, {pp, pp}, {1, 1}, ceil);
                     },
                     0});
    cases.push_back({"avg_pool2d",
                     {x},
                     pa,
                     [=](auto& v) {
                       return avg_pool2d(v[0], {pk, pk}, Pair{ps, ps}, {pp, pp}, ceil, inc);
                     },
                     1e-6});
  }
  // Indexing, joining and layout.
  Tensor g = c.values({3, 5}, kFloat32);
  Tensor gi = randint(0, 5, {3, 4});
  cases.push_back(
      {"gather", {g, gi}, {{"dim", 1}}, [](auto& v) { return gather(v[0], 1, v[1]); }, 0});
  Tensor si = randint(0, 3, {7});
  cases.push_back({"index_select",
                   {g, si},
                   {{"dim", 0}},
                   [](auto& v) { return index_select(v[0], 0, v[1]); },
                   0});
  cases.push_back({"cat",
                   {g, c.values({2, 5}, kFloat32), c.values({1, 5}, kFloat64)},
                   {{"dim", 0}},
                   [](auto& v) { return cat(v, 0); },
                   1e-7});
  cases.push_back({"permute_contiguous",
                   {c.values({2, 3, 4}, kInt64)},
                   {{"perm", {2, 0, 1}}},
                   [](auto& v) {
                     return v[0].permute({2, 0, 1}).contiguous();
                   },
                   0});
  return cases;
}

TEST(Differential, AgreesWithPyTorch) {
  std::string py = torch_python();
  if (py.empty()) GTEST_SKIP() << "needs /usr/bin/python3 with torch (python3-torch)";
  manual_seed(11);
  std::vector<Case> cases = make_cases();
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("ember_differential_" + std::to_string(getpid()));
  fs::create_directories(dir);
  {
    std::ofstream manifest(dir / "cases.jsonl");
    for (size_t i = 0; i < cases.size(); ++i) {
      json entry = {
          {"id", i}, {"op", cases[i].op}, {"args", cases[i].args}, {"inputs", json::array()}};
      for (size_t k = 0; k < cases[i].inputs.size(); ++k) {
        std::string name = "in_" + std::to_string(i) + "_" + std::to_string(k) + ".npy";
        write_npy((dir / name).string(), cases[i].inputs[k]);
        entry["inputs"].push_back(name);
      }
      manifest << entry.dump() << "\n";
    }
  }
  std::string cmd = py + " " + EMBER_SOURCE_DIR + "/tests/oracle/torch_oracle.py " + dir.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "the oracle failed: " << cmd;
  int compared = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    fs::path out = dir / ("out_" + std::to_string(i) + ".npy");
    std::string what = c.op + " #" + std::to_string(i) + " on " + c.inputs[0].toString();
    if (!fs::exists(out)) {
      std::ifstream err(dir / ("err_" + std::to_string(i) + ".txt"));
      std::string msg((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
      EXPECT_THROW(c.ember(c.inputs), Error)
          << what << ": PyTorch refused (" << msg << "), ember did not";
      continue;
    }
    Tensor expected = read_npy(out.string());
    Tensor got;
    try {
      got = c.ember(c.inputs);
    } catch (const Error& e) {
      ADD_FAILURE() << what << ": ember threw " << e.what();
      continue;
    }
    EXPECT_EQ(got.dtype(), expected.dtype()) << what;
    EXPECT_TRUE(all_close(got.to(kFloat64), expected.to(kFloat64), c.tol, c.tol)) << what;
    ++compared;
  }
  EXPECT_GT(compared, 200);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ember
