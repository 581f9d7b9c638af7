// Fuzz target: `ember train`'s command line (the parser every subcommand uses, with train's
// options, ranges and device lists). Arguments are the input split at NUL bytes.
#include <vector>

#include "ember/core/error.h"
#include "tests/fuzz/fuzz_input.h"
#include "tools/ember/training.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0)
      words.emplace_back();
    else
      words.back() += static_cast<char>(data[i]);
  }
  if (size == 0) words.clear();
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  try {
    cli::TrainConfig cfg = cli::parse_train_args(static_cast<int>(argv.size()), argv.data());
    if (cfg.epochs < 1 || cfg.batch_size < 1 || cfg.workers < 0 || cfg.threads < 0)
      fuzz::fail("an out-of-range number was accepted");
    cli::pick_device(cfg.device);
  } catch (const Error&) {
  }
  return 0;
}
