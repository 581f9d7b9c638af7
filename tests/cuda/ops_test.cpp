// Every op on CUDA against the same op on the CPU: random shapes, non-contiguous, empty and large
// inputs, every dtype the op takes, within the dtype's tolerance.
#include <limits>

#include "tests/cuda/cuda_test_util.h"
#include "tests/util/reference.h"

namespace ember {
namespace {

using namespace ember::testing;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

double tol(DType t) {
  return t == kFloat16 ? 2e-3 : (t == kBFloat16 ? 2e-2 : (t == kFloat32 ? 1e-5 : 1e-12));
}

const std::vector<Shape> kShapes = {{},     {1},       {7},       {3, 5},
                                    {0, 4}, {2, 3, 4}, {1000003}, {17, 1, 33}};

TEST(CudaOps, UnaryTable) {
  EMBER_REQUIRE_CUDA();
  std::vector<std::pair<const char*, Fn>> ops = {
      {"neg", [](auto& v) { return -v[0]; }},
      {"abs", [](auto& v) { return abs(v[0]); }},
      {"exp", [](auto& v) { return exp(v[0]); }},
      {"log", [](auto& v) { return log(abs(v[0]) + 0.1); }},
      {"sqrt", [](auto& v) { return sqrt(abs(v[0])); }},
      {"rsqrt", [](auto& v) { return rsqrt(abs(v[0]) + 0.1); }},
      {"tanh", [](auto& v) { return tanh(v[0]); }},
      {"sigmoid", [](auto& v) { return sigmoid(v[0]); }},
      {"relu", [](auto& v) { return relu(v[0]); }},
      {"sin", [](auto& v) { return sin(v[0]); }},
      {"square", [](auto& v) { return square(v[0]); }},
      {"floor", [](auto& v) { return floor(v[0]); }},
      {"clamp", [](auto& v) { return clamp(v[0], -0.5, 0.5); }},
      {"pow", [](auto& v) { return pow(abs(v[0]), 1.5); }},
      {"sign", [](auto& v) { return sign(v[0]); }},
      {"logical_not", [](auto& v) { return logical_not(v[0]); }},
  };
  for (auto& [name, f] : ops)
    for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16})
      for (const Shape& s : kShapes) {
        Tensor x = uniform(s, dt, -3, 3);
        EXPECT_TRUE(same_on_cuda(f, {x}, tol(dt) * 10)) << name << " " << dt << " " << s;
        if (x.dim() > 0 && x.numel() > 0)
          EXPECT_TRUE(same_on_cuda(f, {noncontiguous(x)}, tol(dt) * 10)) << name << " strided";
      }
}

TEST(CudaOps, BinaryTableWithBroadcastingAndPromotion) {
  EMBER_REQUIRE_CUDA();
  std::vector<std::pair<const char*, Fn>> ops = {
      {"add", [](auto& v) { return v[0] + v[1]; }},
      {"sub", [](auto& v) { return sub(v[0], v[1], 2); }},
      {"mul", [](auto& v) { return v[0] * v[1]; }},
      {"div", [](auto& v) { return v[0] / (abs(v[1]) + 1); }},
      {"maximum", [](auto& v) { return maximum(v[0], v[1]); }},
      {"lt", [](auto& v) { return v[0] < v[1]; }},
      {"eq", [](auto& v) { return eq(v[0], v[0]); }},
      {"scalar", [](auto& v) { return v[0] * 2.5 + 1; }},
      {"where", [](auto& v) { return where(v[0] > 0, v[0], v[1]); }},
      {"addcmul", [](auto& v) { return addcmul(v[0], v[1], v[1], 0.5); }},
  };
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{5}, {5}},    {{2, 3}, {3}},          {{4, 1, 3}, {5, 1}},
      {{0, 3}, {3}}, {{1000, 1000}, {1000}}, {{3, 4}, {}}};
  for (auto& [name, f] : ops)
    for (DType dt : {kFloat32, kFloat64, kFloat16, kInt64, kInt32})
      for (auto& [sa, sb] : shapes) {
        if (!is_floating_point(dt) &&
            (std::string(name) == "div" || std::string(name) == "addcmul"))
          continue;
        Tensor a = uniform(sa, dt, -3, 3), b = uniform(sb, dt, -3, 3);
        EXPECT_TRUE(same_on_cuda(f, {a, b}, tol(dt) * 10))
            << name << " " << dt << " " << sa << " " << sb;
      }
  // Mixed dtypes follow the same promotion on both devices.
  EXPECT_TRUE(same_on_cuda([](auto& v) { return v[0] + v[1]; },
                           {ones({3}, kInt32), ones({3}, kFloat16)}, 0));
}

