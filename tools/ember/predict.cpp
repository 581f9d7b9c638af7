// `ember predict`: a trained model classifies the test set; probabilities are softmax(logits / T).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ember/ember.h"
#include "tools/ember/args.h"
#include "tools/ember/commands.h"
#include "tools/ember/training.h"

namespace ember::cli {

int predict(int argc, char** argv) {
  Args args(argc, argv, {"model", "data", "temperature", "device", "batch-size", "threads"},
            {"help"});
  if (args.flag("help") || !args.has("model")) {
    std::cout << "usage: ember predict --model FILE [--data DIR] [--temperature 0.6] [--device D]\n"
                 "                     [--batch-size 512] [--threads N]\n";
    return args.flag("help") ? 0 : 2;
  }
  double temperature = args.number("temperature", 0.6);
  EMBER_CHECK(temperature > 0, "--temperature must be positive, got ", temperature);
  int64_t batch = args.integer("batch-size", 512, 1, int64_t{1} << 31);
  if (args.has("threads")) set_num_threads(static_cast<int>(args.integer("threads", 1, 1, 4096)));
  Device device = pick_device(args.str("device", "auto"));
  io::SafetensorsFile file = io::load_safetensors(args.str("model", ""));
  // `ember train --resize S` records S: the model was trained on, and takes, S x S images.
  int64_t resize = 0;
  if (auto it = file.metadata.find("resize"); it != file.metadata.end()) {
    char* end = nullptr;
    resize = std::strtoll(it->second.c_str(), &end, 10);
    EMBER_CHECK(!it->second.empty() && *end == '\0' && resize >= 0 && resize <= 4096,
                "[predict] the checkpoint's resize metadata is '", it->second,
                "', expected 0 to 4096");
  }
  std::shared_ptr<nn::Module> model = make_model(model_kind(file.tensors), resize ? resize : 28);
  model->load_state_dict(file.tensors);
  model->to(device);
  model->eval();
  data::datasets::MNISTOptions options;
  options.train = false;
  options.resize = resize;
  data::datasets::MNIST test(args.str("data", data::datasets::kFashionMnistDir), options);

  NoGradGuard no_grad;
  auto t0 = std::chrono::steady_clock::now();
  Tensor hits = zeros({}, TensorOptions(kInt64).with_device(device));
  Tensor confidence = zeros({}, TensorOptions(kFloat64).with_device(device));
  for (size_t start = 0; start < test.size(); start += static_cast<size_t>(batch)) {
    std::vector<size_t> idx;
    for (size_t i = start; i < std::min(test.size(), start + static_cast<size_t>(batch)); ++i)
      idx.push_back(i);
    data::Example b = test.get_batch(idx);
    Tensor x = b.data.to(device), y = b.target.to(device);
    Tensor probs = softmax(model->forward(x) / temperature, 1);
    auto [p, label] = probs.max(1);
    hits.add_(eq(label, y).sum());
    confidence.add_(p.sum().to(kFloat64));
  }
  double accuracy = static_cast<double>(hits.item<int64_t>()) / static_cast<double>(test.size());
  double mean_conf = confidence.item<double>() / static_cast<double>(test.size());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double rate = static_cast<double>(test.size()) / seconds;
  std::printf(
      "%zu test images on %s: accuracy %.2f%%, mean confidence %.3f at temperature %.2f, "
      "%.0f images/s\n",
      test.size(), device.str().c_str(), 100 * accuracy, mean_conf, temperature, rate);
  nlohmann::json out = {{"device", device.str()},       {"samples", test.size()},
                        {"accuracy", accuracy},         {"temperature", temperature},
                        {"mean_confidence", mean_conf}, {"samples_per_second", rate}};
  std::cout << out.dump() << std::endl;
  return 0;
}

}  // namespace ember::cli
