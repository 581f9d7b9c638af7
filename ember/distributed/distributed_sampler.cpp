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
      seed_(seed) {
  EMBER_CHECK(num_replicas >= 1 && rank >= 0 && rank < num_replicas,
              "[DistributedSampler] expected 0 <= rank < num_replicas, got rank ", rank,
              " and num_replicas ", num_replicas);
  size_t n = static_cast<size_t>(num_replicas);
  num_samples_ = drop_last ? dataset_size / n : (dataset_size + n - 1) / n;
}

std::vector<size_t> DistributedSampler::indices() const {
  std::vector<size_t> all(dataset_size_);
  std::iota(all.begin(), all.end(), 0);
  if (shuffle_) {
    std::mt19937_64 rng(seed_ + epoch_);
    std::shuffle(all.begin(), all.end(), rng);
  }
  size_t total = num_samples_ * static_cast<size_t>(num_replicas_);
  if (all.size() > total) all.resize(total);                                          // drop_last
  for (size_t i = 0; all.size() < total; ++i) all.push_back(all[i % dataset_size_]);  // pad
  std::vector<size_t> mine;
  for (size_t i = static_cast<size_t>(rank_); i < total; i += num_replicas_) mine.push_back(all[i]);
  return mine;
}

data::Example SubsetDataset::get_batch(const std::vector<size_t>& indices) const {
  std::vector<size_t> mapped;
  mapped.reserve(indices.size());
  for (size_t i : indices) mapped.push_back(indices_.at(i));
  return dataset_->get_batch(mapped);
}

}  // namespace ember::distributed
