// 2-D convolutions through cuDNN's convolution API (backend/cudnn.h), as PyTorch runs them on
// CUDA: cudnnConvolutionForward, BackwardData and BackwardFilter with an algorithm chosen once per
// shape, by cuDNN's heuristics (cudnnGet*_v7) or, with cudnn.benchmark, by timing every candidate
// (cudnnFind*Ex). Descriptors are made per call (host-side, microseconds). Compiled only where
// CMake found cuDNN.
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <vector>

#include "ember/backend/conv_layout.h"
#include "ember/backend/cuda/cudnn_util.h"
#include "ember/backend/cuda/runtime.h"
#include "ember/backend/cudnn.h"
#include "ember/core/device_backend.h"

namespace ember::cudnn {
namespace {

using FilterDescriptor =
    Owned<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor = Owned<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                                    cudnnDestroyConvolutionDescriptor>;

// One convolution as cuDNN sees it, on a borrowed handle bound to the device's current stream.
// x is the input's shape, w the weight's, y the output's; each pass reads two of the three buffers
// and writes the third (forward: y; backward data: x, from y's gradient; backward filter: w).
struct Convolution {
  cuda::LaunchScope launch;
  BorrowedCudnn handle;
  TensorDescriptor x_desc, y_desc;
  FilterDescriptor w_desc;
  ConvolutionDescriptor conv;
  void* x;
  void* w;
  void* y;
  bool is_double;

  Convolution(const Tensor& xt, const Tensor& wt, const Tensor& yt, const Conv2dParams& p)
      : launch(xt.device().index()),
        handle(xt.device().index()),
        x(xt.data_ptr()),
        w(wt.data_ptr()),
        y(yt.data_ptr()),
        is_double(xt.dtype() == kFloat64) {
    EMBER_CUDNN_CHECK(cudnnSetStream(handle.get(), launch.stream));
    cudnnDataType_t type = data_type(xt.dtype(), "convolutions");
    auto dim = [](const Tensor& t, int d) { return to_int(t.size(d), "a convolution's size"); };
    EMBER_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x_desc.get(), CUDNN_TENSOR_NCHW, type, dim(xt, 0),
                                                 dim(xt, 1), dim(xt, 2), dim(xt, 3)));
    EMBER_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y_desc.get(), CUDNN_TENSOR_NCHW, type, dim(yt, 0),
                                                 dim(yt, 1), dim(yt, 2), dim(yt, 3)));
    EMBER_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_desc.get(), type, CUDNN_TENSOR_NCHW, dim(wt, 0),
                                                 dim(wt, 1), dim(wt, 2), dim(wt, 3)));
    auto param = [](int64_t v) { return to_int(v, "a convolution's parameter"); };
    // Half and bfloat16 accumulate in float, as PyTorch asks.
    EMBER_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        conv.get(), param(p.padding[0]), param(p.padding[1]), param(p.stride[0]),
        param(p.stride[1]), param(p.dilation[0]), param(p.dilation[1]), CUDNN_CROSS_CORRELATION,
        is_double ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT));
    EMBER_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv.get(), param(p.groups)));
    // The math type the algorithm search may use (Note [cuDNN math types]).
    set_math(xt.dtype() == kFloat16 || xt.dtype() == kBFloat16 ? CUDNN_TENSOR_OP_MATH
             : xt.dtype() == kFloat32 && !allow_tf32()         ? CUDNN_FMA_MATH
                                                               : CUDNN_DEFAULT_MATH);
  }
  cudnnHandle_t h() const { return handle.get(); }
  void set_math(cudnnMathType_t math) const {
    EMBER_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.get(), math));
  }
};

// Note [cuDNN math types]
// The math type set before the search bounds what it may pick: FMA_MATH keeps float32 off TF32
// tensor cores (cudnn.allow_tf32 off), TENSOR_OP_MATH lets half and bfloat16 use them. The search
// answers with an algorithm and the math type it was measured with, which is set again before
// the algorithm runs: with another, cuDNN would run a slower kernel (PyTorch's Note [behavior of
// cudnnFind and cudnnGet]).

// A candidate kept per shape and pass: the algorithm, its math type and its workspace.
struct Choice {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t workspace = 0;
};

