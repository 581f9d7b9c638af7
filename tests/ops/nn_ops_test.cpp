// softmax, conv2d, pooling (max, average, adaptive average) and indexing against plain loops.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/backend/cpu/bf16_kernels.h"
#include "ember/backend/cpu/conv_dnnl.h"
#include "tests/util/reference.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;

TEST(Softmax, MatchesReferenceOnEveryDim) {
  for (Shape s : {Shape{5}, Shape{3, 7}, Shape{2, 3, 4}, Shape{4, 1000}}) {
    Tensor x = uniform(s, kFloat64, -5, 5);
    for (int64_t d = 0; d < x.dim(); ++d) {
      // reference: exp(x - logsumexp) along d
      Tensor lse = x.logsumexp({d}, true);
      Tensor expected_log = x - lse;
      EXPECT_TRUE(all_close(log_softmax(x, d), expected_log, 1e-10, 1e-10)) << s << " dim " << d;
      EXPECT_TRUE(all_close(softmax(x, d), exp(expected_log), 1e-10, 1e-12)) << s << " dim " << d;
      EXPECT_TRUE(all_close(softmax(x.to(kFloat32), d), exp(expected_log), 1e-5, 1e-6))
          << "float32";
    }
  }
  Tensor big = tensor({1000.0, 1000.0, -1000.0});
  EXPECT_TRUE(all_close(softmax(big, 0), tensor({0.5, 0.5, 0.0})));
  Tensor inf = tensor({-INFINITY, -INFINITY});
  EXPECT_TRUE(std::isnan(softmax(inf, 0)[0].item<double>()));
  EXPECT_EQ(softmax(tensor({1, 2}), 0).dtype(), kFloat32);
}

// Direct convolution in doubles.
Tensor ref_conv(const Tensor& x, const Tensor& w, const Tensor& b, Pair s, Pair p, Pair d,
                int64_t g) {
  std::vector<double> xv = values(x), wv = values(w);
  int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  int64_t O = w.size(0), kh = w.size(2), kw = w.size(3), Cg = C / g, Og = O / g;
  int64_t oH = (H + 2 * p[0] - d[0] * (kh - 1) - 1) / s[0] + 1;
  int64_t oW = (W + 2 * p[1] - d[1] * (kw - 1) - 1) / s[1] + 1;
  std::vector<double> out(static_cast<size_t>(N * O * oH * oW), 0);
  std::vector<double> bv = b.defined() ? values(b) : std::vector<double>(static_cast<size_t>(O), 0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < oH; ++i)
        for (int64_t j = 0; j < oW; ++j) {
          double acc = bv[static_cast<size_t>(o)];
          int64_t grp = o / Og;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t u = 0; u < kh; ++u)
              for (int64_t v = 0; v < kw; ++v) {
                int64_t ih = i * s[0] - p[0] + u * d[0], iw = j * s[1] - p[1] + v * d[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += xv[static_cast<size_t>(((n * C + grp * Cg + c) * H + ih) * W + iw)] *
                       wv[static_cast<size_t>(((o * Cg + c) * kh + u) * kw + v)];
              }
          out[static_cast<size_t>(((n * O + o) * oH + i) * oW + j)] = acc;
        }
  return make(out, {N, O, oH, oW}, x.dtype());
}

struct ConvCase {
  Shape x, w;
  Pair stride, padding, dilation;
  int64_t groups;
  bool bias;
};

