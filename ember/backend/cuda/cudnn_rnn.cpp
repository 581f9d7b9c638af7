// Recurrent stacks through cuDNN's RNN API, version 8 and later (backend/cudnn.h). Each call
// describes its stack and batch to cuDNN afresh (host-side calls of microseconds); the weight
// layout, which needs a query per block, is kept per shape. Compiled only where CMake found cuDNN.
#include <cudnn.h>

// Null devSeqLengths (the lengths come from the data descriptors) needs cuDNN 8.9.1; CMake
// checks the headers' version, compute_layout the loaded library's.
static_assert(CUDNN_VERSION >= 8901, "ember's RNN path needs cuDNN 8.9.1 or later");

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "ember/backend/cuda/cudnn_util.h"
#include "ember/backend/cuda/runtime.h"
#include "ember/backend/cudnn.h"
#include "ember/core/device_backend.h"

namespace ember::cudnn {
namespace {

using DropoutDescriptor =
    Owned<cudnnDropoutDescriptor_t, cudnnCreateDropoutDescriptor, cudnnDestroyDropoutDescriptor>;
using RnnDescriptor =
    Owned<cudnnRNNDescriptor_t, cudnnCreateRNNDescriptor, cudnnDestroyRNNDescriptor>;
using RnnDataDescriptor =
    Owned<cudnnRNNDataDescriptor_t, cudnnCreateRNNDataDescriptor, cudnnDestroyRNNDataDescriptor>;

// The recurrent layers take float32 and float64 (ops/rnn.cpp runs the others in float32).
cudnnDataType_t rnn_type(DType dtype) {
  EMBER_CHECK(dtype == kFloat32 || dtype == kFloat64,
              "[cudnn] recurrent layers take float32 or float64, got ", dtype);
  return data_type(dtype, "recurrent layers");
}

int64_t gates(RnnMode mode) { return mode == RnnMode::Lstm ? 4 : mode == RnnMode::Gru ? 3 : 1; }

// The stack as cuDNN describes it, with a borrowed handle on the device's current stream.
struct Stack {
  cuda::LaunchScope launch;
  BorrowedCudnn handle;
  DropoutDescriptor dropout;
  RnnDescriptor rnn;

  Stack(const RnnShape& s, DType dtype, int device) : launch(device), handle(device) {
    cudnnHandle_t h = handle.get();
    EMBER_CUDNN_CHECK(cudnnSetStream(h, launch.stream));
    // No dropout inside cuDNN: ops/rnn.cpp runs one layer per call where it drops between
    // layers, so that ember's generator draws the masks. At p = 0 cuDNN keeps no states.
    EMBER_CUDNN_CHECK(cudnnSetDropoutDescriptor(dropout.get(), h, 0.0f, nullptr, 0, 0));
    cudnnDataType_t type = rnn_type(dtype);
    // As PyTorch: float32 may take TF32 tensor cores unless cudnn.allow_tf32 is off.
    cudnnMathType_t math = dtype == kFloat32 && !allow_tf32() ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
    cudnnRNNMode_t cell = s.mode == RnnMode::Lstm      ? CUDNN_LSTM
                          : s.mode == RnnMode::Gru     ? CUDNN_GRU
                          : s.mode == RnnMode::RnnRelu ? CUDNN_RNN_RELU
                                                       : CUDNN_RNN_TANH;
    int hidden = to_int(s.hidden_size, "hidden_size");
    // Padded input and output (the unpacked layouts) need PADDED_IO; projSize = hiddenSize is
    // no projection (LSTM's proj_size otherwise).
    EMBER_CUDNN_CHECK(cudnnSetRNNDescriptor_v8(
        rnn.get(), CUDNN_RNN_ALGO_STANDARD, cell,
        s.bias ? CUDNN_RNN_DOUBLE_BIAS : CUDNN_RNN_NO_BIAS,
        s.bidirectional ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, type,
        type, math, to_int(s.input_size, "input_size"), hidden,
        to_int(s.output_size(), "proj_size"), to_int(s.num_layers, "num_layers"), dropout.get(),
        CUDNN_RNN_PADDED_IO_ENABLED));
  }
  cudnnHandle_t h() const { return handle.get(); }
};

// x and y of one batch, time-major and padded; with `lengths`, cuDNN stops each sequence at its
// length, writes zeros past it and returns the state at its last step.
struct Sequences {
  RnnDataDescriptor x, y;
  TensorDescriptor h;  // hx, hy and their gradients: (layers * directions, B, output_size())
  TensorDescriptor c;  // cx, cy and theirs: (layers * directions, B, H)

