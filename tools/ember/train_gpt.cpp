#include "tools/ember/train_gpt.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "ember/distributed/ddp.h"
#include "ember/distributed/distributed.h"
#include "ember/distributed/fsdp.h"
#include "ember/distributed/training_checkpoint.h"
#include "ember/ember.h"
#include "tools/ember/report.h"
#include "tools/ember/train_ddp.h"
#include "tools/ember/train_resume.h"

namespace ember::cli {
namespace {

namespace dist = ember::distributed;
using json = nlohmann::json;

// nanoGPT's schedule: linear warm-up over `warmup` steps, then cosine decay to lr / 10 at the
// last step.
double lr_at(const TrainConfig& cfg, int64_t it) {
  const TrainConfig::GPT& g = cfg.gpt;
  const double min_lr = cfg.lr / 10;
  if (it < g.warmup)
    return cfg.lr * static_cast<double>(it + 1) / static_cast<double>(g.warmup + 1);
  if (g.iters <= g.warmup) return min_lr;
  double ratio = static_cast<double>(it - g.warmup) / static_cast<double>(g.iters - g.warmup);
  return min_lr + 0.5 * (1.0 + std::cos(M_PI * std::min(1.0, ratio))) * (cfg.lr - min_lr);
}

struct Losses {
  double train = 0, val = 0;
};

// The mean loss of eval_iters random batches of each split, in eval mode, without gradients.
using LossFn = std::function<Tensor(const Tensor&, const Tensor&)>;

// --fsdp: each block one unit, the rest (embeddings, ln_f, the tied head) the root's; each
// parameter sharded on its own (FSDP2's layout), so that AdamW's decay groups (matrices and
// embeddings) are DDP's and the losses can be compared.
std::shared_ptr<dist::FSDP> shard(const std::shared_ptr<models::GPT>& model,
                                  const std::string& strategy) {
  dist::FsdpOptions o;
  o.sharding_strategy = strategy == "full" ? dist::ShardingStrategy::FULL_SHARD
                                           : dist::ShardingStrategy::SHARD_GRAD_OP;
  o.per_parameter = true;
  nn::Sequential& blocks = *model->transformer->h;
  for (size_t i = 0; i < blocks.size(); ++i)
    blocks.replace_module(std::to_string(i),
                          std::make_shared<dist::FSDP>(blocks.named_child(std::to_string(i)), o));
  return std::make_shared<dist::FSDP>(model, o);
}

// What one rank held under FSDP, for the report: its share of the parameters.
struct Sharding {
  std::string strategy;
  int64_t held = 0, total = 0;
  std::vector<std::pair<std::string, std::string>> rows;
};

Sharding sharding_of(dist::FSDP& fsdp, const std::string& strategy, int world) {
  Sharding s;
  s.strategy = strategy == "full" ? "FULL_SHARD" : "SHARD_GRAD_OP";
  for (const Tensor& p : fsdp.parameters()) s.held += p.numel();
  for (dist::FSDP* unit : fsdp.units())
    for (const Shape& shape : unit->handle().full_shapes()) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      s.total += n;
    }
  char share[64];
  std::snprintf(share, sizeof share, "%lld of %lld (%.1f%%; 1/%d is %.1f%%)",
                static_cast<long long>(s.held), static_cast<long long>(s.total),
                100.0 * static_cast<double>(s.held) / static_cast<double>(s.total), world,
                100.0 / world);
  s.rows = {{"parameters held by rank 0", share}};
  return s;
}

Losses estimate_loss(models::GPT& model, const LossFn& loss_of,
                     const data::datasets::CharText& text, const TrainConfig& cfg, Device device) {
  NoGradGuard no_grad;
  model.eval();
  Losses out;
  for (bool train : {true, false}) {
    double sum = 0;
    for (int64_t i = 0; i < cfg.gpt.eval_iters; ++i) {
      auto [x, y] = text.batch(train, cfg.batch_size, cfg.gpt.block_size);
      amp::autocast region(device.type(), cfg.amp, cfg.amp.has_value());
      sum += loss_of(x.to(device), y.to(device)).item<double>();
    }
    (train ? out.train : out.val) = sum / static_cast<double>(cfg.gpt.eval_iters);
  }
  model.train();
  return out;
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::string unhex(const std::string& s, const std::string& source) {
  auto digit = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    EMBER_FAIL("[generate] ", source, ": the vocabulary metadata is not hexadecimal");
  };
  EMBER_CHECK(s.size() % 2 == 0, "[generate] ", source,
              ": the vocabulary metadata has an odd number of digits");
  std::string out;
  for (size_t i = 0; i < s.size(); i += 2)
    out.push_back(static_cast<char>(digit(s[i]) * 16 + digit(s[i + 1])));
  return out;
}

int64_t metadata_int(const io::Metadata& m, const std::string& key, const std::string& source) {
  auto it = m.find(key);
  EMBER_CHECK(it != m.end(), "[generate] ", source, " has no '", key,
              "' in its metadata: it was not saved by `ember train --model gpt`");
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  EMBER_CHECK(!it->second.empty() && *end == '\0' && v > 0, "[generate] ", source, ": metadata '",
              key, "' is '", it->second, "', expected a positive integer");
  return v;
}

// One process's training: the whole run, or one rank of a DDP run.
int run(const TrainConfig& cfg, bool distributed) {
  double started = wall_time();
  int rank = 0, world = 1;
  if (distributed) {
    dist::init_process_group("gloo", "env://");
    rank = dist::get_rank();
    world = dist::get_world_size();
    if (cfg.threads == 0)  // the ranks share the cores
      set_num_threads(std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / world));
  }
  Device device = distributed ? Device(kCPU) : pick_device(cfg.device);
  const TrainConfig::GPT& g = cfg.gpt;
  data::datasets::CharText text(cfg.data);
  models::GPTConfig mc{g.block_size, text.vocab_size(), g.n_layer, g.n_head, g.n_embd, g.dropout,
                       true};
  manual_seed(cfg.seed);  // the same initial model everywhere
  auto model = nn::make<models::GPT>(mc);
  model->to(device);
  std::unique_ptr<dist::DDP> ddp;
  std::shared_ptr<dist::FSDP> fsdp;
  if (!cfg.fsdp.empty()) {
    fsdp = shard(model, cfg.fsdp);
  } else if (distributed) {
    ddp = std::make_unique<dist::DDP>(model);
  }
  // The model's loss; DDP and FSDP's root unit act around it (GPT's forward takes two tensors).
  LossFn loss_of = [&](const Tensor& x, const Tensor& y) {
    if (ddp) ddp->pre_forward();
    if (fsdp) fsdp->handle().pre_forward();
    Tensor loss = model->forward(x, y).second;
    if (ddp) ddp->post_forward({loss});
    if (fsdp) fsdp->handle().post_forward({loss});
    return loss;
  };
  // Batches (and dropout) differ per rank, as nanoGPT's seed offset makes them.
  manual_seed(cfg.seed + 1 + static_cast<uint64_t>(rank));
  auto [decay, no_decay] = models::decay_groups(*model);
  optim::AdamW opt(std::vector<optim::ParamGroup>{{decay, {{"weight_decay", g.weight_decay}}},
                                                  {no_decay, {{"weight_decay", 0.0}}}},
                   optim::AdamOptions(cfg.lr).with_betas(0.9, 0.99).with_weight_decay(
                       g.weight_decay));
  amp::GradScaler scaler(amp::GradScalerOptions().with_enabled(cfg.amp == kFloat16));

