#include "tools/ember/train_resume.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "ember/distributed/distributed.h"
#include "ember/ember.h"

namespace ember::cli {

namespace dist = ember::distributed;

EventLog::EventLog(const std::string& path) {
  if (path.empty()) return;
  file_ = std::fopen(path.c_str(), "a");
  EMBER_CHECK(file_, "[train] cannot open --events file '", path, "': ", std::strerror(errno));
}

EventLog::~EventLog() {
  if (file_) std::fclose(file_);
}

double wall_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void EventLog::write(const std::string& event, const std::string& fields) {
  if (!file_) return;
  std::fprintf(file_, "{\"time\":%.6f,\"event\":\"%s\"%s%s}\n", wall_time(), event.c_str(),
               fields.empty() ? "" : ",", fields.c_str());
  std::fflush(file_);
}

namespace {

std::string position_fields(const dist::TrainingPosition& p) {
  return detail::str_cat("\"epoch\":", p.epoch, ",\"step\":", p.step, ",\"sample\":", p.sample);
}

}  // namespace

int restart_count() {
  const char* c = std::getenv("TORCHELASTIC_RESTART_COUNT");
  return c ? std::atoi(c) : 0;
}

ResumableRun::ResumableRun(const TrainConfig& cfg, nn::Module& model, optim::Optimizer& optimizer,
                           double started)
    : cfg_(cfg), rank_(dist::get_rank()), events_(rank_ == 0 ? cfg.events : "") {
  bool resumed = false;
  double load_started = wall_time();
  if (cfg.resume) {
    std::string path = (std::filesystem::path(cfg.out) / "checkpoint.safetensors").string();
    checkpoint_ = std::make_unique<dist::TrainingCheckpoint>(path, model, optimizer);
    if (std::optional<dist::TrainingPosition> p = checkpoint_->load()) {
      position_ = *p;
      resumed = true;
      if (rank_ == 0)
        std::cerr << "ember train: resumed from " << path << " at epoch " << p->epoch + 1
                  << ", step " << p->step << " (sample " << p->sample << "), on "
                  << dist::get_world_size() << " ranks, restart " << restart_count() << "\n";
    }
  }
  epoch_step0_ = position_.step;
  events_.write("start", detail::str_cat("\"restart\":", restart_count(),
                                         ",\"world_size\":", dist::get_world_size(),
                                         ",\"resumed\":", resumed ? "true" : "false",
                                         ",\"started\":", std::to_string(started),
                                         ",\"load_seconds\":", wall_time() - load_started, ",",
                                         position_fields(position_)));
}

void ResumableRun::begin_epoch(dist::DistributedSampler& sampler, int64_t epoch) {
  sampler.set_epoch(static_cast<uint64_t>(epoch));
  if (epoch == position_.epoch) {
    sampler.set_start(static_cast<size_t>(position_.sample));
  } else {
    position_ = {epoch, 0, 0};
  }
  epoch_step0_ = position_.step;
}

void ResumableRun::after_step(const dist::DistributedSampler& sampler, size_t batches) {
  ++steps_;
  position_.step = epoch_step0_ + static_cast<int64_t>(batches);
  position_.sample =
      static_cast<int64_t>(sampler.position_after(batches, static_cast<size_t>(cfg_.batch_size)));
  events_.write(steps_ == 1 ? "first_step" : "step", position_fields(position_));
  if (checkpoint_ && steps_ % cfg_.checkpoint_every == 0) save(position_);
}

void ResumableRun::end_epoch(int64_t epoch) {
  if (checkpoint_) save({epoch + 1, 0, 0});
}

void ResumableRun::save(const dist::TrainingPosition& position) {
  checkpoint_->save(position);
  events_.write("checkpoint", position_fields(position));
}

void ResumableRun::finish(double test_accuracy) {
  events_.write("end", detail::str_cat("\"test_accuracy\":", test_accuracy));
}

}  // namespace ember::cli