TEST(Conv2d, MatchesDirectConvolution) {
  std::vector<ConvCase> cases = {
      {{2, 1, 28, 28}, {6, 1, 5, 5}, {1, 1}, {0, 0}, {1, 1}, 1, true},   // LeNet conv1
      {{3, 6, 12, 12}, {16, 6, 5, 5}, {1, 1}, {0, 0}, {1, 1}, 1, true},  // LeNet conv2
      {{2, 3, 9, 8}, {4, 3, 3, 3}, {2, 1}, {1, 2}, {1, 1}, 1, false},
      {{1, 4, 10, 10}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {2, 2}, 2, true},
      {{2, 4, 7, 7}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4, true},   // depthwise
      {{40, 3, 6, 6}, {5, 3, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true},  // many chunks
  };
  for (const ConvCase& c : cases) {
    for (DType dt : {kFloat32, kFloat64}) {
      Tensor x = uniform(c.x, dt), w = uniform(c.w, dt);
      Tensor b = c.bias ? uniform({c.w[0]}, dt) : Tensor();
      Tensor out = conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
      Tensor expected = ref_conv(x, w, b, c.stride, c.padding, c.dilation, c.groups);
      EXPECT_TRUE(
          all_close(out, expected, dt == kFloat32 ? 1e-4 : 1e-10, dt == kFloat32 ? 1e-4 : 1e-10))
          << c.x << " * " << c.w << " " << dt;
    }
  }
  // Unbatched input.
  Tensor x = uniform({1, 5, 5}), w = uniform({2, 1, 3, 3});
  EXPECT_EQ(conv2d(x, w).sizes(), (Shape{2, 3, 3}));
}

// bfloat16 convolutions take oneDNN's bfloat16 kernels where the CPU has them (bf16_kernels.h)
// and run in float32 otherwise; forward and backward, both agree with float64 on the same
// (bfloat16) values within bfloat16's rounding.
TEST(Conv2d, BFloat16WithAndWithoutTheBFloat16KernelsMatchFloat64) {
  struct Case {
    Shape x, w;
    Pair stride, padding;
    int64_t groups;
  };
  for (const Case& c : std::vector<Case>{{{2, 3, 9, 9}, {8, 3, 3, 3}, {1, 1}, {1, 1}, 1},
                                         {{3, 16, 8, 8}, {32, 16, 3, 3}, {2, 2}, {1, 1}, 1},
                                         {{2, 4, 7, 7}, {6, 2, 1, 1}, {1, 1}, {0, 0}, 2}}) {
    Tensor x = uniform(c.x, kBFloat16), w = uniform(c.w, kBFloat16),
           b = uniform({c.w[0]}, kBFloat16);
    auto run = [&](DType t) {
      // Fresh leaves each run (to() of the same dtype would return x itself).
      auto leaf = [&](const Tensor& v) { return v.to(t, false, /*copy=*/true).requires_grad_(); };
      Tensor xl = leaf(x), wl = leaf(w), bl = leaf(b);
      Tensor y = conv2d(xl, wl, bl, c.stride, c.padding, {1, 1}, c.groups);
      Tensor g = arange(y.numel(), TensorOptions(t)).reshape(y.sizes()) / y.numel();
      (y * g).sum().backward();
      return std::vector<Tensor>{y, xl.grad(), wl.grad(), bl.grad()};
    };
    std::vector<Tensor> exact = run(kFloat64);
    for (bool kernels : {true, false}) {
      cpu::set_bf16_kernels_enabled(kernels);
      std::vector<Tensor> got = run(kBFloat16);
      const char* what[] = {"output", "input grad", "weight grad", "bias grad"};
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i].dtype(), kBFloat16) << what[i];
        // One rounding of the result, and of the bfloat16 gradient fed to backward.
        double scale = exact[i].abs().max().item<double>();
        EXPECT_TRUE(all_close(got[i], exact[i], 1.0 / 64, scale / 64))
            << what[i] << ", kernels " << kernels << ", x " << c.x;
      }
    }
    cpu::set_bf16_kernels_enabled(true);
  }
}