  std::unique_ptr<dist::TrainingCheckpoint> checkpoint;
  int64_t first = 0;
  if (cfg.resume) {
    std::string path = (std::filesystem::path(cfg.out) / "checkpoint.safetensors").string();
    checkpoint = std::make_unique<dist::TrainingCheckpoint>(path, *model, opt);
    if (auto p = checkpoint->load()) {
      first = p->step;
      if (rank == 0)
        std::cerr << "ember train: resumed from " << path << " at step " << first << " on "
                  << world << " ranks, restart " << restart_count() << "\n";
    }
  }
  EventLog events(rank == 0 ? cfg.events : "");
  events.write("start", detail::str_cat("\"restart\":", restart_count(), ",\"world_size\":", world,
                                        ",\"step\":", first, ",\"started\":",
                                        std::to_string(started)));
  if (rank == 0)
    std::cerr << "ember train: GPT (" << g.n_layer << " layers, " << g.n_head << " heads, "
              << g.n_embd << " wide, block " << g.block_size << ", "
              << model->num_parameters() << " parameters) on " << cfg.data << " ("
              << text.vocab_size() << " characters, " << text.train().size(0) << " + "
              << text.val().size(0) << " tokens), "
              << (distributed ? "DDP over " + std::to_string(world) + " processes (gloo)"
                              : device.str())
              << (cfg.amp ? std::string(", autocast ") + dtype_name(*cfg.amp) : "") << ", batch "
              << cfg.batch_size << (distributed ? " per rank" : "") << ", AdamW lr " << cfg.lr
              << ", " << get_num_threads() << " CPU threads\n";