  Sequences(const RnnShape& s, const Tensor& input, const Tensor& lengths) {
    cudnnDataType_t type = rnn_type(input.dtype());
    int T = to_int(input.size(0), "the sequence length"), B = to_int(input.size(1), "the batch");
    std::vector<int> seq(static_cast<size_t>(B), T);
    if (lengths.defined()) {
      const int64_t* l = lengths.data_ptr<int64_t>();
      for (int b = 0; b < B; ++b) seq[static_cast<size_t>(b)] = static_cast<int>(l[b]);
    }
    double zero64 = 0;
    float zero32 = 0;
    void* fill = input.dtype() == kFloat64 ? static_cast<void*>(&zero64) : &zero32;
    int H = to_int(s.hidden_size, "hidden_size"), P = to_int(s.output_size(), "proj_size");
    EMBER_CUDNN_CHECK(
        cudnnSetRNNDataDescriptor(x.get(), type, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B,
                                  to_int(s.input_size, "input_size"), seq.data(), fill));
    EMBER_CUDNN_CHECK(
        cudnnSetRNNDataDescriptor(y.get(), type, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B,
                                  P * static_cast<int>(s.directions()), seq.data(), fill));
    auto states = [&](cudnnTensorDescriptor_t d, int features) {
      int dims[3] = {to_int(s.num_layers * s.directions(), "layers * directions"), B, features};
      int strides[3] = {to_int(int64_t{B} * features, "batch * features"), features, 1};
      EMBER_CUDNN_CHECK(cudnnSetTensorNdDescriptor(d, type, 3, dims, strides));
    };
    states(h.get(), P);
    states(c.get(), H);
  }
};

void* ptr(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

// Work space for one call in `mode`, from the caching allocator on the current stream.
DataPtr work_space(const Stack& stack, const Sequences& seq, cudnnForwardMode_t mode, int device,
                   size_t* bytes) {
  EMBER_CUDNN_CHECK(
      cudnnGetRNNTempSpaceSizes(stack.h(), stack.rnn.get(), mode, seq.x.get(), bytes, nullptr));
  return device_backend(kCUDA).allocator(device).allocate(*bytes);
}

RnnLayout compute_layout(const RnnShape& s, DType dtype, int device) {
  EMBER_CHECK(cudnnGetVersion() >= 8901, "[cudnn] the loaded cuDNN is ", cudnnGetVersion(),
              ", older than the 8.9.1 ember's recurrent layers need (set "
              "torch.backends.cudnn.enabled = False to use ember's own kernels)");
  Stack stack(s, dtype, device);
  size_t bytes = 0;
  EMBER_CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(stack.h(), stack.rnn.get(), &bytes));
  // The query returns addresses in a real weight space; the layout keeps their offsets.
  DataPtr space = device_backend(kCUDA).allocator(device).allocate(bytes);
  auto* base = static_cast<char*>(space.get());
  const int64_t elem = static_cast<int64_t>(itemsize(dtype)), G = gates(s.mode);
  const int64_t H = s.hidden_size, P = s.output_size(), D = s.directions();
  const int64_t per = s.weights_per_layer();
  RnnLayout layout;
  layout.elements = static_cast<int64_t>(bytes) / elem;
  TensorDescriptor m, b;
  auto numel = [](cudnnTensorDescriptor_t d) {
    cudnnDataType_t type;
    int n = 0, dims[8], strides[8];
    EMBER_CUDNN_CHECK(cudnnGetTensorNdDescriptor(d, 8, &type, &n, dims, strides));
    int64_t count = 1;
    for (int i = 0; i < n; ++i) count *= dims[i];
    return count;
  };
  for (int64_t l = 0; l < s.num_layers; ++l)
    for (int64_t d = 0; d < D; ++d) {
      int64_t pseudo = l * D + d;
      // With a projection, linear layer 2G is W_hr (proj_size x H, no bias).
      for (int64_t id = 0; id < 2 * G + (s.proj_size > 0 ? 1 : 0); ++id) {
        void *matrix = nullptr, *bias = nullptr;
        EMBER_CUDNN_CHECK(cudnnGetRNNWeightParams(
            stack.h(), stack.rnn.get(), static_cast<int32_t>(pseudo), bytes, space.get(),
            static_cast<int32_t>(id), m.get(), &matrix, b.get(), &bias));
        // cuDNN's linear layers 0..G-1 multiply the input, G..2G-1 the hidden state, gates in
        // PyTorch's order (LSTM i f g o, GRU r z n).
        size_t first = static_cast<size_t>(per * pseudo);
        if (id == 2 * G) {
          EMBER_CHECK(matrix != nullptr && numel(m.get()) == P * H,
                      "[cudnn] the projection of layer ", pseudo, " is not the expected ", P, " x ",
                      H);
          layout.blocks.push_back({first + 4, 0, P, H, (static_cast<char*>(matrix) - base) / elem});
          continue;
        }
        bool recurrent = id >= G;
        int64_t cols = recurrent ? P : (l == 0 ? s.input_size : P * D);
        size_t weight = first + (recurrent ? 1 : 0);
        int64_t row = (id % G) * H;
        EMBER_CHECK(matrix != nullptr && numel(m.get()) == H * cols, "[cudnn] the weight block ",
                    id, " of layer ", pseudo, " is not the expected ", H, " x ", cols);
        layout.blocks.push_back({weight, row, H, cols, (static_cast<char*>(matrix) - base) / elem});
        if (s.bias) {
          EMBER_CHECK(bias != nullptr && numel(b.get()) == H, "[cudnn] the bias block ", id,
                      " of layer ", pseudo, " is not the expected ", H, " values");
          layout.blocks.push_back(
              {weight + 2, row, H, 1, (static_cast<char*>(bias) - base) / elem});
        }
      }
    }
  // Blocks of one parameter that follow each other in both places become one copy.
  std::sort(layout.blocks.begin(), layout.blocks.end(), [](const auto& a, const auto& b) {
    return std::tie(a.weight, a.row) < std::tie(b.weight, b.row);
  });
  std::vector<WeightBlock> merged;
  for (const WeightBlock& block : layout.blocks) {
    if (!merged.empty()) {
      WeightBlock& last = merged.back();
      if (last.weight == block.weight && last.row + last.rows == block.row &&
          last.offset + last.rows * last.cols == block.offset) {
        last.rows += block.rows;
        continue;
      }
    }
    merged.push_back(block);
  }
  layout.blocks = std::move(merged);
  return layout;
}

}  // namespace

bool built() { return true; }
int64_t version() { return static_cast<int64_t>(cudnnGetVersion()); }

const RnnLayout& rnn_layout(const RnnShape& s, DType dtype, int device) {
  using Key = std::tuple<int, int64_t, int64_t, int64_t, bool, bool, int64_t, int, int>;
  Key key{static_cast<int>(s.mode),
          s.input_size,
          s.hidden_size,
          s.num_layers,
          s.bidirectional,
          s.bias,
          s.proj_size,
          static_cast<int>(dtype),
          device};
  static std::mutex mutex;
  static auto* layouts = new std::map<Key, std::unique_ptr<RnnLayout>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = layouts->find(key);
  if (it == layouts->end())
    it = layouts->emplace(key, std::make_unique<RnnLayout>(compute_layout(s, dtype, device))).first;
  return *it->second;
}

int64_t rnn_reserve_bytes(const RnnShape& s, const Tensor& x, const Tensor& lengths) {
  Stack stack(s, x.dtype(), x.device().index());
  Sequences seq(s, x, lengths);
  size_t work = 0, reserve = 0;
  EMBER_CUDNN_CHECK(cudnnGetRNNTempSpaceSizes(stack.h(), stack.rnn.get(), CUDNN_FWD_MODE_TRAINING,
                                              seq.x.get(), &work, &reserve));
  return static_cast<int64_t>(reserve);
}

void rnn_forward(const RnnShape& s, const Tensor& x, const Tensor& hx, const Tensor& cx,
                 const Tensor& weight_space, const Tensor& lengths, const Tensor& y,
                 const Tensor& hy, const Tensor& cy, const Tensor& reserve) {
  int device = x.device().index();
  Stack stack(s, x.dtype(), device);
  Sequences seq(s, x, lengths);
  bool training = reserve.defined();
  cudnnForwardMode_t mode = training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE;
  size_t work_bytes = 0;
  DataPtr work = work_space(stack, seq, mode, device, &work_bytes);
  // devSeqLengths may be null since cuDNN 8.9.1 (the lengths come from the descriptors).
  EMBER_CUDNN_CHECK(cudnnRNNForward(stack.h(), stack.rnn.get(), mode, nullptr, seq.x.get(),
                                    x.data_ptr(), seq.y.get(), y.data_ptr(), seq.h.get(),
                                    hx.data_ptr(), hy.data_ptr(), seq.c.get(), ptr(cx), ptr(cy),
                                    weight_space.nbytes(), weight_space.data_ptr(), work_bytes,
                                    work.get(), training ? reserve.nbytes() : 0, ptr(reserve)));
}

void rnn_backward(const RnnShape& s, const Tensor& x, const Tensor& hx, const Tensor& cx,
                  const Tensor& weight_space, const Tensor& lengths, const Tensor& y,
                  const Tensor& reserve, const Tensor& dy, const Tensor& dhy, const Tensor& dcy,
                  const Tensor& dx, const Tensor& dhx, const Tensor& dcx,
                  const Tensor& dweight_space) {
  int device = x.device().index();
  Stack stack(s, x.dtype(), device);
  Sequences seq(s, x, lengths);
  size_t work_bytes = 0;
  DataPtr work = work_space(stack, seq, CUDNN_FWD_MODE_TRAINING, device, &work_bytes);
  // The data gradient first: the weights' pass reads what it leaves in the reserve space.
  EMBER_CUDNN_CHECK(cudnnRNNBackwardData_v8(
      stack.h(), stack.rnn.get(), nullptr, seq.y.get(), y.data_ptr(), dy.data_ptr(), seq.x.get(),
      dx.data_ptr(), seq.h.get(), hx.data_ptr(), dhy.data_ptr(), dhx.data_ptr(), seq.c.get(),
      ptr(cx), ptr(dcy), ptr(dcx), weight_space.nbytes(), weight_space.data_ptr(), work_bytes,
      work.get(), reserve.nbytes(), reserve.data_ptr()));
  EMBER_CUDNN_CHECK(cudnnRNNBackwardWeights_v8(
      stack.h(), stack.rnn.get(), CUDNN_WGRAD_MODE_ADD, nullptr, seq.x.get(), x.data_ptr(),
      seq.h.get(), hx.data_ptr(), seq.y.get(), y.data_ptr(), dweight_space.nbytes(),
      dweight_space.data_ptr(), work_bytes, work.get(), reserve.nbytes(), reserve.data_ptr()));
}

}  // namespace ember::cudnn