// The three passes share the search and the run; these say which cuDNN calls each one makes.
struct Forward {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;
  static constexpr const char* name = "forward";
  static int count(const Convolution& c) {
    int n = 0;
    EMBER_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(c.h(), &n));
    return n;
  }
  static void heuristics(const Convolution& c, int n, int* got, Perf* perf) {
    EMBER_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
        c.h(), c.x_desc.get(), c.w_desc.get(), c.conv.get(), c.y_desc.get(), n, got, perf));
  }
  static void find(const Convolution& c, int n, int* got, Perf* perf, void* ws, size_t bytes) {
    EMBER_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(
        c.h(), c.x_desc.get(), c.x, c.w_desc.get(), c.w, c.conv.get(), c.y_desc.get(), c.y, n, got,
        perf, ws, bytes));
  }
  static size_t workspace(const Convolution& c, Algo a) {
    size_t bytes = 0;
    EMBER_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(
        c.h(), c.x_desc.get(), c.w_desc.get(), c.conv.get(), c.y_desc.get(), a, &bytes));
    return bytes;
  }
  static void run(const Convolution& c, Algo a, void* ws, size_t bytes, const void* one,
                  const void* zero) {
    EMBER_CUDNN_CHECK(cudnnConvolutionForward(c.h(), one, c.x_desc.get(), c.x, c.w_desc.get(), c.w,
                                              c.conv.get(), a, ws, bytes, zero, c.y_desc.get(),
                                              c.y));
  }
};

struct BackwardData {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  static constexpr const char* name = "backward data";
  static int count(const Convolution& c) {
    int n = 0;
    EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(c.h(), &n));
    return n;
  }
  static void heuristics(const Convolution& c, int n, int* got, Perf* perf) {
    EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
        c.h(), c.w_desc.get(), c.y_desc.get(), c.conv.get(), c.x_desc.get(), n, got, perf));
  }
  static void find(const Convolution& c, int n, int* got, Perf* perf, void* ws, size_t bytes) {
    EMBER_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(
        c.h(), c.w_desc.get(), c.w, c.y_desc.get(), c.y, c.conv.get(), c.x_desc.get(), c.x, n, got,
        perf, ws, bytes));
  }
  static size_t workspace(const Convolution& c, Algo a) {
    size_t bytes = 0;
    EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(
        c.h(), c.w_desc.get(), c.y_desc.get(), c.conv.get(), c.x_desc.get(), a, &bytes));
    return bytes;
  }
  static void run(const Convolution& c, Algo a, void* ws, size_t bytes, const void* one,
                  const void* zero) {
    EMBER_CUDNN_CHECK(cudnnConvolutionBackwardData(c.h(), one, c.w_desc.get(), c.w, c.y_desc.get(),
                                                   c.y, c.conv.get(), a, ws, bytes, zero,
                                                   c.x_desc.get(), c.x));
  }
};

struct BackwardFilter {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  static constexpr const char* name = "backward filter";
  static int count(const Convolution& c) {
    int n = 0;
    EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(c.h(), &n));
    return n;
  }
  static void heuristics(const Convolution& c, int n, int* got, Perf* perf) {
    EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
        c.h(), c.x_desc.get(), c.y_desc.get(), c.conv.get(), c.w_desc.get(), n, got, perf));
  }
  static void find(const Convolution& c, int n, int* got, Perf* perf, void* ws, size_t bytes) {
    EMBER_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(
        c.h(), c.x_desc.get(), c.x, c.y_desc.get(), c.y, c.conv.get(), c.w_desc.get(), c.w, n, got,
        perf, ws, bytes));
  }
  static size_t workspace(const Convolution& c, Algo a) {
    size_t bytes = 0;
    EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
        c.h(), c.x_desc.get(), c.y_desc.get(), c.conv.get(), c.w_desc.get(), a, &bytes));
    return bytes;
  }
  static void run(const Convolution& c, Algo a, void* ws, size_t bytes, const void* one,
                  const void* zero) {
    EMBER_CUDNN_CHECK(cudnnConvolutionBackwardFilter(c.h(), one, c.x_desc.get(), c.x,
                                                     c.y_desc.get(), c.y, c.conv.get(), a, ws,
                                                     bytes, zero, c.w_desc.get(), c.w));
  }
};

// The workspace a benchmark search may use: what the largest candidate asks for, at most 1 GiB
// (PyTorch offers what the caching allocator can give; a bound keeps the search from evicting
// the cache), or none when even that cannot be had.
constexpr size_t kMaxSearchWorkspace = size_t{1} << 30;

