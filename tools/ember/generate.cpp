// `ember generate`: text from a GPT that `ember train --model gpt` trained, one token at a time
// from softmax(logits / temperature), kept to the top-k most likely.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "ember/ember.h"
#include "tools/ember/args.h"
#include "tools/ember/commands.h"
#include "tools/ember/train_gpt.h"

namespace ember::cli {

int generate(int argc, char** argv) {
  Args args(argc, argv,
            {"model", "prompt", "tokens", "temperature", "top-k", "seed", "device", "samples",
             "threads"},
            {"help"});
  if (args.flag("help") || !args.has("model")) {
    std::cout << "usage: ember generate --model FILE [--prompt TEXT] [--tokens 500]\n"
                 "                      [--temperature 0.8] [--top-k 200] [--samples 1]\n"
                 "                      [--seed 1337] [--device D] [--threads N]\n\n"
                 "  FILE is the model.safetensors of `ember train --model gpt`; the prompt\n"
                 "  (default a newline) uses its characters; --top-k 0 keeps every token.\n";
    return args.flag("help") ? 0 : 2;
  }
  int64_t tokens = args.integer("tokens", 500, 0, int64_t{1} << 30);
  double temperature = args.number("temperature", 0.8);
  EMBER_CHECK(temperature > 0, "--temperature must be positive, got ", temperature);
  int64_t top_k = args.integer("top-k", 200, 0, int64_t{1} << 30);
  int64_t samples = args.integer("samples", 1, 1, 1 << 20);
  if (args.has("threads")) set_num_threads(static_cast<int>(args.integer("threads", 1, 1, 4096)));
  manual_seed(static_cast<uint64_t>(args.integer("seed", 1337, 0)));
  Device device = pick_device(args.str("device", "auto"));
  TrainedGPT trained = load_trained_gpt(args.str("model", ""));
  trained.model->to(device);
  std::string prompt = args.str("prompt", "\n");
  EMBER_CHECK(!prompt.empty(), "--prompt must not be empty");
  Tensor context = trained.vocab.encode(prompt).view({1, -1}).to(device);
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t s = 0; s < samples; ++s) {
    Tensor out = trained.model->generate(context, tokens, temperature,
                                         top_k > 0 ? std::optional<int64_t>(top_k) : std::nullopt);
    std::string text = trained.vocab.decode(out);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::printf("\n%s", s + 1 < samples ? "---------------\n" : "");
  }
  std::fflush(stdout);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "ember generate: %lld tokens in %.2f s (%.0f tokens/s) on %s\n",
               static_cast<long long>(tokens * samples), seconds,
               static_cast<double>(tokens * samples) / std::max(seconds, 1e-9),
               device.str().c_str());
  return 0;
}

}  // namespace ember::cli
