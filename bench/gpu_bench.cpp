// ember on one GPU, timed with CUDA events: the workloads of bench/pytorch_gpu.py, which times
// PyTorch on the same GPU. scripts/gpu-check merges both into ember-vs-libtorch's JSON format.
// Prints one JSON object per line: {"name", "ember", "unit"} (unit: ms, or us per op).
//   ember-gpu-bench [FILTER]
//   ember-gpu-bench --dry-run [FILTER]   # each workload once, small, on the CPU (a CTest test)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ember/backend/cudnn.h"
#include "ember/ember.h"

namespace {

using namespace ember;

// --dry-run: checks that every workload runs, once and small, on the CPU; its times mean nothing.
bool g_dry_run = false;
// A size: `full` on the GPU, `small` in a dry run.
int64_t sized(int64_t full, int64_t small) { return g_dry_run ? small : full; }

// Median over `repeats` of the mean time of `iters` calls, in ms, measured with CUDA events.
double time_ms(const std::function<void()>& f, int iters, int repeats = 7) {
  if (g_dry_run) {
    auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  }
  for (int i = 0; i < 3; ++i) f();
  cuda::synchronize();
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    cuda::Event start(true), end(true);
    start.record();
    for (int i = 0; i < iters; ++i) f();
    end.record();
    end.synchronize();
    t.push_back(static_cast<double>(start.elapsed_time(end)) / iters);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void print(const std::string& name, double value, const char* unit, double rate = 0,
           const char* rate_unit = "") {
  std::printf("{\"name\": \"%s\", \"ember\": %.6g, \"unit\": \"%s\"", name.c_str(), value, unit);
  if (rate > 0) std::printf(", \"ember_rate\": %.6g, \"rate_unit\": \"%s\"", rate, rate_unit);
  std::printf("}\n");
  std::fflush(stdout);
}

// ms per training step (forward, cross-entropy, backward, SGD with momentum) of `model` on
// random (batch, 1, size, size) images on `gpu`. precision "_amp_fp16": the forward and the loss
// under CUDA autocast float16 with a GradScaler (PyTorch's recipe); "_amp_bf16": bfloat16, no
// scaler; "": float32.
double train_step_ms(std::shared_ptr<nn::Module> model, int64_t batch, int64_t size, Device gpu,
                     int iters, const std::string& precision) {
  AutoGradMode grad(true);
  model->to(gpu);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.01).with_momentum(0.9));
  Tensor x = randn({batch, 1, size, size}, TensorOptions(kFloat32).with_device(gpu));
  Tensor y = randint(0, 10, {batch}).to(gpu);
  bool amp = !precision.empty();
  // The dry run's CPU autocast takes bfloat16, and no scaler (as bench/pytorch_gpu.py's).
  DType low = precision == "_amp_bf16" || g_dry_run ? kBFloat16 : kFloat16;
  amp::GradScaler scaler(
      amp::GradScalerOptions().with_enabled(precision == "_amp_fp16" && !g_dry_run));
  return time_ms(
      [&] {
        Tensor loss;
        {
          amp::autocast region(gpu.type(), low, amp);
          loss = nn::functional::cross_entropy(model->forward(x), y);
        }
        opt.zero_grad();
        scaler.scale(loss).backward();
        scaler.step(opt);
        scaler.update();
      },
      iters);
}

}  // namespace

