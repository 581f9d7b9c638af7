#include "ember/distributed/startup_watch.h"

#include <algorithm>
#include <thread>

#include "ember/core/error.h"

namespace ember::distributed {
namespace {

// How often a waiting rank asks the store about dead ranks (and, waiting for rank 0's value,
// how long each of its waits on the store lasts).
constexpr std::chrono::milliseconds kStoreCheckEvery{1000};
constexpr size_t kMaxListed = 16;

}  // namespace

std::string describe_ranks(const std::vector<int>& ranks, const std::vector<int>& global_ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  size_t shown = std::min(ranks.size(), kMaxListed);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) s += i + 1 == ranks.size() ? " and " : ", ";
    s += std::to_string(ranks[i]);
    int r = ranks[i];
    if (r >= 0 && static_cast<size_t>(r) < global_ranks.size())
      s += detail::str_cat(" (global rank ", global_ranks[static_cast<size_t>(r)], ")");
  }
  if (shown < ranks.size()) s += detail::str_cat(" and ", ranks.size() - shown, " more");
  return s;
}

StartupWatch::StartupWatch(std::shared_ptr<Store> store, std::string what, int rank, int size,
                           std::chrono::milliseconds timeout, std::vector<int> global_ranks)
    : store_(std::move(store)),
      what_(std::move(what)),
      rank_(rank),
      size_(size),
      timeout_(timeout),
      global_ranks_(std::move(global_ranks)),
      deadline_(Clock::now() + timeout) {
  store_->add(arrived_key(rank_), 1);
}

std::string StartupWatch::arrived_key(int rank) const {
  return "startup/" + what_ + "/arrived/" + std::to_string(rank);
}

std::vector<int> StartupWatch::missing() {
  std::vector<int> absent;
  for (int r = 0; r < size_; ++r)
    if (store_->add(arrived_key(r), 0) == 0) absent.push_back(r);
  return absent;
}

bool StartupWatch::key_within(const std::string& key, std::chrono::milliseconds slice) {
  auto asked = Clock::now();
  try {
    store_->wait({key}, slice);
    return true;
  } catch (const Error&) {
    if (Clock::now() - asked < slice) throw;  // not the wait's timeout: the store itself failed
    return false;
  }
}

Bytes StartupWatch::share_from_rank0(const std::function<Bytes()>& make) {
  std::string key = "startup/" + what_ + "/from_rank0";
  if (rank_ == 0) {
    Bytes value = make();
    store_->set(key, value);
    return value;
  }
  wait_until(
      [&] {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
        return key_within(key, std::clamp(left, std::chrono::milliseconds(1), kStoreCheckEvery));
      },
      [] {}, std::chrono::milliseconds(0));
  return store_->get(key);
}

void StartupWatch::wait_until(const std::function<bool()>& done,
                              const std::function<void()>& abandon,
                              std::chrono::milliseconds period) {
  auto next_dead_check = Clock::now() + kStoreCheckEvery;
  for (;;) {
    auto called = Clock::now();
    try {
      if (done()) return;
    } catch (const std::exception& e) {
      // A failure inside the start-up is often a peer that died: the store may know which.
      fail(describe_dead_ranks(*store_, std::chrono::seconds(1), global_ranks_) + e.what(),
           abandon);
    }
    auto now = Clock::now();
    if (now >= deadline_) fail(timed_out_text(), abandon);
    if (now >= next_dead_check) {
      next_dead_check = now + kStoreCheckEvery;
      std::string dead = describe_dead_ranks(*store_, std::chrono::milliseconds(0), global_ranks_);
      if (!dead.empty()) fail(dead + "the start-up was abandoned", abandon);
    }
    std::this_thread::sleep_until(std::min(called + period, deadline_));
  }
}

std::string StartupWatch::timed_out_text() {
  std::string within = detail::str_cat("within ", timeout_.count(), " ms");
  std::vector<int> absent;
  try {
    absent = missing();
  } catch (const std::exception& e) {
    return "it did not finish " + within +
           ", and the rendezvous store cannot say who arrived: " + e.what();
  }
  if (absent.empty())
    return "every rank arrived, but the start-up did not finish " + within +
           " (can the ranks reach each other over the network?)";
  return describe_ranks(absent, global_ranks_) + " did not arrive " + within +
         " (the rendezvous store has no word from " + (absent.size() == 1 ? "it" : "them") +
         ": started late, or with another world size or rendezvous?)";
}

void StartupWatch::fail(const std::string& why, const std::function<void()>& abandon) {
  abandon();
  EMBER_FAIL("[", global_ranks_.empty() ? "init_process_group" : "new_group", "] rank ", rank_,
             " of ", size_, " could not start ", what_, ": ", why);
}

}  // namespace ember::distributed