// Float32 3x3 stride-1 convolutions of 64+ channels take Winograd's algorithm where oneDNN has it
// (conv_dnnl.cpp); forward and both gradients stay within float32 tolerance of float64, with and
// without it, including tiles cut by the edge (7x7) and a stride the choice must refuse.
TEST(Conv2d, WinogradAndDirectBothMatchFloat64) {
  struct Case {
    Shape x, w;
    int64_t stride;
  };
  for (const Case& c : std::vector<Case>{{{2, 64, 8, 8}, {64, 64, 3, 3}, 1},
                                         {{3, 64, 7, 7}, {96, 64, 3, 3}, 1},
                                         {{2, 64, 8, 8}, {64, 64, 3, 3}, 2}}) {
    Tensor x = uniform(c.x, kFloat64), w = uniform(c.w, kFloat64) / 24.0,
           b = uniform({c.w[0]}, kFloat64);
    auto run = [&](DType t) {
      auto leaf = [&](const Tensor& v) { return v.to(t, false, /*copy=*/true).requires_grad_(); };
      Tensor xl = leaf(x), wl = leaf(w), bl = leaf(b);
      Tensor y = conv2d(xl, wl, bl, {c.stride, c.stride}, {1, 1});
      Tensor g = arange(y.numel(), TensorOptions(t)).reshape(y.sizes()) / y.numel();
      (y * g).sum().backward();
      return std::vector<Tensor>{y, xl.grad(), wl.grad(), bl.grad()};
    };
    std::vector<Tensor> exact = run(kFloat64);
    std::vector<Tensor> by[2];
    // 2 threads split these convolutions by channel (their weights outweigh the activations), 1
    // thread runs them whole.
    int threads = get_num_threads();
    for (int t : {1, 2})
      for (bool winograd : {true, false}) {
        set_num_threads(t);
        cpu::set_allow_winograd(winograd);
        std::vector<Tensor> got = run(kFloat32);
        for (size_t i = 0; i < exact.size(); ++i) {
          double scale = exact[i].abs().max().item<double>();
          EXPECT_TRUE(all_close(got[i], exact[i], 1e-4, 1e-4 * scale))
              << i << ", winograd " << winograd << ", threads " << t << ", x " << c.x;
        }
      }
    set_num_threads(1);  // whole: a 2-thread part of 32 channels is too narrow for Winograd
    for (bool winograd : {true, false}) {
      cpu::set_allow_winograd(winograd);
      by[winograd] = run(kFloat32);
      const char* what[] = {"output", "input grad", "weight grad", "bias grad"};
      for (size_t i = 0; i < exact.size(); ++i) {
        double scale = exact[i].abs().max().item<double>();
        EXPECT_TRUE(all_close(by[winograd][i], exact[i], 1e-4, 1e-4 * scale))
            << what[i] << ", winograd " << winograd << ", x " << c.x << " stride " << c.stride;
      }
    }
    set_num_threads(threads);
    cpu::set_allow_winograd(true);
    EXPECT_TRUE(cpu::allow_winograd());
    // Where the algorithm can run, it is the one used: its rounding differs from direct's.
    bool winograd_shape = c.stride == 1;
    if (winograd_shape && cpu::have_dnnl() && __builtin_cpu_supports("avx512f"))
      EXPECT_FALSE(by[1][0].equal(by[0][0])) << "the Winograd path was not taken for " << c.x;
    if (!winograd_shape) EXPECT_TRUE(by[1][0].equal(by[0][0])) << "stride 2 took Winograd";
  }
}

TEST(Conv2d, ErrorsExplainShapes) {
  EXPECT_THROW_WITH(conv2d(ones({1, 3, 8, 8}), ones({4, 2, 3, 3})),
                    "to have 2 channels, but got 3 channels");
  EXPECT_THROW_WITH(conv2d(ones({1, 1, 2, 2}), ones({1, 1, 3, 3})),
                    "Kernel size can't be greater than actual input size");
  EXPECT_THROW_WITH(conv2d(ones({3, 3}), ones({1, 1, 3, 3})), "expected 3-D (unbatched) or 4-D");
  EXPECT_THROW_WITH(conv2d(ones({1, 1, 4, 4}), ones({1, 1, 3, 3}, kFloat64)), "should be the same");
}

