#include "tools/ember/training.h"

#include <chrono>
#include <filesystem>
#include <iostream>

#include "ember/ember.h"

namespace ember::cli {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Device pick_device(const std::string& spec) {
  if (spec == "auto") return cuda::is_available() ? Device(kCUDA, 0) : Device(kCPU, 0);
  return resolve_device(Device(spec));
}

MnistSets load_fashion_mnist(const std::string& root, int64_t resize) {
  using data::datasets::MNIST;
  data::datasets::MNISTOptions train, test;
  test.train = false;
  train.resize = test.resize = resize;
  return {std::make_shared<MNIST>(root, train), std::make_shared<MNIST>(root, test)};
}

std::shared_ptr<nn::Module> make_model(const std::string& name, int64_t image_size) {
  if (name == "lenet" || name == "mlp")
    EMBER_CHECK(image_size == 28, "--model ", name,
                " takes 28x28 images; --resize is for resnet18");
  if (name == "lenet") return nn::make<models::LeNet>();
  if (name == "mlp") return nn::make<models::MLP>(std::vector<int64_t>{784, 256, 256, 10});
  if (name == "resnet18") return models::resnet18_fashion_mnist(image_size);
  EMBER_FAIL("unknown model '", name, "' (expected lenet, mlp or resnet18)");
}

std::string model_kind(const nn::NamedTensors& state) {
  for (auto& [name, t] : state)
    if (name == "layer1.0.conv1.weight") return "resnet18";
  for (auto& [name, t] : state)
    if (name == "conv1.weight") return "lenet";
  for (auto& [name, t] : state)
    if (name == "fc1.weight" && t.dim() == 2 && t.size(1) == 784) return "mlp";
  EMBER_FAIL(
      "the state dict is neither a LeNet (conv1.weight, ...), an MLP (fc1.weight of 784 "
      "inputs) nor a ResNet-18 (layer1.0.conv1.weight, ...)");
}

Evaluation evaluate(nn::Module& model, const data::Dataset& dataset, Device device,
                    int64_t batch_size, double temperature) {
  NoGradGuard no_grad;
  bool was_training = model.is_training();
  model.eval();
  auto t0 = std::chrono::steady_clock::now();
  Tensor loss_sum = zeros({}, TensorOptions(kFloat64).with_device(device));
  Tensor hits = zeros({}, TensorOptions(kInt64).with_device(device));
  size_t n = dataset.size();
  for (size_t start = 0; start < n; start += static_cast<size_t>(batch_size)) {
    std::vector<size_t> idx;
    for (size_t i = start; i < std::min(n, start + static_cast<size_t>(batch_size)); ++i)
      idx.push_back(i);
    data::Example b = dataset.get_batch(idx);
    Tensor x = b.data.to(device), y = b.target.to(device);
    Tensor logits = model.forward(x);
    if (temperature != 1.0) logits = logits / temperature;
    loss_sum.add_(
        nn::functional::cross_entropy(logits, y, Tensor(), -100, nn::functional::Reduction::Sum)
            .to(kFloat64));
    hits.add_(eq(argmax(logits, 1), y).sum());
  }
  Evaluation e;
  e.samples = static_cast<int64_t>(n);
  e.loss = n ? loss_sum.item<double>() / static_cast<double>(n) : 0;
  e.accuracy = n ? static_cast<double>(hits.item<int64_t>()) / static_cast<double>(n) : 0;
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  model.train(was_training);
  return e;
}

std::unique_ptr<profiler::Profile> start_training_profile(const TrainConfig& cfg,
                                                          std::vector<profiler::Event>& profiled) {
  if (cfg.profile_steps <= 0) return nullptr;
  std::string trace = (std::filesystem::path(cfg.out) / "trace.json").string();
  profiler::ProfileOptions po;
  po.record_shapes = true;
  po.profile_memory = true;
  // On a GPU, the kernels too (CUPTI, on the GPU's own lanes of the trace and the timeline).
  if (cuda::is_available()) po.activities.push_back(profiler::ProfilerActivity::CUDA);
  po.schedule = profiler::Schedule{0, 1, static_cast<int>(cfg.profile_steps), 1, 0};
  po.on_trace_ready = [trace, &profiled, steps = cfg.profile_steps](profiler::Profile& p) {
    p.export_chrome_trace(trace);
    profiled = p.events();
    std::cerr << "ember train: profiled " << steps << " steps, " << profiled.size()
              << " events: " << trace << "\n";
  };
  auto profile = std::make_unique<profiler::Profile>(std::move(po));
  profile->start();
  return profile;
}

}  // namespace ember::cli
