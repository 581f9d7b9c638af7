// `ember train`: LeNet-5 (or an MLP) on Fashion-MNIST on the best device, with a progress bar,
// per-epoch loss, accuracy and throughput, a checkpoint, metrics.jsonl and report.html.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ember/ember.h"
#include "tools/ember/args.h"
#include "tools/ember/commands.h"
#include "tools/ember/hogwild.h"
#include "tools/ember/report.h"
#include "tools/ember/train_ddp.h"
#include "tools/ember/train_gpt.h"
#include "tools/ember/training.h"

namespace ember::cli {
namespace {

using json = nlohmann::json;
namespace F = nn::functional;

const char* kHelp = R"(usage: ember train [options]

  --model lenet|mlp|resnet18|gpt
                          LeNet-5 (default), an MLP 784-256-256-10, or ResNet-18 (d2l's: a 3x3
                          stem at 28x28, torchvision's 7x7 stem and max-pool with --resize 96) on
                          Fashion-MNIST; or a GPT on a text file (below)
  --resize S              resize the images to S x S, bilinearly (resnet18 only)
  --data DIR              Fashion-MNIST IDX files (default /usr/share/datasets/fashion-mnist)
  --device D              auto (default: the best GPU, else the CPU), cpu, cuda, cuda:N
  --epochs N              passes over the training set (default 1)
  --batch-size N          (default 64; with --nproc N, per rank: default 64 / N)
  --lr F                  SGD learning rate (default 0.01)
  --momentum F            SGD momentum (default 0.9)
  --seed N                initialisation and shuffling (default 0)
  --devices LIST          data parallelism over several devices, e.g. cuda:0,cuda:1 or cpu:0,cpu:1
                          (virtual CPU devices with EMBER_CPU_DEVICES=N); the model lives on the first
  --nproc N               DistributedDataParallel over N local processes (Gloo on the CPU), each
                          with threads/N threads unless --threads
  --master-port P         with --nproc: the rendezvous port (default: a random one in 20000-31999)
  --resume                with --nproc: resume from DIR/checkpoint.safetensors when it is there
                          (with any number of ranks), and keep it current; for restarts by
                          `ember launch --max-restarts` (elastic), run as its PROGRAM
  --checkpoint-every N    with --resume: optimizer steps between checkpoints (default 100; also
                          at each epoch's end)
  --events FILE           with --nproc: rank 0 appends a JSON line per step, checkpoint and start
  --threads N             CPU threads (default: all cores)
  --hogwild N             Hogwild: N processes train one shared model, each on 1/N of the data
                          with threads/N threads (CPU only)
  --workers N             DataLoader threads preparing batches (default 1)
  --amp bf16|fp16         mixed precision: forward and loss under autocast in that dtype; fp16
                          scales the loss (GradScaler) and skips steps whose gradients overflow
  --out DIR               where model.safetensors, metrics.jsonl, report.html go (default .)
  --profile[=N]           profile N training steps (default 5) after one warm-up step: DIR/trace.json
                          (chrome://tracing, Perfetto) and, in report.html, the top ops, a
                          timeline of the last profiled step and memory over the profiled steps

--model gpt: nanoGPT's GPT, character-level, on a text file (nanoGPT's CPU recipe for
shakespeare_char by default; AdamW, warm-up then cosine decay, gradient clipping):
  --data FILE             the text (default: the Tiny Shakespeare the repository ships)
  --iters N               optimizer steps (default 2000)
  --batch-size N          sequences per step (default 12; with --nproc N, per rank)
  --block-size N          context length (default 64)
  --n-layer N, --n-head N, --n-embd N
                          the model's shape (default 4, 4, 128)
  --dropout F             (default 0)
  --lr F                  peak AdamW learning rate (default 1e-3; betas 0.9, 0.99)
  --weight-decay F        on matrices and embeddings (default 0.1)
  --warmup N              linear warm-up steps, then cosine decay to lr / 10 (default 100)
  --grad-clip F           clip the gradients' total norm (default 1; 0: off)
  --eval-interval N       steps between evaluations of both splits (default 250)
  --eval-iters N          batches per split in an evaluation (default 20)
  --fsdp full|grad-op     with --nproc N: FullyShardedDataParallel (FULL_SHARD or SHARD_GRAD_OP)
                          instead of DDP, each block a unit; the report shows what a rank holds
  --amp, --nproc, --resume (with --nproc), --checkpoint-every, --seed, --threads, --device, --out,
  --profile[=N]
                          as above; `ember generate --model OUT/model.safetensors` samples from it
)";

// The process's resident memory (bytes), from /proc/self/statm; 0 where it cannot be read.
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return pages_resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

// A progress bar on a terminal; a line per 10% otherwise.
class Progress {
 public:
  Progress(int epoch, int epochs, size_t total)
      : epoch_(epoch), epochs_(epochs), total_(total), tty_(isatty(STDERR_FILENO)) {}
  void update(size_t done, double loss, double rate) {
    int percent = total_ ? static_cast<int>(100 * done / total_) : 100;
    if (tty_) {
      int width = 30, filled = width * percent / 100;
      std::fprintf(stderr, "\repoch %d/%d [%s%s] %3d%%  loss %.4f  %.0f samples/s ", epoch_,
                   epochs_, std::string(static_cast<size_t>(filled), '=').c_str(),
                   std::string(static_cast<size_t>(width - filled), ' ').c_str(), percent, loss,
                   rate);
    } else if (percent / 10 > last_decile_) {
      last_decile_ = percent / 10;
      std::fprintf(stderr, "epoch %d/%d %3d%%  loss %.4f  %.0f samples/s\n", epoch_, epochs_,
                   percent, loss, rate);
    }
  }
  void finish() {
    if (tty_) std::fprintf(stderr, "\n");
  }

 private:
  int epoch_, epochs_;
  size_t total_;
  bool tty_;
  int last_decile_ = 0;
};

// The charts of report.html.
struct Curves {
  Curve loss{"train loss", "#d62728", {}};
  Curve train_accuracy{"train accuracy", "#1f77b4", {}};
  Curve test_accuracy{"test accuracy", "#2ca02c", {}};
};

struct EpochResult {
  double train_loss = 0;
  double train_accuracy = 0;
  double seconds = 0;
  double samples_per_second = 0;
};

// One pass over `loader`, with the progress bar; adds about 100 points to `loss_curve`. With
// `amp`, the forward and the loss run under autocast; `scaler` is enabled for float16 only.
EpochResult train_epoch(nn::Module& trained, optim::Optimizer& optimizer, data::DataLoader& loader,
                        Device device, int64_t epoch, int64_t epochs, Curve& loss_curve,
                        std::optional<DType> amp, amp::GradScaler& scaler,
                        profiler::Profile* profile) {
  trained.train();
  const size_t steps = loader.size();
  const size_t update_every = std::max<size_t>(1, steps / 100);
  Progress progress(static_cast<int>(epoch), static_cast<int>(epochs), steps);
  // Loss and hits accumulate on the device; reading them back waits for it, so only now and then.
  Tensor loss_sum = zeros({}, TensorOptions(kFloat32).with_device(device));
  Tensor hits = zeros({}, TensorOptions(kInt64).with_device(device));
  int64_t seen = 0;
  double t0 = now(), window_loss = 0;
  int64_t window_seen = 0;
  size_t step = 0;
  for (const data::Example& batch : loader) {
    Tensor x = batch.data.to(device, /*non_blocking=*/true);
    Tensor y = batch.target.to(device, /*non_blocking=*/true);
    Tensor logits, loss;
    {
      amp::autocast region(device.type(), amp, /*enabled=*/amp.has_value());
      logits = trained.forward(x);
      loss = F::cross_entropy(logits, y);
    }
    optimizer.zero_grad();
    scaler.scale(loss).backward();
    scaler.step(optimizer);
    scaler.update();
    {
      NoGradGuard no_grad;
      loss_sum.add_(loss.detach() * static_cast<double>(y.size(0)));
      hits.add_(eq(argmax(logits.detach(), 1), y).sum());
    }
    seen += y.size(0);
    ++step;
    if (profile) profile->step();
    if (step % update_every == 0 || step == steps) {
      double total = loss_sum.item<double>();
      // The curve shows the mean loss of the batches since the previous point.
      loss_curve.points.emplace_back(
          static_cast<double>(epoch - 1) + static_cast<double>(step) / static_cast<double>(steps),
          (total - window_loss) / static_cast<double>(seen - window_seen));
      window_loss = total;
      window_seen = seen;
      progress.update(step, total / static_cast<double>(seen),
                      static_cast<double>(seen) / (now() - t0));
    }
  }
  if (device.is_cuda()) cuda::synchronize(device.index());
  EpochResult r;
  r.seconds = now() - t0;
  progress.finish();
  r.train_loss = loss_sum.item<double>() / static_cast<double>(seen);
  r.train_accuracy = static_cast<double>(hits.item<int64_t>()) / static_cast<double>(seen);
  r.samples_per_second = static_cast<double>(seen) / r.seconds;
  return r;
}

// One line of metrics.jsonl, with the memory after the epoch, so that a leak shows as growth
// (the soak test reads these).
void log_epoch(std::ofstream& metrics, int64_t epoch, const EpochResult& r, const Evaluation& test,
               Device device) {
  MemoryStats mem = device_backend(device.type()).allocator(device.index()).stats();
  metrics << json{{"epoch", epoch},
                  {"train_loss", r.train_loss},
                  {"train_accuracy", r.train_accuracy},
                  {"test_loss", test.loss},
                  {"test_accuracy", test.accuracy},
                  {"epoch_seconds", r.seconds},
                  {"samples_per_second", r.samples_per_second},
                  {"allocated_bytes", mem.allocated_bytes[kAllPools].current},
                  {"reserved_bytes", mem.reserved_bytes[kAllPools].current},
                  {"resident_bytes", resident_bytes()}}
                 .dump()
          << "\n";
  metrics.flush();
}

void write_run_report(const TrainConfig& cfg, const std::string& model_name, Device device,
                      const std::string& model_path, double train_seconds,
                      double samples_per_second, const Evaluation& last, const Curves& curves,
                      const std::vector<profiler::Event>& profiled) {
  char acc[32], rate[32], secs[32];
  std::snprintf(acc, sizeof acc, "%.2f%%", 100 * last.accuracy);
  std::snprintf(rate, sizeof rate, "%.0f", samples_per_second);
  std::snprintf(secs, sizeof secs, "%.2f", train_seconds);
  write_report((std::filesystem::path(cfg.out) / "report.html").string(),
               "ember train: " + model_name + " on Fashion-MNIST",
               {{"device", device.str()},
                {"epochs", std::to_string(cfg.epochs)},
                {"batch size", std::to_string(cfg.batch_size)},
                {"training time (s)", secs},
                {"samples per second", rate},
                {"test accuracy", acc},
                {"checkpoint", model_path}},
               [&] {
                 std::vector<std::string> parts = {
                     svg_chart("Training loss", "epoch", {curves.loss}),
                     svg_chart("Accuracy", "epoch", {curves.train_accuracy, curves.test_accuracy})};
                 for (std::string& p : profile_report(profiled)) parts.push_back(std::move(p));
                 return parts;
               }());
}

}  // namespace

TrainConfig parse_train_args(int argc, char** argv) {
  Args args(argc, argv, {"model",         "data",         "device",      "epochs",
                         "batch-size",    "lr",           "momentum",    "seed",
                         "threads",       "workers",      "out",         "devices",
                         "hogwild",       "nproc",        "master-port", "checkpoint-every",
                         "events",        "amp",          "resize",      "iters",
                         "block-size",    "n-layer",      "n-head",      "n-embd",
                         "dropout",       "weight-decay", "grad-clip",   "warmup",
                         "eval-interval", "eval-iters",   "fsdp"},
            {"help", "resume"}, {"profile"});
  TrainConfig cfg;
  cfg.help = args.flag("help");
  cfg.model = args.str("model", "lenet");
  const bool gpt = cfg.model == "gpt";
  for (const char* o : {"iters", "block-size", "n-layer", "n-head", "n-embd", "dropout",
                        "weight-decay", "grad-clip", "warmup", "eval-interval", "eval-iters"})
    EMBER_CHECK(gpt || !args.has(o), "--", o, " is for --model gpt");
  for (const char* o : {"epochs", "momentum", "resize", "hogwild", "devices", "workers"})
    EMBER_CHECK(!gpt || !args.has(o), "--", o, " is not an option of --model gpt (see --help)");
  cfg.resize = args.integer("resize", 0, 1, 4096);
  cfg.data = args.str("data", gpt ? data::datasets::tiny_shakespeare_path()
                                  : data::datasets::kFashionMnistDir);
  cfg.device = args.str("device", "auto");
  cfg.epochs = args.integer("epochs", 1, 1, 1000000);
  cfg.batch_size = args.integer("batch-size", gpt ? 12 : 64, 1, int64_t{1} << 31);
  cfg.lr = args.number("lr", gpt ? 1e-3 : 0.01);
  if (gpt) {
    TrainConfig::GPT& g = cfg.gpt;
    g.iters = args.integer("iters", g.iters, 1, int64_t{1} << 40);
    g.block_size = args.integer("block-size", g.block_size, 1, 1 << 20);
    g.n_layer = args.integer("n-layer", g.n_layer, 1, 1024);
    g.n_head = args.integer("n-head", g.n_head, 1, 1024);
    g.n_embd = args.integer("n-embd", g.n_embd, 1, 1 << 20);
    g.dropout = args.number("dropout", g.dropout);
    g.weight_decay = args.number("weight-decay", g.weight_decay);
    g.grad_clip = args.number("grad-clip", g.grad_clip);
    g.warmup = args.integer("warmup", g.warmup, 0, int64_t{1} << 40);
    g.eval_interval = args.integer("eval-interval", g.eval_interval, 1, int64_t{1} << 40);
    g.eval_iters = args.integer("eval-iters", g.eval_iters, 1, 1 << 20);
    EMBER_CHECK(g.n_embd % g.n_head == 0, "--n-embd (", g.n_embd,
                ") must be a multiple of --n-head (", g.n_head, ")");
    EMBER_CHECK(g.dropout >= 0 && g.dropout < 1, "--dropout must be in [0, 1), got ", g.dropout);
    EMBER_CHECK(g.weight_decay >= 0 && g.grad_clip >= 0 && cfg.lr > 0,
                "--lr must be positive, --weight-decay and --grad-clip not negative");
    EMBER_CHECK(!cfg.data.empty(),
                "--model gpt needs --data FILE (the repository's Tiny Shakespeare was not found)");
  }
  cfg.momentum = args.number("momentum", 0.9);
  cfg.seed = static_cast<uint64_t>(args.integer("seed", 0, 0));
  cfg.workers = args.integer("workers", 1, 0, 1024);
  cfg.out = args.str("out", ".");
  cfg.threads = static_cast<int>(args.integer("threads", 0, 1, 4096));
  cfg.hogwild = static_cast<int>(args.integer("hogwild", 0, 1, 1024));
  cfg.nproc = static_cast<int>(args.integer("nproc", 0, 1, 1024));
  cfg.master_port = static_cast<int>(args.integer("master-port", 0, 1, 65535));
  cfg.resume = args.flag("resume");
  cfg.checkpoint_every = args.integer("checkpoint-every", 100, 1, int64_t{1} << 40);
  cfg.events = args.str("events", "");
  EMBER_CHECK(
      cfg.nproc > 0 || (!cfg.resume && !args.has("checkpoint-every") && !args.has("events")),
      "--resume, --checkpoint-every and --events are for --nproc N (DDP)");
  if (args.has("profile")) {
    EMBER_CHECK(cfg.nproc == 0 && cfg.hogwild == 0,
                "--profile profiles `ember train` in one process (one device, --devices, or "
                "--model gpt); it does not combine with --nproc or --hogwild yet");
    std::string steps = args.str("profile", "");
    cfg.profile_steps = steps.empty() ? 5 : args.integer("profile", 5, 1, 1000);
  }
  if (args.has("amp")) {
    std::string a = args.str("amp", "");
    EMBER_CHECK(a == "bf16" || a == "fp16", "--amp expects bf16 or fp16, got '", a, "'");
    EMBER_CHECK(gpt || (cfg.nproc == 0 && cfg.hogwild == 0),
                "--amp trains on one device or with --devices; it does not combine with --nproc "
                "or --hogwild (except with --model gpt)");
    cfg.amp = a == "bf16" ? kBFloat16 : kFloat16;
  }
  if (args.has("fsdp")) {
    std::string f = args.str("fsdp", "");
    EMBER_CHECK(f == "full" || f == "grad-op", "--fsdp expects full or grad-op, got '", f, "'");
    EMBER_CHECK(gpt && cfg.nproc > 0, "--fsdp shards --model gpt over --nproc N processes");
    EMBER_CHECK(!cfg.resume && !cfg.amp,
                "--fsdp does not combine with --resume or --amp yet (train with DDP for those)");
    cfg.fsdp = f;
  }
  if (cfg.nproc > 0) {
    EMBER_CHECK(
        cfg.hogwild == 0 && !args.has("devices") && !args.has("device"),
        "--nproc trains on the CPU with one process per rank; it does not combine with --hogwild, --device or --devices");
    if (!args.has("batch-size") && !gpt) cfg.batch_size = std::max<int64_t>(1, 64 / cfg.nproc);
  } else {
    EMBER_CHECK(!args.has("master-port"), "--master-port is for --nproc N");
  }
  EMBER_CHECK(cfg.hogwild == 0 || !args.has("devices"),
              "--hogwild trains on the CPU; it does not combine with --devices");
  if (args.has("devices")) {
    EMBER_CHECK(!args.has("device"), "use either --device or --devices, not both");
    cfg.devices = parallel::parse_devices(args.str("devices", ""));
  }
  return cfg;
}

int train(int argc, char** argv) {
  TrainConfig cfg = parse_train_args(argc, argv);
  if (cfg.help) {
    std::cout << kHelp;
    return 0;
  }
  if (cfg.threads > 0) set_num_threads(cfg.threads);
  std::filesystem::create_directories(cfg.out);
  if (cfg.model == "gpt") return train_gpt(cfg, argc, argv);
  if (cfg.nproc > 0) return train_ddp(cfg, argc, argv);
  if (cfg.hogwild > 0) return train_hogwild(cfg, cfg.hogwild, cfg.out);
  const std::vector<Device>& devices = cfg.devices;
  Device device = devices.empty() ? pick_device(cfg.device) : devices[0];
  manual_seed(cfg.seed);
  MnistSets sets = load_fashion_mnist(cfg.data, cfg.resize);
  std::shared_ptr<nn::Module> model = make_model(cfg.model, cfg.resize ? cfg.resize : 28);
  model->to(device);
  // Training goes through DataParallel; the checkpoint holds the plain model's state.
  std::shared_ptr<nn::Module> trained = model;
  if (devices.size() > 1) trained = nn::make<nn::DataParallel>(model, devices);
  optim::SGD optimizer(model->parameters(), optim::SGDOptions(cfg.lr).with_momentum(cfg.momentum));
  data::DataLoader loader(sets.train, data::DataLoaderOptions()
                                          .with_batch_size(static_cast<size_t>(cfg.batch_size))
                                          .with_shuffle()
                                          .with_seed(cfg.seed)
                                          .with_workers(static_cast<size_t>(cfg.workers))
                                          .with_pin_memory(device.is_cuda()));
  std::string where = device.str();
  if (devices.size() > 1) {
    where = "DataParallel over";
    for (const Device& d : devices) where += " " + d.str();
  }
  amp::GradScaler scaler(amp::GradScalerOptions().with_enabled(cfg.amp == kFloat16));
  std::string precision = cfg.amp ? std::string(", autocast ") + dtype_name(*cfg.amp) : "";
  std::cerr << "ember train: " << model->name() << " on " << where << precision << ", "
            << sets.train->size() << " training and " << sets.test->size() << " test images, batch "
            << cfg.batch_size << ", SGD lr " << cfg.lr << " momentum " << cfg.momentum << ", "
            << get_num_threads() << " CPU threads\n";

  std::ofstream metrics(std::filesystem::path(cfg.out) / "metrics.jsonl");
  std::vector<profiler::Event> profiled;  // --profile's steps, for the report
  std::unique_ptr<profiler::Profile> profile = start_training_profile(cfg, profiled);
  Curves curves;
  double train_seconds = 0;
  Evaluation last{};
  for (int64_t epoch = 1; epoch <= cfg.epochs; ++epoch) {
    EpochResult r = train_epoch(*trained, optimizer, loader, device, epoch, cfg.epochs, curves.loss,
                                cfg.amp, scaler, profile.get());
    train_seconds += r.seconds;
    last = evaluate(*model, *sets.test, device, 512);
    curves.train_accuracy.points.emplace_back(static_cast<double>(epoch), r.train_accuracy);
    curves.test_accuracy.points.emplace_back(static_cast<double>(epoch), last.accuracy);
    std::printf(
        "epoch %lld: train loss %.4f, train accuracy %.2f%%, test loss %.4f, test accuracy %.2f%%, "
        "%.2f s, %.0f samples/s\n",
        static_cast<long long>(epoch), r.train_loss, 100 * r.train_accuracy, last.loss,
        100 * last.accuracy, r.seconds, r.samples_per_second);
    log_epoch(metrics, epoch, r, last, device);
  }

  if (profile) profile->stop();
  std::string model_path = (std::filesystem::path(cfg.out) / "model.safetensors").string();
  io::save(*model, model_path,
           {{"model", cfg.model},
            {"resize", std::to_string(cfg.resize)},
            {"epochs", std::to_string(cfg.epochs)},
            {"test_accuracy", std::to_string(last.accuracy)}});
  double samples_per_second =
      static_cast<double>(sets.train->size() * static_cast<size_t>(cfg.epochs)) / train_seconds;
  write_run_report(cfg, model->name(), device, model_path, train_seconds, samples_per_second, last,
                   curves, profiled);
  json result = {{"device", devices.size() > 1 ? where : device.str()},
                 {"epochs", cfg.epochs},
                 {"train_seconds", train_seconds},
                 {"samples_per_second", samples_per_second},
                 {"test_accuracy", last.accuracy},
                 {"amp", cfg.amp ? dtype_name(*cfg.amp) : "none"}};
  std::cout << result.dump() << std::endl;
  return 0;
}

}  // namespace ember::cli