TEST(CudaOps, Reductions) {
  EMBER_REQUIRE_CUDA();
  for (DType dt : {kFloat32, kFloat64, kFloat16, kInt64}) {
    for (Shape s : {Shape{10}, Shape{4, 33}, Shape{3, 5, 7}, Shape{1 << 22}, Shape{300, 2000}}) {
      Tensor x = uniform(s, dt, -2, 2);
      double t = dt == kFloat16 ? 2e-2 : (dt == kFloat32 ? 1e-4 : 1e-10);
      EXPECT_TRUE(
          same_on_cuda([](auto& v) { return v[0].sum(); }, {x}, t * std::sqrt(double(x.numel()))))
          << dt << s;
      EXPECT_TRUE(same_on_cuda([](auto& v) { return v[0].amax({0}); }, {x}, 0)) << dt << s;
      EXPECT_TRUE(same_on_cuda([](auto& v) { return v[0].argmax(); }, {x}, 0)) << dt << s;
      if (x.dim() > 1) {
        EXPECT_TRUE(same_on_cuda([](auto& v) { return v[0].sum({0}); }, {x}, t * 100))
            << "columns " << dt << s;
        EXPECT_TRUE(same_on_cuda([](auto& v) { return v[0].sum({-1}, true); }, {x}, t * 100))
            << "rows " << dt << s;
        EXPECT_TRUE(same_on_cuda([](auto& v) { return std::get<1>(v[0].min(1)); }, {x}, 0))
            << dt << s;
        EXPECT_TRUE(
            same_on_cuda([](auto& v) { return v[0].transpose(0, 1).sum({0}); }, {x}, t * 100))
            << "strided " << dt << s;
      }
      if (is_floating_point(dt) && dt != kFloat16) {
        EXPECT_TRUE(same_on_cuda([](auto& v) { return v[0].var(); }, {x}, 1e-4)) << dt << s;
      }
    }
  }
  EXPECT_TRUE(same_on_cuda([](auto& v) { return v[0].all(); }, {tensor({1, 0, 1})}, 0));
  EXPECT_TRUE(same_on_cuda([](auto& v) { return v[0].prod(); }, {tensor({1.5, 2.0, -3.0})}, 1e-6));
}

// Long rows are split over many blocks (a few rows) or not (many), and read in 16-byte vectors
// between a scalar head and tail: rows starting at every misalignment (views narrowed on the GPU),
// lengths that leave tails, ties (the first index wins) and NaN (which wins max and argmax).
// Small integer values keep every sum exact, so any element missed or read twice shows.
TEST(CudaOps, LongRowsAtAnyAlignment) {
  EMBER_REQUIRE_CUDA();
  for (Shape shape : {Shape{3, 300011}, Shape{70, 5011}}) {
    int64_t n = shape[1] - 11;
    for (DType dt : {kFloat32, kFloat16, kFloat64, kInt32, kUInt8}) {
      Tensor base = randint(dt == kUInt8 ? 0 : -3, 4, shape).to(dt);
      Tensor marks = zeros(shape, kBool);
      for (int64_t offset : {0, 1, 2, 3, 5}) {
        SCOPED_TRACE(::testing::Message() << shape << " " << dt << ", offset " << offset);
        auto row = [offset, n](const Tensor& t) { return t.narrow(1, offset, n); };
        EXPECT_TRUE(same_on_cuda([&](auto& v) { return row(v[0]).sum({1}); }, {base}, 0));
        EXPECT_TRUE(same_on_cuda([&](auto& v) { return row(v[0]).amax({1}); }, {base}, 0));
        EXPECT_TRUE(same_on_cuda([&](auto& v) { return row(v[0]).argmax(1); }, {base}, 0));
        EXPECT_TRUE(
            same_on_cuda([&](auto& v) { return std::get<1>(row(v[0]).min(1)); }, {base}, 0));
        EXPECT_TRUE(same_on_cuda([&](auto& v) { return row(v[0]).argmin(); }, {base}, 0));
        // One mark per row, at its first, its last or a middle element of the view.
        Tensor m = marks.clone();
        m.select(0, 0).narrow(0, offset, 1).fill_(true);
        m.select(0, 1).narrow(0, offset + n - 1, 1).fill_(true);
        m.select(0, 2).narrow(0, offset + n / 2, 1).fill_(true);
        EXPECT_TRUE(same_on_cuda([&](auto& v) { return any(row(v[0]), 1); }, {m}, 0));
        EXPECT_TRUE(same_on_cuda([&](auto& v) { return all(logical_not(row(v[0])), 1); }, {m}, 0));
      }
    }
  }
  Tensor y = uniform({1, 1 << 20});
  y.select(1, 700001).fill_(std::nan(""));
  y.select(1, 900001).fill_(std::nan(""));
  EXPECT_TRUE(same_on_cuda([](auto& v) { return v[0].argmax(); }, {y}, 0));
  EXPECT_TRUE(same_on_cuda([](auto& v) { return v[0].argmin(1); }, {y}, 0));
  EXPECT_TRUE(same_on_cuda([](auto& v) { return v[0].amax(); }, {y}, 0));
  Tensor tied = zeros({1 << 21});
  tied.narrow(0, 1000003, 5).fill_(1);
  tied.narrow(0, 1500007, 5).fill_(1);
  EXPECT_EQ(tied.to(gpu()).argmax().item<int64_t>(), 1000003);
}