  std::ofstream metrics;
  if (rank == 0) metrics.open(std::filesystem::path(cfg.out) / "metrics.jsonl", std::ios::app);
  Curve train_curve{"train loss (batch)", "#d62728", {}}, eval_train{"train loss", "#1f77b4", {}},
      eval_val{"validation loss", "#2ca02c", {}};
  const int64_t log_every = std::max<int64_t>(1, g.iters / 20);
  Losses last{};
  auto evaluate_now = [&](int64_t it, double seconds) {
    if (rank != 0 && !fsdp) return;
    if (rank != 0) {
      // FSDP's forward needs every rank; the others' batches are drawn and put back, so that
      // their training batches are those they draw under DDP.
      auto drawn = default_generator().get_state();
      estimate_loss(*model, loss_of, text, cfg, device);
      default_generator().set_state(drawn);
      return;
    }
    last = estimate_loss(*model, loss_of, text, cfg, device);
    eval_train.points.emplace_back(static_cast<double>(it), last.train);
    eval_val.points.emplace_back(static_cast<double>(it), last.val);
    std::printf("step %lld: train loss %.4f, val loss %.4f\n", static_cast<long long>(it),
                last.train, last.val);
    std::fflush(stdout);
    metrics << json{{"step", it}, {"train_loss", last.train}, {"val_loss", last.val},
                    {"seconds", seconds}, {"lr", lr_at(cfg, it)}}
                   .dump()
            << "\n";
    metrics.flush();
  };