// The candidates for a shape, best first: those that ran, deterministic if asked, and for float32
// with TF32 off never a tensor-core one (Note [cuDNN math types]). Empty when none qualifies.
template <typename Pass>
std::vector<Choice> search(const Convolution& c, int device, bool fma_only) {
  int n = std::max(Pass::count(c), 1), got = 0;
  std::vector<typename Pass::Perf> perf(static_cast<size_t>(n));
  Pass::heuristics(c, n, &got, perf.data());
  if (benchmark()) {
    size_t bytes = 0;
    for (int i = 0; i < got; ++i)
      if (perf[static_cast<size_t>(i)].status == CUDNN_STATUS_SUCCESS)
        bytes = std::max(bytes, std::min(perf[static_cast<size_t>(i)].memory, kMaxSearchWorkspace));
    DataPtr ws;
    try {
      ws = device_backend(kCUDA).allocator(device).allocate(bytes);
    } catch (const OutOfMemoryError&) {
      bytes = 0;  // the search then times the algorithms that need no workspace
    }
    // The timed runs write the pass's output buffer, which the real run overwrites.
    Pass::find(c, n, &got, perf.data(), ws.get(), bytes);
  }
  std::vector<Choice> ranked;
  for (int i = 0; i < got; ++i) {
    const auto& p = perf[static_cast<size_t>(i)];
    if (p.status != CUDNN_STATUS_SUCCESS) continue;
    if (deterministic() && p.determinism != CUDNN_DETERMINISTIC) continue;
    if (fma_only && p.mathType != CUDNN_FMA_MATH && p.mathType != CUDNN_DEFAULT_MATH) continue;
    cudnnMathType_t math = fma_only ? CUDNN_FMA_MATH : p.mathType;
    c.set_math(math);
    ranked.push_back(Choice{static_cast<int>(p.algo), math, Pass::workspace(c, p.algo)});
  }
  return ranked;
}

// The choice for a shape is kept: the search costs far more than the convolution. y's size is in
// the key: a transposed convolution's output padding makes it more than x, w and p say.
using Key = std::array<int64_t, 23>;
Key key_of(int pass, const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dParams& p) {
  return {pass,
          x.device().index(),
          static_cast<int64_t>(x.dtype()),
          x.size(0),
          x.size(1),
          x.size(2),
          x.size(3),
          w.size(0),
          w.size(1),
          w.size(2),
          w.size(3),
          y.size(2),
          y.size(3),
          p.stride[0],
          p.stride[1],
          p.padding[0],
          p.padding[1],
          p.dilation[0],
          p.dilation[1],
          p.groups,
          allow_tf32(),
          deterministic(),
          benchmark()};
}

// Runs the pass with the best candidate whose workspace can be had (PyTorch's try_all: a heuristic
// favourite may want gigabytes); false when no candidate qualifies or none fits in memory, and
// the caller runs ember's own kernels.
template <typename Pass>
bool convolve(int pass, const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dParams& p) {
  Convolution c(x, w, y, p);
  int device = x.device().index();
  static std::mutex mutex;
  static auto* choices = new std::map<Key, std::vector<Choice>>();
  Key key = key_of(pass, x, w, y, p);
  // Entries are never erased, and std::map keeps its nodes in place: the list can be read after
  // the lock is released, without a copy on every call.
  const std::vector<Choice>* ranked = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = choices->find(key);
    if (it != choices->end()) ranked = &it->second;
  }
  if (!ranked) {
    // Searched outside the lock (a benchmark search runs kernels); two threads searching the same
    // shape at once keep the first answer.
    std::vector<Choice> found = search<Pass>(c, device, x.dtype() == kFloat32 && !allow_tf32());
    std::lock_guard<std::mutex> lock(mutex);
    ranked = &choices->emplace(key, std::move(found)).first->second;
  }
  double one64 = 1, zero64 = 0;
  float one32 = 1, zero32 = 0;
  const void* one = c.is_double ? static_cast<const void*>(&one64) : &one32;
  const void* zero = c.is_double ? static_cast<const void*>(&zero64) : &zero32;
  for (const Choice& choice : *ranked) {
    DataPtr ws;
    try {
      ws = device_backend(kCUDA).allocator(device).allocate(choice.workspace);
    } catch (const OutOfMemoryError&) {
      continue;
    }
    c.set_math(choice.math);
    Pass::run(c, static_cast<typename Pass::Algo>(choice.algo), ws.get(), choice.workspace, one,
              zero);
    return true;
  }
  return false;
}

}  // namespace

bool use_for_conv(const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dParams& p) {
  // cuDNN's descriptors count elements in int and take no empty dims, nor an output larger than
  // the forward convolution's: those run ember's own kernels.
  auto fits = [](const Tensor& t) { return t.numel() > 0 && t.numel() <= INT32_MAX; };
  return enabled() && fits(x) && fits(w) && fits(y) &&
         output_is_forward_size(conv_layout(x, w, y, p));
}

bool conv_forward(const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dParams& p) {
  return convolve<Forward>(0, x, w, y, p);
}

bool conv_backward_data(const Tensor& grad_x, const Tensor& w, const Tensor& grad_y,
                        const Conv2dParams& p) {
  return convolve<BackwardData>(1, grad_x, w, grad_y, p);
}

bool conv_backward_filter(const Tensor& x, const Tensor& grad_w, const Tensor& grad_y,
                          const Conv2dParams& p) {
  return convolve<BackwardFilter>(2, x, grad_w, grad_y, p);
}

}  // namespace ember::cudnn