TEST(CudaOps, MatmulInEveryPrecision) {
  EMBER_REQUIRE_CUDA();
  for (auto [sa, sb] : std::vector<std::pair<Shape, Shape>>{
           {{64, 33}, {33, 17}}, {{2, 3, 5}, {2, 5, 4}}, {{300, 512}, {512, 128}}, {{5}, {5, 3}}}) {
    for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
      Tensor a = uniform(sa, kFloat32).to(dt), b = uniform(sb, kFloat32).to(dt);
      double t = dt == kFloat64 ? 1e-10 : (dt == kFloat32 ? 1e-4 : 3e-2);
      EXPECT_TRUE(same_on_cuda([](auto& v) { return matmul(v[0], v[1]); }, {a, b}, t))
          << dt << sa << sb;
      if (a.dim() < 2) continue;  // a vector has no transposed layout
      EXPECT_TRUE(same_on_cuda(
          [](auto& v) {
            return matmul(v[0].transpose(-1, -2).contiguous().transpose(-1, -2), v[1]);
          },
          {a, b}, t))
          << "transposed " << dt;
    }
  }
  cuda::set_allow_tf32(true);
  Tensor a = uniform({256, 256}), b = uniform({256, 256});
  EXPECT_TRUE(same_on_cuda([](auto& v) { return mm(v[0], v[1]); }, {a, b}, 5e-3))
      << "TF32 keeps ~1e-3";
  cuda::set_allow_tf32(false);
  EXPECT_TRUE(same_on_cuda([](auto& v) { return mm(v[0], v[1]); },
                           {tensor({{1, 2}, {3, 4}}), tensor({{5, 6}, {7, 8}})}, 0));
}

