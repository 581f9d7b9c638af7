// ember: device report, training, inference and the guides' claims measured, from the shell.
#include <cstring>
#include <iostream>
#include <string>

#include "ember/core/error.h"
#include "ember/distributed/error_file.h"
#include "tools/ember/commands.h"

namespace {
const char* kUsage = R"(usage: ember <command> [options]

commands:
  info [--json]         the CPU and every GPU: properties, memory, visibility, versions
  train [options]       train LeNet-5 (or an MLP, ResNet-18) on Fashion-MNIST on the best device,
                        or a GPT on text (--model gpt)
  predict --model FILE  classify the test set with a trained model: softmax(logits / T)
  generate --model FILE text from a trained GPT: softmax(logits / T), top-k
  bench [--json]        the GPU guides' claims, measured on this machine
  launch [options] PROG start the ranks of a distributed job on this machine (like torchrun)

`ember <command> --help` lists the options of a command.
)";
}

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "info") return ember::cli::info(argc - 2, argv + 2);
    if (cmd == "train") return ember::cli::train(argc - 2, argv + 2);
    if (cmd == "predict") return ember::cli::predict(argc - 2, argv + 2);
    if (cmd == "generate") return ember::cli::generate(argc - 2, argv + 2);
    if (cmd == "bench") return ember::cli::bench(argc - 2, argv + 2);
    if (cmd == "launch") return ember::cli::launch(argc - 2, argv + 2);
    std::cerr << "ember: unknown command '" << cmd << "'\n\n" << kUsage;
    return 2;
  } catch (const ember::Error& e) {
    ember::distributed::record_error(e.what());  // for an elastic agent's report
    std::cerr << "ember " << cmd << ": " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    ember::distributed::record_error(e.what());
    std::cerr << "ember " << cmd << ": unexpected error: " << e.what() << "\n";
    return 1;
  }
}
