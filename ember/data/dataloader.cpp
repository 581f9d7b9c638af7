#include "ember/data/dataloader.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "ember/core/device_backend.h"
#include "ember/core/philox.h"
#include "ember/core/profiler_events.h"
#include "ember/core/thread_local_state.h"

namespace ember::data {

// The batches of one epoch and the workers making them. Worker k makes batches k, k + W, ...;
// each waits while it is more than `prefetch` batches ahead of the consumer.
struct DataLoader::Epoch {
  std::vector<std::vector<size_t>> batches;
  std::vector<Example> ready;
  std::vector<std::exception_ptr> errors;
  std::vector<bool> done;
  size_t consumed = 0;
  bool stop = false;
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::thread> workers;

  ~Epoch() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    cv.notify_all();
    for (auto& w : workers) w.join();
  }
};

namespace {
Example make_batch(const Dataset& d, const std::vector<size_t>& indices, bool pin) {
  Example e = d.get_batch(indices);
  if (pin && device_backend(kCUDA).device_count() > 0) {
    if (e.data.defined() && e.data.is_cpu()) e.data = e.data.pin_memory();
    if (e.target.defined() && e.target.is_cpu()) e.target = e.target.pin_memory();
  }
  return e;
}
}  // namespace

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(options) {
  EMBER_CHECK(dataset_ != nullptr, "[DataLoader] dataset is null");
  EMBER_CHECK(options_.batch_size > 0, "[DataLoader] batch_size must be positive");
  EMBER_CHECK(options_.prefetch > 0, "[DataLoader] prefetch must be positive");
}

DataLoader::~DataLoader() = default;

size_t DataLoader::size() const {
  size_t n = dataset_->size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

DataLoader::Iterator DataLoader::begin() {
  current_.reset();  // joins the workers of an unfinished epoch
  auto epoch = std::make_unique<Epoch>();
  size_t n = dataset_->size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (options_.shuffle) {
    uint64_t seed = options_.seed + epoch_;
    for (size_t i = n; i > 1; --i) {  // Fisher-Yates from a counter-based stream
      Philox r(seed, 0x5eedULL, i);
      uint64_t w = (static_cast<uint64_t>(r.c[0]) << 32) | r.c[1];
      std::swap(order[i - 1], order[w % i]);
    }
  }
  ++epoch_;
  size_t batches = size();
  for (size_t b = 0; b < batches; ++b) {
    size_t lo = b * options_.batch_size, hi = std::min(n, lo + options_.batch_size);
    epoch->batches.emplace_back(order.begin() + static_cast<long>(lo),
                                order.begin() + static_cast<long>(hi));
  }
  epoch->ready.resize(batches);
  epoch->errors.resize(batches);
  epoch->done.assign(batches, false);
  Epoch* e = epoch.get();
  size_t workers = std::min(options_.num_workers, batches);
  // The workers run with the grad mode and autocast settings of the thread that began the epoch,
  // as the batches would be made there without workers.
  ThreadLocalState caller = ThreadLocalState::capture();
  for (size_t k = 0; k < workers; ++k) {
    e->workers.emplace_back([this, e, k, workers, caller] {
      ThreadLocalStateGuard state(caller);
      for (size_t b = k; b < e->batches.size(); b += workers) {
        {
          std::unique_lock<std::mutex> lock(e->mutex);
          e->cv.wait(lock,
                     [&] { return e->stop || b < e->consumed + workers * options_.prefetch; });
          if (e->stop) return;
        }
        Example ex;
        std::exception_ptr err;
        try {
          ex = make_batch(*dataset_, e->batches[b], options_.pin_memory);
        } catch (...) {
          err = std::current_exception();
        }
        {
          std::lock_guard<std::mutex> lock(e->mutex);
          e->ready[b] = std::move(ex);
          e->errors[b] = err;
          e->done[b] = true;
        }
        e->cv.notify_all();
      }
    });
  }
  current_ = std::move(epoch);
  return Iterator(this, 0);
}

DataLoader::Iterator DataLoader::end() { return Iterator(this, size()); }

Example DataLoader::fetch(size_t b) {
  // torch.profiler's name for the wait for the next batch.
  profiler::RecordScope record(profiler::EventKind::DataLoader,
                               "enumerate(DataLoader)#DataLoader.__next__");
  Epoch& e = *current_;
  if (e.workers.empty()) return make_batch(*dataset_, e.batches[b], options_.pin_memory);
  std::unique_lock<std::mutex> lock(e.mutex);
  e.cv.wait(lock, [&] { return e.done[b]; });
  Example ex = std::move(e.ready[b]);
  std::exception_ptr err = e.errors[b];
  e.consumed = b + 1;
  lock.unlock();
  e.cv.notify_all();
  if (err) std::rethrow_exception(err);
  return ex;
}

DataLoader::Iterator::Iterator(DataLoader* loader, size_t index) : loader_(loader), index_(index) {
  if (index_ < loader_->size()) current_ = loader_->fetch(index_);
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  ++index_;
  current_ = index_ < loader_->size() ? loader_->fetch(index_) : Example();
  return *this;
}

}  // namespace ember::data