// Integer products wrap around in the dtype's width as on the CPU, bit for bit: values whose
// products and sums overflow; shapes with several tiles of the kernel (32 x 32) each way and
// partial ones, batches (one broadcast), transposed and strided operands, addmm's alpha and beta.
TEST(CudaOps, IntegerMatmulWrapsAsOnTheCpu) {
  EMBER_REQUIRE_CUDA();
  int64_t two20 = int64_t{1} << 20, two12 = int64_t{1} << 12, two62 = int64_t{1} << 62;
  // Through float64 (as before), 2^33 + 3 * 2^20 saturated to 2^31 - 1 on the way back.
  Tensor a = tensor({{two20, two20}}, kInt32).to(gpu());
  Tensor b = tensor({{two12}, {two12 + 3}}, kInt32).to(gpu());
  EXPECT_EQ(mm(a, b).item<int64_t>(), 3145728);
  auto same = [](const Tensor& got, const Tensor& want) -> ::testing::AssertionResult {
    if (!got.is_cuda()) return ::testing::AssertionFailure() << "the result is on " << got.device();
    if (got.dtype() != want.dtype())
      return ::testing::AssertionFailure() << got.dtype() << " vs " << want.dtype();
    if (!got.cpu().equal(want))
      return ::testing::AssertionFailure() << "got\n" << got.cpu() << "\nwant\n" << want;
    return ::testing::AssertionSuccess();
  };
  for (auto [dt, lo, hi] : std::vector<std::tuple<DType, int64_t, int64_t>>{
           {kUInt8, 0, 256}, {kInt32, -(two20 << 11), two20 << 11}, {kInt64, -two62, two62}}) {
    for (auto [sa, sb] : std::vector<std::pair<Shape, Shape>>{{{1, 1}, {1, 1}},
                                                              {{64, 33}, {33, 17}},
                                                              {{70, 100}, {100, 45}},
                                                              {{300, 512}, {512, 128}},
                                                              {{3, 37, 70}, {3, 70, 45}},
                                                              {{2, 5, 40}, {40, 3}},
                                                              {{5}, {5, 3}}}) {
      Tensor x = randint(lo, hi, sa, dt), y = randint(lo, hi, sb, dt);
      Tensor want = matmul(x, y);
      Tensor xg = x.to(gpu()), yg = y.to(gpu());
      EXPECT_TRUE(same(matmul(xg, yg), want)) << dt << sa << sb;
      EXPECT_TRUE(same(matmul(xg.transpose(-1, -2).contiguous().transpose(-1, -2), yg), want))
          << "transposed " << dt << sa << sb;
      EXPECT_TRUE(same(matmul(noncontiguous(xg), noncontiguous(yg)), want))
          << "strided " << dt << sa << sb;
    }
    Tensor x = randint(lo, hi, {37, 70}, dt), y = randint(lo, hi, {70, 45}, dt);
    EXPECT_TRUE(same(mm(x.to(gpu()), y.to(gpu())), ref_mm_wrapping(x, y))) << dt;
    Tensor bias = randint(lo, hi, {45}, dt);
    EXPECT_TRUE(
        same(addmm(bias.to(gpu()), x.to(gpu()), y.to(gpu()), 3, 5), addmm(bias, x, y, 3, 5)))
        << "addmm " << dt;
  }
}

TEST(CudaOps, NeuralNetworkOps) {
  EMBER_REQUIRE_CUDA();
  for (int64_t d : {0, 1, 2}) {
    Tensor x = uniform({4, 50, 6}, kFloat32, -5, 5);
    EXPECT_TRUE(same_on_cuda([d](auto& v) { return softmax(v[0], d); }, {x}, 1e-6));
    EXPECT_TRUE(same_on_cuda([d](auto& v) { return log_softmax(v[0], d); }, {x}, 1e-5));
  }
  EXPECT_TRUE(same_on_cuda([](auto& v) { return softmax(v[0], 1); }, {uniform({8, 5000})}, 1e-6));
  Tensor img = uniform({3, 4, 11, 9}), w = uniform({6, 2, 3, 3}), bias = uniform({6});
  EXPECT_TRUE(same_on_cuda(
      [](auto& v) {
        return conv2d(v[0], v[1], v[2], {2, 1}, {1, 1}, {1, 2}, 2);
      },
      {img, w, bias}, 1e-4));
  EXPECT_TRUE(same_on_cuda([](auto& v) { return conv2d(v[0], v[1], v[2]); },
                           {uniform({64, 1, 28, 28}), uniform({6, 1, 5, 5}), uniform({6})}, 1e-4));
  EXPECT_TRUE(same_on_cuda(
      [](auto& v) {
        return max_pool2d(v[0], {3, 2}, Pair{2, 1}, {1, 0});
      },
      {img}, 0));
  EXPECT_TRUE(same_on_cuda(
      [](auto& v) {
        return avg_pool2d(v[0], {3, 3}, Pair{2, 2}, {1, 1}, true, false);
      },
      {img}, 1e-6));
  Tensor table = uniform({10, 4});
  EXPECT_TRUE(same_on_cuda([](auto& v) { return embedding(v[0], v[1]); },
                           {table, randint(0, 10, {3, 5})}, 0));
  EXPECT_TRUE(same_on_cuda([](auto& v) { return gather(v[0], 1, v[1]); },
                           {table, randint(0, 4, {10, 7})}, 0));
  EXPECT_TRUE(same_on_cuda([](auto& v) { return scatter_add(v[0], 0, v[1], v[2]); },
                           {zeros({5, 4}), randint(0, 5, {8, 4}), uniform({8, 4})}, 1e-6));
  EXPECT_TRUE(same_on_cuda(
      [](auto& v) {
        return cat({v[0], v[1]}, 1);
      },
      {uniform({3, 2}), uniform({3, 5})}, 0));
}