  std::vector<profiler::Event> profiled;  // --profile's steps, for the report
  std::unique_ptr<profiler::Profile> profile = start_training_profile(cfg, profiled);
  model->train();
  double t0 = now(), train_seconds = 0, window_start = t0;
  for (int64_t it = first; it < g.iters; ++it) {
    if (it % g.eval_interval == 0) {
      double pause = now();
      evaluate_now(it, train_seconds);
      window_start += now() - pause;  // evaluation is not training time
    }
    double step_start = now();
    for (optim::ParamGroup& group : opt.param_groups()) group.options["lr"] = lr_at(cfg, it);
    auto [x, y] = text.batch(true, cfg.batch_size, g.block_size);
    x = x.to(device, /*non_blocking=*/true);
    y = y.to(device, /*non_blocking=*/true);
    Tensor loss;
    {
      amp::autocast region(device.type(), cfg.amp, cfg.amp.has_value());
      loss = loss_of(x, y);
    }
    opt.zero_grad();
    scaler.scale(loss).backward();
    if (g.grad_clip > 0) {
      scaler.unscale_(opt);
      if (fsdp)
        fsdp->clip_grad_norm_(g.grad_clip);  // the norm over every rank's shards
      else
        nn::utils::clip_grad_norm_(model->parameters(), g.grad_clip);
    }
    scaler.step(opt);
    scaler.update();
    train_seconds += now() - step_start;
    if (profile) profile->step();
    events.write("step", detail::str_cat("\"step\":", it + 1));
    if (checkpoint && (it + 1) % cfg.checkpoint_every == 0) {
      checkpoint->save({0, it + 1, 0});
      events.write("checkpoint", detail::str_cat("\"step\":", it + 1));
    }
    if (rank == 0 && ((it + 1) % log_every == 0 || it + 1 == g.iters)) {
      double l = loss.item<double>(), ms = 1000 * (now() - window_start) /
                                           static_cast<double>(std::min(log_every, it + 1 - first));
      train_curve.points.emplace_back(static_cast<double>(it + 1), l);
      std::fprintf(stderr, "step %lld/%lld: loss %.4f, %.1f ms/step, lr %.2e\n",
                   static_cast<long long>(it + 1), static_cast<long long>(g.iters), l, ms,
                   lr_at(cfg, it));
      window_start = now();
    }
  }
  if (profile) profile->stop();
  if (checkpoint && first < g.iters) {
    checkpoint->save({0, g.iters, 0});
    events.write("checkpoint", detail::str_cat("\"step\":", g.iters));
  }
  evaluate_now(g.iters, train_seconds);
  events.write("end", detail::str_cat("\"val_loss\":", last.val));
  // The most a rank held at once (ember's CPU allocator), before rank 0 gathers the model.
  const int64_t peak_bytes =
      device_backend(kCPU).allocator(0).stats().allocated_bytes[kAllPools].peak;
  Sharding sharded;
  if (fsdp) {
    // What a rank held, then the whole model on rank 0 for the checkpoint and the sample.
    sharded = sharding_of(*fsdp, cfg.fsdp, world);
    nn::NamedTensors full = fsdp->full_state_dict();
    if (rank == 0) {
      model = nn::make<models::GPT>(mc);
      model->load_state_dict(full);
      model->eval();
    }
  }
  if (rank == 0) {
    std::string model_path = (std::filesystem::path(cfg.out) / "model.safetensors").string();
    io::Metadata meta = gpt_metadata(mc, text.vocab());
    meta["iters"] = std::to_string(g.iters);
    meta["val_loss"] = std::to_string(last.val);
    io::save(*model, model_path, meta);
    // A sample for the report: 300 characters after a newline, temperature 0.8, top-k 200.
    std::string sample = text.decode(model->generate(
        text.encode("\n").view({1, -1}).to(device), 300, 0.8, 200));
    const int64_t steps = g.iters - first;
    double tokens_per_second = static_cast<double>(steps * cfg.batch_size * g.block_size * world) /
                               std::max(train_seconds, 1e-9);
    char val[32], secs[32], rate[32];
    std::snprintf(val, sizeof val, "%.4f", last.val);
    std::snprintf(secs, sizeof secs, "%.2f", train_seconds);
    std::snprintf(rate, sizeof rate, "%.0f", tokens_per_second);
    std::vector<std::pair<std::string, std::string>> summary = {
        {"device", !distributed ? device.str()
                   : (fsdp ? "FSDP (" + sharded.strategy + ")" : std::string("DDP")) + " over " +
                         std::to_string(world) + " CPU processes"},
        {"model", std::to_string(g.n_layer) + " layers, " + std::to_string(g.n_head) + " heads, " +
                      std::to_string(g.n_embd) + " wide, block " + std::to_string(g.block_size) +
                      ", " + std::to_string(model->num_parameters()) + " parameters"},
        {"steps",
         std::to_string(g.iters) + (first ? " (resumed at " + std::to_string(first) + ")" : "")},
        {"batch", std::to_string(cfg.batch_size) + (distributed ? " per rank" : "")},
        {"training time (s)", secs},
        {"tokens per second", rate},
        {"validation loss", val}};
    summary.insert(summary.end(), sharded.rows.begin(), sharded.rows.end());
    if (distributed)
      summary.emplace_back("peak memory of rank 0 (MiB)",
                           std::to_string(peak_bytes >> 20) + " (ember's CPU allocator)");
    summary.insert(summary.end(), {{"checkpoint", model_path}, {"sample", sample}});
    std::vector<std::string> charts = {
        svg_chart("Loss", "step", {train_curve, eval_train, eval_val})};
    for (std::string& p : profile_report(profiled)) charts.push_back(std::move(p));
    write_report((std::filesystem::path(cfg.out) / "report.html").string(),
                 "ember train: GPT on " + std::filesystem::path(cfg.data).filename().string(),
                 summary, charts);
    json result = {{"device", distributed ? "cpu" : device.str()},
                   {"nproc", world},
                   {"steps", steps},
                   {"train_seconds", train_seconds},
                   {"tokens_per_second", tokens_per_second},
                   {"train_loss", last.train},
                   {"val_loss", last.val},
                   {"restart_count", restart_count()},
                   {"amp", cfg.amp ? dtype_name(*cfg.amp) : "none"}};
    if (fsdp)
      result["fsdp"] = {{"strategy", sharded.strategy},
                        {"parameters_held", sharded.held},
                        {"parameters", sharded.total}};
    if (distributed) result["peak_allocated_bytes"] = peak_bytes;
    std::cout << result.dump() << std::endl;
  }
  if (distributed) dist::destroy_process_group();
  return 0;
}

}  // namespace

