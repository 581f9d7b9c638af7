// DistributedSampler (PyTorch's): each rank's share of a data set's indices for an epoch, the
// same number on every rank (padded by repeating indices, or dropping the tail), shuffled by
// seed + epoch identically on every rank. It can resume an epoch part-way, with another number of
// ranks (Note [Resuming an epoch]).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ember/data/dataset.h"

namespace ember::distributed {

class DistributedSampler {
 public:
  DistributedSampler(size_t dataset_size, int num_replicas, int rank, bool shuffle = true,
                     uint64_t seed = 0, bool drop_last = false);
  /// Starts epoch `epoch` from its beginning.
  void set_epoch(uint64_t epoch);
  /// Resumes the current epoch at `start`: the first `start` samples of its order (trained on
  /// before a restart, whatever the number of ranks then) are skipped and the rest are split
  /// among this sampler's ranks.
  void set_start(size_t start);
  /// This rank's indices for the current epoch (from the start).
  std::vector<size_t> indices() const;
  /// Samples per rank.
  size_t size() const { return num_samples_; }
  /// The position in the epoch's order once every rank has taken `batches` batches of
  /// `batch_size` from the start: what set_start resumes from (at most the data set's size).
  size_t position_after(size_t batches, size_t batch_size) const;

 private:
  size_t dataset_size_;
  int num_replicas_;
  int rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  uint64_t epoch_ = 0;
  size_t start_ = 0;
  size_t num_samples_;  // drop_last: the samples left / replicas, rounded down, else up
};

/// The samples of `dataset` at `indices`, in that order (a rank's shard).
class SubsetDataset final : public data::Dataset {
 public:
  SubsetDataset(std::shared_ptr<data::Dataset> dataset, std::vector<size_t> indices)
      : dataset_(std::move(dataset)), indices_(std::move(indices)) {}
  size_t size() const override { return indices_.size(); }
  data::Example get(size_t index) const override { return dataset_->get(indices_.at(index)); }
  data::Example get_batch(const std::vector<size_t>& indices) const override;

 private:
  std::shared_ptr<data::Dataset> dataset_;
  std::vector<size_t> indices_;
};

}  // namespace ember::distributed