// Softmax over the last dim takes a warp per row up to 1024 elements (in registers, K of them a
// lane) and a block per longer row: every K's boundary, forward and backward, softmax and
// log_softmax, and rows of -inf (all: NaN, as PyTorch), NaN and +inf.
TEST(CudaOps, SoftmaxRowsOfEveryWidth) {
  EMBER_REQUIRE_CUDA();
  for (int64_t D : {1, 5, 32, 33, 64, 65, 128, 129, 256, 257, 512, 513, 1000, 1024, 1025, 3000}) {
    SCOPED_TRACE(::testing::Message() << "D " << D);
    Tensor x = uniform({37, D}, kFloat32, -4, 4);
    EXPECT_TRUE(same_with_gradients([](auto& v) { return softmax(v[0], 1); }, {x}, 1e-5));
    EXPECT_TRUE(same_with_gradients([](auto& v) { return log_softmax(v[0], -1); }, {x}, 1e-5));
    EXPECT_TRUE(same_on_cuda([](auto& v) { return softmax(v[0], 1); }, {x.to(kFloat64)}, 1e-12));
    EXPECT_TRUE(same_on_cuda([](auto& v) { return softmax(v[0], 1); }, {x.to(kFloat16)}, 2e-3));
    EXPECT_TRUE(
        same_with_gradients([](auto& v) { return log_softmax(v[0], 1); }, {x.to(kFloat64)}, 1e-12));
    Tensor odd = x.clone();
    double inf = std::numeric_limits<double>::infinity();
    odd.select(0, 0).fill_(-inf);
    odd.select(0, 1).narrow(0, 0, (D + 1) / 2).fill_(-inf);
    odd.select(0, 2).narrow(0, D - 1, 1).fill_(std::nan(""));
    odd.select(0, 3).narrow(0, D / 2, 1).fill_(inf);
    EXPECT_TRUE(same_on_cuda([](auto& v) { return softmax(v[0], 1); }, {odd}, 1e-5));
    EXPECT_TRUE(same_on_cuda([](auto& v) { return log_softmax(v[0], 1); }, {odd}, 1e-5));
  }
}

// max_pool2d's backward gathers per input element from the windows that can hold it: overlapping
// windows (an element the maximum of several), padding, dilation, ceil mode, ties, NaN; the same
// bits on every run.
TEST(CudaOps, MaxPoolBackwardGathersFromOverlappingWindows) {
  EMBER_REQUIRE_CUDA();
  struct Case {
    Pair kernel, stride, padding, dilation;
    bool ceil;
  };
  for (Case c :
       {Case{{3, 3}, {2, 2}, {1, 1}, {1, 1}, false}, Case{{3, 2}, {1, 1}, {1, 0}, {1, 1}, false},
        Case{{3, 3}, {2, 1}, {1, 1}, {2, 2}, true}, Case{{2, 2}, {2, 2}, {0, 0}, {1, 1}, true},
        Case{{4, 3}, {3, 2}, {2, 1}, {1, 2}, true}}) {
    SCOPED_TRACE(::testing::Message() << "kernel " << c.kernel[0] << "x" << c.kernel[1]
                                      << ", stride " << c.stride[0] << "x" << c.stride[1]);
    // Few distinct values: many ties, and elements that are the maximum of several windows.
    Tensor x = randint(0, 3, {2, 3, 13, 11}).to(kFloat32);
    x.select(1, 2).select(1, 5).narrow(1, 4, 1).fill_(std::nan(""));
    auto pool = [c](auto& v) {
      return max_pool2d(v[0], c.kernel, c.stride, c.padding, c.dilation, c.ceil);
    };
    EXPECT_TRUE(same_with_gradients(pool, {x}, 1e-6));
    EXPECT_TRUE(same_with_gradients(pool, {x.to(kFloat64)}, 1e-12));
    auto grad_on_gpu = [&] {
      Tensor xg = x.to(gpu()).requires_grad_();
      Tensor y = max_pool2d(xg, c.kernel, c.stride, c.padding, c.dilation, c.ceil);
      (y * cos(arange(y.numel()).to(kFloat32).reshape(y.sizes()).to(gpu()))).sum().backward();
      return xg.grad().cpu();
    };
    EXPECT_TRUE(equal(grad_on_gpu(), grad_on_gpu()));
  }
}

