// DataLoader: batches of a dataset in order or shuffled (a seeded permutation per epoch), made by
// worker threads ahead of the training loop, optionally in pinned memory for asynchronous copies.
#pragma once

#include <cstdint>
#include <memory>

#include "ember/data/dataset.h"

namespace ember::data {

struct DataLoaderOptions {
  size_t batch_size = 1;
  bool shuffle = false;
  uint64_t seed = 0;        // epoch e uses the permutation of seed + e
  bool drop_last = false;   // drop a last batch smaller than batch_size
  size_t num_workers = 0;   // 0: batches are made on the calling thread when asked for
  size_t prefetch = 2;      // batches each worker may run ahead
  bool pin_memory = false;  // page-locked batches (only when a CUDA device is present)
  DataLoaderOptions& with_batch_size(size_t b) {
    batch_size = b;
    return *this;
  }
  DataLoaderOptions& with_shuffle(bool s = true) {
    shuffle = s;
    return *this;
  }
  DataLoaderOptions& with_seed(uint64_t s) {
    seed = s;
    return *this;
  }
  DataLoaderOptions& with_drop_last(bool d = true) {
    drop_last = d;
    return *this;
  }
  DataLoaderOptions& with_workers(size_t n) {
    num_workers = n;
    return *this;
  }
  DataLoaderOptions& with_pin_memory(bool p = true) {
    pin_memory = p;
    return *this;
  }
};

class DataLoader {
 public:
  DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  /// One pass over the data: `for (const Example& batch : loader)`. Starting a new pass ends the
  /// previous one.
  class Iterator {
   public:
    const Example& operator*() const { return current_; }
    const Example* operator->() const { return &current_; }
    Iterator& operator++();
    bool operator==(const Iterator& o) const { return index_ == o.index_; }
    bool operator!=(const Iterator& o) const { return index_ != o.index_; }

   private:
    friend class DataLoader;
    Iterator(DataLoader* loader, size_t index);
    DataLoader* loader_;
    size_t index_;
    Example current_;
  };
  Iterator begin();
  Iterator end();

  /// Batches per epoch.
  size_t size() const;
  const DataLoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return *dataset_; }

 private:
  struct Epoch;
  Example fetch(size_t batch);  // waits for (or makes) batch `batch` of the current epoch
  std::shared_ptr<Dataset> dataset_;
  DataLoaderOptions options_;
  uint64_t epoch_ = 0;
  std::unique_ptr<Epoch> current_;
};

}  // namespace ember::data
