#include "ember/data/dataset.h"

#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/join.h"

namespace ember::data {

Example Dataset::get_batch(const std::vector<size_t>& indices) const {
  std::vector<Tensor> data, targets;
  for (size_t i : indices) {
    Example e = get(i);
    data.push_back(e.data);
    if (e.target.defined()) targets.push_back(e.target);
  }
  EMBER_CHECK(!data.empty(), "[Dataset] empty batch");
  return {stack(data), targets.empty() ? Tensor() : stack(targets)};
}

TensorDataset::TensorDataset(Tensor data, Tensor targets)
    : data_(std::move(data)), targets_(std::move(targets)) {
  EMBER_CHECK(data_.dim() >= 1, "[TensorDataset] data must have a first (sample) dimension");
  EMBER_CHECK(!targets_.defined() || targets_.size(0) == data_.size(0), "[TensorDataset] data has ",
              data_.size(0), " samples but targets has ", targets_.size(0));
}

Example TensorDataset::get(size_t index) const {
  EMBER_CHECK_INDEX(index < size(), "[TensorDataset] index ", index, " out of range for ", size(),
              " samples");
  auto i = static_cast<int64_t>(index);
  return {data_[i], targets_.defined() ? targets_[i] : Tensor()};
}

Example TensorDataset::get_batch(const std::vector<size_t>& indices) const {
  std::vector<int64_t> idx(indices.begin(), indices.end());
  Tensor index = from_vector(idx, {static_cast<int64_t>(idx.size())}).to(data_.device());
  return {index_select(data_, 0, index),
          targets_.defined() ? index_select(targets_, 0, index) : Tensor()};
}

}  // namespace ember::data
