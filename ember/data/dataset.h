// Datasets: indexable collections of (data, target) examples, fetched one or a batch at a time.
#pragma once

#include <cstddef>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::data {

struct Example {
  Tensor data;
  Tensor target;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual size_t size() const = 0;
  virtual Example get(size_t index) const = 0;
  /// A batch (the examples stacked along a new first dim). Datasets that keep everything in one
  /// tensor override this with a single gather.
  virtual Example get_batch(const std::vector<size_t>& indices) const;
};

/// Examples are rows of `data` and `targets`.
class TensorDataset : public Dataset {
 public:
  TensorDataset(Tensor data, Tensor targets);
  size_t size() const override { return static_cast<size_t>(data_.size(0)); }
  Example get(size_t index) const override;
  Example get_batch(const std::vector<size_t>& indices) const override;

 private:
  Tensor data_, targets_;
};

}  // namespace ember::data
