// What `ember train`, `predict` and `bench` share: configurations, device choice, models,
// evaluation.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/data/dataset.h"
#include "ember/data/mnist.h"
#include "ember/nn/module.h"
#include "ember/profiler/profiler.h"

namespace ember::cli {

struct TrainConfig {
  std::string model = "lenet";
  int64_t resize = 0;  // --resize S: images resized to S x S (bilinear), 0: as they are (28 x 28)
  std::string data;
  std::string device = "auto";
  int64_t epochs = 1;
  int64_t batch_size = 64;  // with --nproc: per rank (default 64 / N, the same global batch)
  double lr = 0.01;
  double momentum = 0.9;
  uint64_t seed = 0;
  int64_t workers = 1;
  std::string out = ".";
  int threads = 0;              // 0: keep the default (all cores)
  std::vector<Device> devices;  // --devices: DataParallel over these
  int hogwild = 0;              // --hogwild N: N processes train one shared model
  int nproc = 0;                // --nproc N: DistributedDataParallel over N processes
  int master_port = 0;          // with --nproc: the rendezvous port (0: a random one)
  // --fsdp full|grad-op with --model gpt and --nproc: FSDP instead of DDP (FULL_SHARD or
  // SHARD_GRAD_OP, each block a unit, parameters sharded one by one as FSDP2 does).
  std::string fsdp;

  // With --nproc (train_resume.h).
  bool resume = false;             // resume from and keep out/checkpoint.safetensors
  int64_t checkpoint_every = 100;  // with --resume: steps between checkpoints
  std::string events;              // rank 0's JSON lines of steps, checkpoints and restarts

  std::optional<DType> amp;     // --amp bf16|fp16: autocast's dtype (fp16 adds a GradScaler)
  int64_t profile_steps = 0;    // --profile[=N]: training steps profiled (default 5), 0: none
  bool help = false;

  // --model gpt (train_gpt.h): nanoGPT's CPU recipe for shakespeare_char by default.
  struct GPT {
    int64_t iters = 2000;  // optimizer steps
    int64_t block_size = 64;
    int64_t n_layer = 4, n_head = 4, n_embd = 128;
    double dropout = 0.0;
    double weight_decay = 0.1;
    double grad_clip = 1.0;  // 0: none
    int64_t warmup = 100;    // iterations of linear warm-up, then cosine decay to lr / 10
    int64_t eval_interval = 250;
    int64_t eval_iters = 20;  // batches per split in each evaluation
  } gpt;
};

/// `ember train`'s command line, parsed and checked, with no side effects (also the fuzz target's
/// entry point).
TrainConfig parse_train_args(int argc, char** argv);

/// --profile: a profile of cfg.profile_steps training steps after one warm-up step, recording
/// shapes and memory (null without --profile). Call step() after each training step; when the
/// profiled steps end, OUT/trace.json is written and their events go to `profiled`.
std::unique_ptr<profiler::Profile> start_training_profile(const TrainConfig& cfg,
                                                          std::vector<profiler::Event>& profiled);

/// Seconds on the steady clock, for timing epochs.
double now();

/// "auto": the first GPU if there is one, else the CPU; anything else is parsed and checked.
Device pick_device(const std::string& spec);

/// The training and test sets of Fashion-MNIST (or MNIST) in `root`.
struct MnistSets {
  std::shared_ptr<data::datasets::MNIST> train, test;
};
/// `resize` > 0: images resized to resize x resize.
MnistSets load_fashion_mnist(const std::string& root, int64_t resize = 0);

/// "lenet", "mlp" (784-256-256-10) or "resnet18" (d2l's ResNet-18 for images of image_size);
/// `ember train --model gpt` builds its GPT itself (train_gpt.h).
std::shared_ptr<nn::Module> make_model(const std::string& name, int64_t image_size = 28);
/// The architecture a state dict was saved from ("lenet", "mlp" or "resnet18").
std::string model_kind(const nn::NamedTensors& state);

struct Evaluation {
  double loss = 0;
  double accuracy = 0;
  double seconds = 0;
  int64_t samples = 0;
};

/// Mean cross-entropy and accuracy over the whole dataset, in eval mode, without gradients.
Evaluation evaluate(nn::Module& model, const data::Dataset& dataset, Device device,
                    int64_t batch_size, double temperature = 1.0);

}  // namespace ember::cli