// The statistics split each channel over several blocks (backend/cuda/batch_norm.cu): shapes
// with planes wider and narrower than a block, one plane per channel, many small planes
// (BatchNorm1d), and a channel count past one block per channel's share.
TEST(CudaOps, BatchNormMatchesTheCpuOverEveryShapeOfSplit) {
  EMBER_REQUIRE_CUDA();
  for (Shape shape : {Shape{8, 3, 40, 40}, Shape{4, 6, 3, 100}, Shape{1, 2, 90, 90},
                      Shape{5000, 7}, Shape{3, 2000, 5}, Shape{2, 4, 7}}) {
    SCOPED_TRACE(::testing::Message() << "shape of " << shape.size() << " dims, "
                                      << shape[0] << " x " << shape[1]);
    for (DType dt : {kFloat32, kFloat64}) {
      double tol = dt == kFloat64 ? 1e-10 : 1e-4;
      int64_t C = shape[1];
      Tensor x = uniform(shape, dt, -2, 3), w = uniform({C}, dt), b = uniform({C}, dt);
      for (bool training : {true, false}) {
        Tensor mean_cpu = uniform({C}, dt), var_cpu = uniform({C}, dt, 0.5, 2);
        Tensor mean_gpu = mean_cpu.to(gpu()), var_gpu = var_cpu.to(gpu());
        Tensor* running[2][2] = {{&mean_cpu, &var_cpu}, {&mean_gpu, &var_gpu}};
        EXPECT_TRUE(same_with_gradients(
            [&](auto& v) {
              int i = v[0].device().is_cuda() ? 1 : 0;
              return batch_norm(v[0], *running[i][0], *running[i][1], v[1], v[2], training);
            },
            {x, w, b}, tol));
        EXPECT_TRUE(all_close(mean_gpu.cpu(), mean_cpu, tol, tol)) << "running mean";
        EXPECT_TRUE(all_close(var_gpu.cpu(), var_cpu, tol, tol)) << "running var";
      }
    }
  }
}

TEST(CudaOps, GradientsMatchTheCpu) {
  EMBER_REQUIRE_CUDA();
  auto grads = [](Device device) {
    manual_seed(5);
    auto model = nn::make<models::LeNet>();
    model->to(device);
    Tensor x = randn({16, 1, 28, 28}).to(device);
    Tensor y = randint(0, 10, {16}).to(device);
    nn::functional::cross_entropy(model->forward(x), y).backward();
    std::vector<Tensor> g;
    for (const Tensor& p : model->parameters()) g.push_back(p.grad().cpu());
    return g;
  };
  std::vector<Tensor> cpu = grads(Device("cpu")), gpu = grads(testing::gpu());
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i)
    EXPECT_TRUE(all_close(gpu[i], cpu[i], 1e-3, 1e-5)) << "parameter " << i;
}

TEST(CudaOps, RandomNumbersAreTheSameOnEveryDevice) {
  EMBER_REQUIRE_CUDA();
  manual_seed(42);
  Tensor a = randn({1000});
  manual_seed(42);
  Tensor b = randn({1000}, TensorOptions().with_device(testing::gpu()));
  EXPECT_TRUE(all_close(b.cpu(), a, 1e-6, 1e-6)) << "Philox gives the same stream on CPU and GPU";
}

TEST(CudaOps, OutOfRangeIndicesAreReportedWithoutKillingTheContext) {
  EMBER_REQUIRE_CUDA();
  Tensor table = ones({4, 2}, TensorOptions().with_device(testing::gpu()));
  Tensor idx = tensor({1, 9}).to(testing::gpu());
  Tensor out = embedding(table, idx);  // queued; the kernel records the bad index
  EXPECT_THROW_WITH(out.cpu(), "index 9 is out of bounds for dimension 0 with size 4");
  // The context is intact: later work runs.
  EXPECT_EQ((table * 2).sum().item<double>(), 16);
}

TEST(CudaOps, MixingDevicesIsAnErrorNamingBoth) {
  EMBER_REQUIRE_CUDA();
  EXPECT_THROW_WITH(ones({2}) + ones({2}).cuda(), "cpu:0 and cuda:0");
}

}  // namespace
}  // namespace ember
