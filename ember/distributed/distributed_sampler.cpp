#include "ember/distributed/distributed_sampler.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "ember/core/error.h"

namespace ember::distributed {

DistributedSampler::DistributedSampler(size_t dataset_size, int num_replicas, int rank,
                                       bool shuffle, uint64_t seed, bool drop_last)
    : dataset_size_(dataset_size),
      num_replicas_(num_replicas),
      rank_(rank),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  EMBER_CHECK(num_replicas >= 1 && rank >= 0 && rank < num_replicas,
              "[DistributedSampler] expected 0 <= rank < num_replicas, got rank ", rank,
              " and num_replicas ", num_replicas);
  set_start(0);
}

void DistributedSampler::set_epoch(uint64_t epoch) {
  epoch_ = epoch;
  set_start(0);
}

void DistributedSampler::set_start(size_t start) {
  EMBER_CHECK(start <= dataset_size_, "[DistributedSampler] set_start(", start,
              ") is past the end of the data set of ", dataset_size_, " samples");
  start_ = start;
  size_t left = dataset_size_ - start, n = static_cast<size_t>(num_replicas_);
  num_samples_ = drop_last_ ? left / n : (left + n - 1) / n;
}

// Note [Resuming an epoch]: rank r takes the epoch's order at positions start + r, start + r + n,
// ... (n ranks), so once every rank has taken k samples the job has consumed exactly the first
// start + k * n: a prefix of the order, whatever n was. A job that restarts with another n resumes
// at that prefix's end and splits the rest the same way, so no sample of the epoch is trained on
// twice, except the padding that gives every rank the same count (at most n - 1 samples repeated
// from the rest, as PyTorch pads a whole epoch).
std::vector<size_t> DistributedSampler::indices() const {
  std::vector<size_t> all(dataset_size_);
  std::iota(all.begin(), all.end(), 0);
  if (shuffle_) {
    std::mt19937_64 rng(seed_ + epoch_);
    std::shuffle(all.begin(), all.end(), rng);
  }
  all.erase(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(start_));
  size_t total = num_samples_ * static_cast<size_t>(num_replicas_);
  if (all.size() > total) all.resize(total);  // drop_last
  for (size_t i = 0, left = all.size(); all.size() < total; ++i) all.push_back(all[i % left]);
  std::vector<size_t> mine;
  for (size_t i = static_cast<size_t>(rank_); i < total; i += num_replicas_) mine.push_back(all[i]);
  return mine;
}

size_t DistributedSampler::position_after(size_t batches, size_t batch_size) const {
  size_t taken = std::min(num_samples_, batches * batch_size);
  return std::min(dataset_size_, start_ + taken * static_cast<size_t>(num_replicas_));
}

data::Example SubsetDataset::get_batch(const std::vector<size_t>& indices) const {
  std::vector<size_t> mapped;
  mapped.reserve(indices.size());
  for (size_t i : indices) mapped.push_back(indices_.at(i));
  return dataset_->get_batch(mapped);
}

}  // namespace ember::distributed