TEST(Pooling, MaxAndAverageMatchReference) {
  Tensor x = arange(32, kFloat32).view({1, 2, 4, 4});
  Tensor m = max_pool2d(x, {2, 2});
  EXPECT_EQ(values(m), (std::vector<double>{5, 7, 13, 15, 21, 23, 29, 31}));
  Tensor a = avg_pool2d(x, {2, 2});
  EXPECT_EQ(values(a), (std::vector<double>{2.5, 4.5, 10.5, 12.5, 18.5, 20.5, 26.5, 28.5}));
  Tensor y = arange(25, kFloat32).view({1, 1, 5, 5});
  EXPECT_EQ(max_pool2d(y, {2, 2}).sizes(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(max_pool2d(y, {2, 2}, std::nullopt, {0, 0}, {1, 1}, /*ceil_mode=*/true).sizes(),
            (Shape{1, 1, 3, 3}));
  EXPECT_EQ(values(max_pool2d(y, {3, 3}, Pair{1, 1}, {1, 1}))[0], 6);
  // padding counts (or not) in the average
  Tensor ones4 = ones({1, 1, 2, 2});
  EXPECT_EQ(values(avg_pool2d(ones4, {2, 2}, Pair{1, 1}, {1, 1}))[0], 0.25);
  EXPECT_EQ(values(avg_pool2d(ones4, {2, 2}, Pair{1, 1}, {1, 1}, false, false))[0], 1.0);
  EXPECT_THROW_WITH(max_pool2d(y, {2, 2}, std::nullopt, {2, 2}), "pad should be at most half");
}

// PyTorch's adaptive windows, in doubles: output o of O over I averages [floor(o*I/O),
// ceil((o+1)*I/O)).
Tensor ref_adaptive_avg(const Tensor& x, int64_t oH, int64_t oW) {
  std::vector<double> xv = values(x);
  int64_t P = x.size(0) * x.size(1), H = x.size(2), W = x.size(3);
  std::vector<double> out;
  for (int64_t p = 0; p < P; ++p)
    for (int64_t i = 0; i < oH; ++i)
      for (int64_t j = 0; j < oW; ++j) {
        int64_t h0 = i * H / oH, h1 = ((i + 1) * H + oH - 1) / oH;
        int64_t w0 = j * W / oW, w1 = ((j + 1) * W + oW - 1) / oW;
        double acc = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) acc += xv[static_cast<size_t>((p * H + h) * W + w)];
        out.push_back(acc / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
  return make(out, {x.size(0), x.size(1), oH, oW}, x.dtype());
}

TEST(Pooling, AdaptiveAverageMatchesReference) {
  for (Shape s : {Shape{2, 3, 7, 7}, Shape{1, 2, 5, 9}, Shape{3, 1, 4, 4}, Shape{2, 4, 1, 3}}) {
    for (Pair o : {Pair{1, 1}, Pair{2, 3}, Pair{4, 4}, Pair{7, 2}}) {
      for (DType dt : {kFloat32, kFloat64}) {
        Tensor x = uniform(s, dt);
        EXPECT_TRUE(all_close(adaptive_avg_pool2d(x, o), ref_adaptive_avg(x, o[0], o[1]),
                              tolerance(dt), tolerance(dt)))
            << s << " -> " << o[0] << "x" << o[1] << " " << dt;
      }
    }
  }
  Tensor x = uniform({2, 3, 6, 6});
  EXPECT_TRUE(all_close(adaptive_avg_pool2d(x, {1, 1}), x.mean({2, 3}, true), 1e-6, 1e-6));
  EXPECT_TRUE(all_close(adaptive_avg_pool2d(x, {3, 3}), avg_pool2d(x, {2, 2}), 1e-6, 1e-6))
      << "an even split is avg_pool2d";
  EXPECT_EQ(adaptive_avg_pool2d(uniform({3, 5, 5}), {2, 2}).sizes(), (Shape{3, 2, 2}));
  EXPECT_TRUE(all_close(adaptive_avg_pool2d(noncontiguous(x), {2, 4}), ref_adaptive_avg(x, 2, 4),
                        1e-6, 1e-6));
  EXPECT_EQ(adaptive_avg_pool2d(uniform({0, 3, 4, 4}), {1, 1}).sizes(), (Shape{0, 3, 1, 1}));
  EXPECT_THROW_WITH(adaptive_avg_pool2d(uniform({2, 0, 4}), {1, 1}), "non-zero size");
  EXPECT_THROW_WITH(adaptive_avg_pool2d(ones({4, 4}), {1, 1}), "expected 3-D or 4-D input");
  EXPECT_THROW_WITH(adaptive_avg_pool2d(ones({1, 1, 4, 4}, kInt64), {1, 1}),
                    "expected a floating point input");
}

TEST(Indexing, GatherScatterIndexSelectOneHotEmbedding) {
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor idx = tensor({{2, 0}, {1, 1}});
  EXPECT_EQ(values(gather(x, 1, idx)), (std::vector<double>{3, 1, 5, 5}));
  EXPECT_EQ(values(gather(x, 0, tensor({{1, 0, 1}}))), (std::vector<double>{4, 2, 6}));
  Tensor s = scatter_add(zeros({2, 3}), 1, idx, ones({2, 2}));
  EXPECT_EQ(values(s), (std::vector<double>{1, 0, 1, 0, 2, 0}));
  EXPECT_EQ(values(index_select(x, 1, tensor({2, 0}))), (std::vector<double>{3, 1, 6, 4}));
  EXPECT_EQ(values(index_select(x, 0, tensor({1}))), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(values(one_hot(tensor({0, 2}), 3)), (std::vector<double>{1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(one_hot(tensor({1, 3}).view({2, 1})).sizes(), (Shape{2, 1, 4}));
  Tensor table = arange(12, kFloat32).view({4, 3});
  Tensor e = embedding(table, tensor({{3, 0}, {1, 1}}));
  EXPECT_EQ(e.sizes(), (Shape{2, 2, 3}));
  EXPECT_EQ(values(e[0][0]), (std::vector<double>{9, 10, 11}));
  EXPECT_THROW_WITH(gather(x, 1, tensor({3}).view({1, 1})),
                    "index 3 is out of bounds for dimension 1 with size 3");
  EXPECT_THROW_WITH(embedding(table, tensor({4})), "out of bounds");
  EXPECT_THROW_WITH(one_hot(tensor({5}), 3), "smaller than num_classes");
  EXPECT_THROW_WITH(gather(x, 1, tensor({1.0}).view({1, 1})), "expected an int64 index");
}

TEST(Indexing, ScatterAddChecksItsSourceLikePyTorch) {
  Tensor idx = tensor({0, 1, 2, 3});
  // src shorter than index: reading src at every index position would run past it.
  EXPECT_THROW_WITH(zeros({5}).scatter_add(0, idx, arange(10, kFloat32).narrow(0, 0, 2)),
                    "does not fit src [2] at dimension 0");
  EXPECT_THROW_WITH(zeros({5}).scatter_add(0, idx, scalar_tensor(1.0)),
                    "does not fit src [] at dimension 0");
  Tensor x = zeros({3}, kFloat64);
  EXPECT_THROW_WITH(x.scatter_add_(0, tensor({0, 1, 2}), ones({3})),
                    "expected self and src to have the same dtype, got float64 and float32");
  EXPECT_THROW_WITH(zeros({2, 2}).scatter_add(0, tensor({{0}, {1}}), ones({2})),
                    "same number of dimensions as src tensor");
  // 0-dim operands are one element, in place as out of place.
  Tensor s = scalar_tensor(1.0, kFloat32);
  s.scatter_add_(0, scalar_tensor(0, kInt64), scalar_tensor(2.0, kFloat32));
  EXPECT_EQ(s.item<double>(), 3);
}

}  // namespace
}  // namespace ember