io::Metadata gpt_metadata(const models::GPTConfig& c, const std::string& vocab) {
  return {{"model", "gpt"},
          {"block_size", std::to_string(c.block_size)},
          {"vocab_size", std::to_string(c.vocab_size)},
          {"n_layer", std::to_string(c.n_layer)},
          {"n_head", std::to_string(c.n_head)},
          {"n_embd", std::to_string(c.n_embd)},
          {"bias", c.bias ? "1" : "0"},
          {"vocab_hex", hex(vocab)}};
}

TrainedGPT load_trained_gpt(const std::string& path) {
  io::SafetensorsFile file = io::load_safetensors(path);
  const io::Metadata& m = file.metadata;
  auto kind = m.find("model");
  EMBER_CHECK(kind != m.end() && kind->second == "gpt", "[generate] ", path,
              " is not a GPT saved by `ember train --model gpt` (its metadata says model '",
              kind == m.end() ? "" : kind->second, "')");
  models::GPTConfig c;
  c.block_size = metadata_int(m, "block_size", path);
  c.vocab_size = metadata_int(m, "vocab_size", path);
  c.n_layer = metadata_int(m, "n_layer", path);
  c.n_head = metadata_int(m, "n_head", path);
  c.n_embd = metadata_int(m, "n_embd", path);
  c.bias = m.count("bias") == 0 || m.at("bias") != "0";
  auto vocab = m.find("vocab_hex");
  EMBER_CHECK(vocab != m.end(), "[generate] ", path, " has no vocabulary in its metadata");
  TrainedGPT out{nn::make<models::GPT>(c),
                 data::datasets::CharText::from_vocabulary(unhex(vocab->second, path))};
  EMBER_CHECK(out.vocab.vocab_size() == c.vocab_size, "[generate] ", path, ": a vocabulary of ",
              out.vocab.vocab_size(), " characters for a model of ", c.vocab_size, " tokens");
  out.model->load_nanogpt_state_dict(file.tensors);
  return out;
}

int train_gpt(const TrainConfig& cfg, int argc, char** argv) {
  if (cfg.nproc == 0) return run(cfg, false);
  return is_rank() ? run(cfg, true) : launch_ranks(cfg, argc, argv);
}

}  // namespace ember::cli