int main(int argc, char** argv) {
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--dry-run")
      g_dry_run = true;
    else
      filter = arg;
  }
  auto want = [&](const std::string& n) {
    return filter.empty() || n.find(filter) != std::string::npos;
  };
  if (!g_dry_run && !cuda::is_available()) {
    std::fprintf(stderr, "ember-gpu-bench: no GPU: %s (--dry-run runs on the CPU)\n",
                 cuda::unavailable_reason().c_str());
    return 1;
  }
  Device gpu = g_dry_run ? Device("cpu") : Device("cuda:0");
  TensorOptions f32 = TensorOptions(kFloat32).with_device(gpu);
  NoGradGuard no_grad;
  const int64_t N = sized(int64_t{256} << 20, 1 << 10);
  if (want("copy_256M") || want("add_256M") || want("sum_256M")) {
    Tensor a = randn({N}, f32), b = randn({N}, f32), c = empty({N}, f32);
    double gb = 1e-9 * static_cast<double>(N) * 4;
    if (want("copy_256M")) {
      double ms = time_ms([&] { c.copy_(a); }, 10);
      print("copy_256M", ms, "ms", 2 * gb / (ms * 1e-3), "GB/s");
    }
    if (want("add_256M")) {
      double ms = time_ms([&] { add_out(c, a, b); }, 10);
      print("add_256M", ms, "ms", 3 * gb / (ms * 1e-3), "GB/s");
      double ms2 = time_ms([&] { Tensor d = a + b; }, 10);
      print("add_out_of_place_256M", ms2, "ms", 3 * gb / (ms2 * 1e-3), "GB/s");
    }
    if (want("sum_256M")) {
      double ms = time_ms([&] { Tensor s = a.sum(); }, 10);
      print("sum_256M", ms, "ms", gb / (ms * 1e-3), "GB/s");
    }
  }
  if (want("softmax")) {
    Tensor x = randn({sized(32768, 32), 1024}, f32);
    double ms = time_ms([&] { softmax(x, -1); }, 20);
    print("softmax_32768x1024", ms, "ms", 2e-9 * x.numel() * 4 / (ms * 1e-3), "GB/s");
  }
  if (want("argmax_256M")) {  // one long row
    Tensor a = randn({N}, f32);
    double ms = time_ms([&] { argmax(a); }, 10);
    print("argmax_256M", ms, "ms", 1e-9 * static_cast<double>(N) * 4 / (ms * 1e-3), "GB/s");
  }
  // Backward rows time autograd::grad of a retained graph: the op's backward alone, no .grad
  // accumulation (torch.autograd.grad in bench/pytorch_gpu.py).
  {
    AutoGradMode grad(true);
    auto either = [&](const std::string& name) {
      return want(name + "_fwd") || want(name + "_bwd");
    };
    auto backward_row = [&](const std::string& name, const std::vector<Tensor>& inputs,
                            const Tensor& y) {
      Tensor g = randn(y.sizes(), y.options());
      print(name, time_ms([&] { autograd::grad({y}, inputs, {g}, true); }, 20), "ms");
    };
    auto forward_backward = [&](const std::string& name, const std::vector<Tensor>& inputs,
                                const std::function<Tensor()>& forward) {
      if (want(name + "_fwd")) {
        NoGradGuard off;
        print(name + "_fwd", time_ms([&] { forward(); }, 20), "ms");
      }
      if (want(name + "_bwd")) backward_row(name + "_bwd", inputs, forward());
    };
    if (want("softmax_backward_32768x1024")) {
      Tensor x = randn({sized(32768, 32), 1024}, f32).requires_grad_();
      backward_row("softmax_backward_32768x1024", {x}, softmax(x, -1));
    }
    // cuDNN's TF32 off from here on, for the convolutions, the LSTM and the training steps
    // (PyTorch's side sets it off for every workload).
    cudnn::set_allow_tf32(false);
    if (either("conv2d_lenet2")) {  // LeNet's second convolution at batch 256, with its bias
      Tensor x = randn({sized(256, 2), 6, 12, 12}, f32).requires_grad_(),
             w = randn({16, 6, 5, 5}, f32).requires_grad_(), b = randn({16}, f32).requires_grad_();
      forward_backward("conv2d_lenet2", {x, w, b}, [&] { return conv2d(x, w, b); });
    }
    if (either("conv2d_resnet3x3")) {  // a 3x3 convolution of ResNet-18's first stage, no bias
      Tensor x = randn({sized(32, 2), 64, 56, 56}, f32).requires_grad_(),
             w = randn({64, 64, 3, 3}, f32).requires_grad_();
      forward_backward("conv2d_resnet3x3", {x, w}, [&] {
        return conv2d(x, w, Tensor(), {1, 1}, {1, 1});
      });
    }
    if (either("max_pool2d_3x3s2")) {  // ResNet's stem pooling
      Tensor x = randn({sized(32, 2), 64, 112, 112}, f32).requires_grad_();
      forward_backward("max_pool2d_3x3s2", {x}, [&] {
        return max_pool2d(x, {3, 3}, Pair{2, 2}, {1, 1});
      });
    }
    if (either("batch_norm_train")) {  // training-mode batch norm of ResNet's first stage, running
                                       // statistics updated
      Tensor x = randn({sized(32, 2), 64, 56, 56}, f32).requires_grad_(),
             w = ones({64}, f32).requires_grad_(), b = zeros({64}, f32).requires_grad_(),
             mean = zeros({64}, f32), var = ones({64}, f32);
      forward_backward("batch_norm_train", {x, w, b},
                       [&] { return batch_norm(x, mean, var, w, b, true); });
    }
  }
  // Sequence models: causal attention (batch 8 x 8 heads of 64; ember's fused kernel takes float32)
  // and layer norm over 4096 features.
  for (int64_t L : {1024, 4096}) {
    std::string name = "sdpa_causal_f32_L" + std::to_string(L);
    if (!want(name)) continue;
    int64_t n = sized(L, 64);
    Tensor q = randn({8, 8, n, 64}, f32), k = randn({8, 8, n, 64}, f32),
           v = randn({8, 8, n, 64}, f32);
    double ms = time_ms([&] { scaled_dot_product_attention(q, k, v, Tensor(), 0, true); }, 10);
    print(name, ms, "ms", 2e-12 * 8 * 8 * 2 * n * n * 64 / 2 / (ms * 1e-3), "TFLOP/s");
  }
  if (want("layer_norm_8192x4096")) {
    Tensor x = randn({sized(8192, 64), 4096}, f32), w = ones({4096}, f32), b = zeros({4096}, f32);
    double ms = time_ms([&] { layer_norm(x, 1, w, b, 1e-5); }, 20);
    print("layer_norm_8192x4096", ms, "ms", 2e-9 * x.numel() * 4 / (ms * 1e-3), "GB/s");
  }
  for (int64_t n : {4096, 8192}) {
    for (std::string kind : {"f32", "tf32", "bf16", "f16"}) {
      std::string name = "matmul_" + kind + "_" + std::to_string(n);
      if (!want(name)) continue;
      DType dt = kind == "bf16" ? kBFloat16 : (kind == "f16" ? kFloat16 : kFloat32);
      cuda::set_allow_tf32(kind == "tf32");
      int64_t m = sized(n, 64);
      Tensor a = randn({m, m}, f32).to(dt), b = randn({m, m}, f32).to(dt);
      double ms = time_ms([&] { mm(a, b); }, n == 8192 ? 5 : 20);
      print(name, ms, "ms", 2e-12 * static_cast<double>(m) * m * m / (ms * 1e-3), "TFLOP/s");
    }
  }
  cuda::set_allow_tf32(false);
  if (want("overhead_add_1")) {
    Tensor x = randn({1}, f32), y = randn({1}, f32);
    print("overhead_add_1", 1e3 * time_ms([&] { Tensor z = x + y; }, 10000), "us");
  }
  if (want("alloc_free")) {
    print("alloc_free_1M", 1e3 * time_ms([&] { Tensor t = empty({1 << 18}, f32); }, 10000), "us");
  }
  // Training steps in float32 and with mixed precision (train_step_ms).
  // Forward and backward of sequence layers: causal attention at L = 4096, and a 2-layer LSTM
  // of 512 over 35 steps of 64 sequences (both libraries through cuDNN, TF32 off in both).
  {
    AutoGradMode grad(true);
    if (want("sdpa_causal_f32_L4096_train")) {
      int64_t L = sized(4096, 64);
      Tensor q = randn({8, 8, L, 64}, f32).requires_grad_(),
             k = randn({8, 8, L, 64}, f32).requires_grad_(),
             v = randn({8, 8, L, 64}, f32).requires_grad_();
      double ms = time_ms(
          [&] { scaled_dot_product_attention(q, k, v, Tensor(), 0, true).sum().backward(); }, 5);
      print("sdpa_causal_f32_L4096_train", ms, "ms");
    }
    if (want("lstm_2x512_train")) {
      int64_t width = sized(512, 16);
      auto lstm = nn::make<nn::LSTM>(nn::RNNOptions(width, width).with_num_layers(2));
      lstm->to(gpu);
      Tensor x = randn({35, sized(64, 2), width}, f32).requires_grad_();
      print("lstm_2x512_train", time_ms([&] { lstm->forward(x).sum().backward(); }, 10), "ms");
    }
  }
  for (std::string precision : {"", "_amp_fp16", "_amp_bf16"}) {
    if (want("lenet_train_step_256" + precision))
      print("lenet_train_step_256" + precision,
            train_step_ms(nn::make<models::LeNet>(), sized(256, 2), 28, gpu, 20, precision), "ms");
    // ResNet-18 on one channel (models::resnet18_fashion_mnist): d2l's small stem at 28x28 (batch
    // 32 as on the CPU, and d2l's multi-GPU batch 256), torchvision's stem at 96x96.
    for (auto [batch, size] : {std::pair<int64_t, int64_t>{32, 28}, {256, 28}, {32, 96}}) {
      std::string name =
          "resnet18_train_step_" + std::to_string(batch) + "_" + std::to_string(size) + precision;
      if (want(name))
        print(name,
              train_step_ms(models::resnet18_fashion_mnist(size), sized(batch, 2), size, gpu, 10,
                            precision),
              "ms");
    }
  }
  return 0;
}
