// ember against libtorch (Debian's 1.13) on the same workloads, in one process, on 1 and on 2
// threads. One JSON object per line: {"name", "threads", "ember", "libtorch", "unit", "ratio"},
// ratio = ember's time / libtorch's time (lower is better). `make bench` prints them as a table.
//
// Both libraries get the same thread count. OpenBLAS is shared: libtorch gets it with `threads`
// threads (its default behaviour), ember keeps it at one thread and splits work on its own pool.
#include <ATen/autocast_mode.h>
#include <cblas.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <cstring>
#include <iostream>
#include <map>

#include "bench/harness.h"
#include "ember/ember.h"

namespace {

struct Workload {
  std::string name;
  std::string unit;       // "ms" or "us" per call (per op for the *_per_op workloads)
  double per_call_scale;  // seconds -> unit, divided by ops per call
  std::function<void()> ember;
  std::function<void()> torch;
};

volatile double g_sink = 0;

// The same networks in libtorch (torch::nn), for the training-step workloads.
struct TorchLeNet : torch::nn::Module {
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
  TorchLeNet() {
    conv1 = register_module("conv1", torch::nn::Conv2d(1, 6, 5));
    conv2 = register_module("conv2", torch::nn::Conv2d(6, 16, 5));
    fc1 = register_module("fc1", torch::nn::Linear(256, 120));
    fc2 = register_module("fc2", torch::nn::Linear(120, 84));
    fc3 = register_module("fc3", torch::nn::Linear(84, 10));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
    x = x.flatten(1);
    return fc3->forward(torch::relu(fc2->forward(torch::relu(fc1->forward(x)))));
  }
};

struct TorchMLP : torch::nn::Module {
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
  TorchMLP() {
    fc1 = register_module("fc1", torch::nn::Linear(784, 256));
    fc2 = register_module("fc2", torch::nn::Linear(256, 256));
    fc3 = register_module("fc3", torch::nn::Linear(256, 10));
  }
  torch::Tensor forward(torch::Tensor x) {
    return fc3->forward(torch::relu(fc2->forward(torch::relu(fc1->forward(x)))));
  }
};

// torchvision's ResNet-18 (BasicBlock) in libtorch, with ember's two stems (models/resnet.h).
struct TorchBasicBlock : torch::nn::Module {
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential downsample{nullptr};
  TorchBasicBlock(int64_t in, int64_t planes, int64_t stride) {
    using O = torch::nn::Conv2dOptions;
    conv1 = register_module(
        "conv1", torch::nn::Conv2d(O(in, planes, 3).stride(stride).padding(1).bias(false)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(planes));
    conv2 =
        register_module("conv2", torch::nn::Conv2d(O(planes, planes, 3).padding(1).bias(false)));
    bn2 = register_module("bn2", torch::nn::BatchNorm2d(planes));
    if (stride != 1 || in != planes)
      downsample = register_module(
          "downsample",
          torch::nn::Sequential(torch::nn::Conv2d(O(in, planes, 1).stride(stride).bias(false)),
                                torch::nn::BatchNorm2d(planes)));
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor out = torch::relu(bn1->forward(conv1->forward(x)));
    out = bn2->forward(conv2->forward(out));
    out += downsample ? downsample->forward(x) : x;
    return torch::relu(out);
  }
};

struct TorchResNet18 : torch::nn::Module {
  bool small;
  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  std::vector<std::shared_ptr<TorchBasicBlock>> blocks;
  torch::nn::Linear fc{nullptr};
  TorchResNet18(int64_t in_channels, int64_t classes, bool small_stem) : small(small_stem) {
    using O = torch::nn::Conv2dOptions;
    conv1 = register_module(
        "conv1", torch::nn::Conv2d(small ? O(in_channels, 64, 3).padding(1).bias(false)
                                         : O(in_channels, 64, 7).stride(2).padding(3).bias(false)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(64));
    int64_t in = 64;
    for (int64_t planes : {64, 128, 256, 512})
      for (int i = 0; i < 2; ++i) {
        int64_t stride = i == 0 && planes != 64 ? 2 : 1;
        blocks.push_back(register_module("block" + std::to_string(blocks.size()),
                                         std::make_shared<TorchBasicBlock>(in, planes, stride)));
        in = planes;
      }
    fc = register_module("fc", torch::nn::Linear(512, classes));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn1->forward(conv1->forward(x)));
    if (!small) x = torch::max_pool2d(x, 3, 2, 1);
    for (auto& b : blocks) x = b->forward(x);
    return fc->forward(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }
};

// What torch.autocast("cpu", torch.bfloat16) does on entry and exit; `on` false: nothing.
struct TorchAutocast {
  bool on;
  explicit TorchAutocast(bool on) : on(on) {
    if (!on) return;
    at::autocast::set_cpu_enabled(true);
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::increment_nesting();
  }
  ~TorchAutocast() {
    if (!on) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_cpu_enabled(false);
  }
};

// One training step; with `amp`, the forward and the loss run in CPU bfloat16 autocast (the
// backward and the step outside it, as PyTorch's recipe has it).
template <typename M>
void torch_step(M& model, torch::optim::SGD& opt, const torch::Tensor& x, const torch::Tensor& y,
                bool amp = false) {
  torch::AutoGradMode grad(true);
  torch::Tensor loss;
  {
    TorchAutocast region(amp);
    loss = torch::nn::functional::cross_entropy(model.forward(x), y);
  }
  opt.zero_grad();
  loss.backward();
  opt.step();
}

void ember_step(ember::nn::Module& model, ember::optim::SGD& opt, const ember::Tensor& x,
                const ember::Tensor& y, bool amp = false) {
  ember::AutoGradMode grad(true);
  ember::Tensor loss;
  {
    ember::amp::autocast region(ember::kCPU, std::nullopt, amp);
    loss = ember::nn::functional::cross_entropy(model.forward(x), y);
  }
  opt.zero_grad();
  loss.backward();
  opt.step();
}

// LeNet-5, SGD (momentum 0.9) and a batch of 256 in each library: the LeNet step rows' setup.
struct LeNetPair {
  std::shared_ptr<ember::models::LeNet> em;
  std::shared_ptr<ember::optim::SGD> eopt;
  ember::Tensor ex, ey;
  std::shared_ptr<TorchLeNet> tm;
  std::shared_ptr<torch::optim::SGD> topt;
  torch::Tensor tx, ty;
};

LeNetPair make_lenet_pair() {
  LeNetPair l;
  l.em = ember::nn::make<ember::models::LeNet>();
  l.eopt = std::make_shared<ember::optim::SGD>(l.em->parameters(),
                                               ember::optim::SGDOptions(0.01).with_momentum(0.9));
  l.ex = ember::randn({256, 1, 28, 28});
  l.ey = ember::randint(0, 10, {256});
  l.tm = std::make_shared<TorchLeNet>();
  l.topt = std::make_shared<torch::optim::SGD>(l.tm->parameters(),
                                               torch::optim::SGDOptions(0.01).momentum(0.9));
  l.tx = torch::randn({256, 1, 28, 28});
  l.ty = torch::randint(0, 10, {256});
  return l;
}

std::vector<Workload> make_workloads(const std::string& filter) {
  std::vector<Workload> w;
  auto want = [&](const std::string& name) {
    return filter.empty() || name.find(filter) != std::string::npos;
  };

  for (int64_t n : {256, 1024, 2048}) {
    std::string name = "matmul_" + std::to_string(n);
    if (!want(name)) continue;
    auto ea = ember::randn({n, n}), eb = ember::randn({n, n});
    auto ta = torch::randn({n, n}), tb = torch::randn({n, n});
    w.push_back({name, "ms", 1e3, [=] { ember::mm(ea, eb); }, [=] { torch::mm(ta, tb); }});
  }
  // bfloat16 products: what CPU autocast runs matmul in (libtorch: oneDNN's bf16 GEMM).
  for (int64_t n : {256, 1024}) {
    std::string name = "matmul_bf16_" + std::to_string(n);
    if (!want(name)) continue;
    auto ea = ember::randn({n, n}).to(ember::kBFloat16),
         eb = ember::randn({n, n}).to(ember::kBFloat16);
    auto ta = torch::randn({n, n}, torch::kBFloat16), tb = torch::randn({n, n}, torch::kBFloat16);
    w.push_back({name, "ms", 1e3, [=] { ember::mm(ea, eb); }, [=] { torch::mm(ta, tb); }});
  }
  const int64_t N = 16 << 20;
  if (want("add_out_of_place_16M")) {
    auto ea = ember::randn({N}), eb = ember::randn({N});
    auto ta = torch::randn({N}), tb = torch::randn({N});
    w.push_back({"add_out_of_place_16M", "ms", 1e3, [=] { ember::Tensor c = ea + eb; },
                 [=] { torch::Tensor c = ta + tb; }});
  }
  if (want("add_out_16M")) {
    auto ea = ember::randn({N}), eb = ember::randn({N});
    auto ec = ember::empty({N});
    auto ta = torch::randn({N}), tb = torch::randn({N});
    auto tc = torch::empty({N});
    w.push_back({"add_out_16M", "ms", 1e3, [=]() mutable { ember::add_out(ec, ea, eb); },
                 [=]() mutable { torch::add_out(tc, ta, tb); }});
  }
  if (want("add_inplace_16M")) {
    auto ea = ember::randn({N}), eb = ember::randn({N}).mul_(1e-9);
    auto ta = torch::randn({N}), tb = torch::randn({N}).mul_(1e-9);
    w.push_back({"add_inplace_16M", "ms", 1e3, [=]() mutable { ea.add_(eb); },
                 [=]() mutable { ta.add_(tb); }});
  }
  for (int64_t n : {1, 64}) {
    std::string name = "overhead_add_" + std::to_string(n);
    if (!want(name)) continue;
    auto ex = ember::randn({n}), ey = ember::randn({n});
    auto tx = torch::randn({n}), ty = torch::randn({n});
    w.push_back(
        {name, "us", 1e6, [=] { ember::Tensor z = ex + ey; }, [=] { torch::Tensor z = tx + ty; }});
  }
  if (want("sum_16M")) {
    auto ex = ember::randn({N});
    auto tx = torch::randn({N});
    w.push_back({"sum_16M", "ms", 1e3, [=] { g_sink = g_sink + ember::sum(ex).item<float>(); },
                 [=] { g_sink = g_sink + tx.sum().item<float>(); }});
  }
  if (want("softmax_4096x1024")) {
    auto ex = ember::randn({4096, 1024});
    auto tx = torch::randn({4096, 1024});
    w.push_back({"softmax_4096x1024", "ms", 1e3, [=] { ember::softmax(ex, -1); },
                 [=] { torch::softmax(tx, -1); }});
  }
  if (want("conv2d_lenet2_fwd")) {
    auto ex = ember::randn({256, 6, 12, 12}), ew = ember::randn({16, 6, 5, 5}),
         eb = ember::randn({16});
    auto tx = torch::randn({256, 6, 12, 12}), tw = torch::randn({16, 6, 5, 5}),
         tb = torch::randn({16});
    w.push_back({"conv2d_lenet2_fwd", "ms", 1e3, [=] { ember::conv2d(ex, ew, eb); },
                 [=] { torch::conv2d(tx, tw, tb); }});
  }
  if (want("conv2d_lenet2_fwd_bf16")) {
    auto ex = ember::randn({256, 6, 12, 12}).to(ember::kBFloat16),
         ew = ember::randn({16, 6, 5, 5}).to(ember::kBFloat16),
         eb = ember::randn({16}).to(ember::kBFloat16);
    auto tx = torch::randn({256, 6, 12, 12}, torch::kBFloat16),
         tw = torch::randn({16, 6, 5, 5}, torch::kBFloat16),
         tb = torch::randn({16}, torch::kBFloat16);
    w.push_back({"conv2d_lenet2_fwd_bf16", "ms", 1e3, [=] { ember::conv2d(ex, ew, eb); },
                 [=] { torch::conv2d(tx, tw, tb); }});
  }
  // Training steps: forward, cross-entropy, backward, SGD step (momentum 0.9) at batch 256;
  // *_bf16_autocast: the forward in CPU bfloat16 autocast.
  for (bool amp : {false, true}) {
    std::string suffix = amp ? "_bf16_autocast" : "";
    if (want("lenet_train_step_256" + suffix)) {
      LeNetPair l = make_lenet_pair();
      w.push_back({"lenet_train_step_256" + suffix, "ms", 1e3,
                   [=] { ember_step(*l.em, *l.eopt, l.ex, l.ey, amp); },
                   [=] { torch_step(*l.tm, *l.topt, l.tx, l.ty, amp); }});
    }
    // The same step with each library's profiler recording it (ember::profiler::Profile; torch's
    // CPU profiler, what torch.autograd.profiler.profile() runs), one profile per step: set
    // beside lenet_train_step_256, the cost of profiling.
    if (!amp && want("lenet_train_step_256_profiled")) {
      LeNetPair l = make_lenet_pair();
      w.push_back({"lenet_train_step_256_profiled", "ms", 1e3,
                   [=] {
                     ember::profiler::Profile profile;
                     profile.start();
                     ember_step(*l.em, *l.eopt, l.ex, l.ey);
                     profile.stop();
                     g_sink = g_sink + static_cast<double>(profile.events().size());
                   },
                   [=] {
                     namespace tp = torch::autograd::profiler;
                     tp::enableProfilerLegacy(tp::ProfilerConfig(tp::ProfilerState::CPU));
                     torch_step(*l.tm, *l.topt, l.tx, l.ty);
                     tp::thread_event_lists events = tp::disableProfilerLegacy();
                     g_sink = g_sink + static_cast<double>(events.size());
                   }});
    }
    if (want("mlp_train_step_256" + suffix)) {
      auto em = ember::nn::make<ember::models::MLP>(std::vector<int64_t>{784, 256, 256, 10});
      auto eopt = std::make_shared<ember::optim::SGD>(
          em->parameters(), ember::optim::SGDOptions(0.01).with_momentum(0.9));
      auto ex = ember::randn({256, 784});
      auto ey = ember::randint(0, 10, {256});
      auto tm = std::make_shared<TorchMLP>();
      auto topt = std::make_shared<torch::optim::SGD>(tm->parameters(),
                                                      torch::optim::SGDOptions(0.01).momentum(0.9));
      auto tx = torch::randn({256, 784});
      auto ty = torch::randint(0, 10, {256});
      w.push_back({"mlp_train_step_256" + suffix, "ms", 1e3,
                   [=] { ember_step(*em, *eopt, ex, ey, amp); },
                   [=] { torch_step(*tm, *topt, tx, ty, amp); }});
    }
  }
  // ResNet-18 on one channel at batch 32: d2l's small stem at 28x28, torchvision's at 96x96;
  // *_bf16_autocast: the forward in CPU bfloat16 autocast.
  for (bool amp : {false, true})
    for (int64_t size : {28, 96}) {
      std::string name =
          "resnet18_train_step_32_" + std::to_string(size) + (amp ? "_bf16_autocast" : "");
      if (!want(name)) continue;
      auto em = ember::models::resnet18_fashion_mnist(size);
      auto eopt = std::make_shared<ember::optim::SGD>(
          em->parameters(), ember::optim::SGDOptions(0.01).with_momentum(0.9));
      auto ex = ember::randn({32, 1, size, size});
      auto ey = ember::randint(0, 10, {32});
      auto tm = std::make_shared<TorchResNet18>(1, 10, size <= 32);
      auto topt = std::make_shared<torch::optim::SGD>(tm->parameters(),
                                                      torch::optim::SGDOptions(0.01).momentum(0.9));
      auto tx = torch::randn({32, 1, size, size});
      auto ty = torch::randint(0, 10, {32});
      w.push_back({name, "ms", 1e3, [=] { ember_step(*em, *eopt, ex, ey, amp); },
                   [=] { torch_step(*tm, *topt, tx, ty, amp); }});
    }
  // 100 small elementwise ops on 10 elements, forward and backward: autograd's overhead per op.
  if (want("autograd_chain_100")) {
    auto ex = ember::randn({10}).requires_grad_();
    auto tx = torch::randn({10}).requires_grad_();
    w.push_back({"autograd_chain_100", "us", 1e6 / 100,
                 [=] {
                   ember::AutoGradMode grad(true);
                   ember::Tensor y = ex;
                   for (int i = 0; i < 100; ++i) y = i % 2 ? y + 0.01 : y * 1.01;
                   y.sum().backward();
                 },
                 [=] {
                   torch::AutoGradMode grad(true);
                   torch::Tensor y = tx;
                   for (int i = 0; i < 100; ++i) y = i % 2 ? y + 0.01 : y * 1.01;
                   y.sum().backward();
                 }});
  }
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  std::string filter;
  std::vector<int> threads = {1, 2};
  bench::Options options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--filter=", 0) == 0)
      filter = a.substr(9);
    else if (a.rfind("--threads=", 0) == 0)
      threads = bench::parse_threads(a.substr(10));
    else if (a.rfind("--repeats=", 0) == 0)
      options.repeats = std::stoi(a.substr(10));
    else {
      std::cerr << "usage: ember-vs-libtorch [--filter=SUBSTRING] [--threads=1,2] [--repeats=N]\n";
      return 2;
    }
  }
  try {
    torch::NoGradGuard torch_no_grad;
    for (int t : threads) {
      ember::set_num_threads(t);
      at::set_num_threads(t);
      std::vector<Workload> workloads = make_workloads(filter);
      for (const Workload& w : workloads) {
        bench::Result r = bench::compare(
            w.ember, w.torch, [] { openblas_set_num_threads(1); },
            [t] { openblas_set_num_threads(t); }, options);
        bench::print_json(w.name, t, r.ember * w.per_call_scale, r.libtorch * w.per_call_scale,
                          w.unit);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "ember-vs-libtorch: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
