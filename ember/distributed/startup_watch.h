// Bounds a start-up that every rank of a group must reach before any can go on: NCCL's
// communicator initialisation waits for ever for a rank that never comes. The ranks first sign in
// on the group's rendezvous store, so a rank that waited too long can say which ranks never came,
// and a rank the store saw die is named within about a second instead of at the timeout.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/distributed/store.h"

namespace ember::distributed {

class StartupWatch {
 public:
  /// Signs `rank` of `size` in on `store` (the group's own store) and starts the clock: the whole
  /// start-up must finish within `timeout`. `what` names it in errors ("the NCCL communicator").
  /// global_ranks: as for describe_dead_ranks (empty for the default group).
  StartupWatch(std::shared_ptr<Store> store, std::string what, int rank, int size,
               std::chrono::milliseconds timeout, std::vector<int> global_ranks = {});

  /// Rank 0's make() on every rank (NCCL's unique id): rank 0 publishes it, the others wait for
  /// it as wait_until does.
  Bytes share_from_rank0(const std::function<Bytes()>& make);

  /// Calls `done` until it returns true, at most once per `period`. When `done` throws, when the
  /// store knows that a rank of the group died, or when the start-up's time is up, calls
  /// `abandon` (NCCL: abort the communicator) and throws an ember::Error that says why: the error,
  /// the dead rank, or the ranks that never signed in.
  void wait_until(const std::function<bool()>& done, const std::function<void()>& abandon,
                  std::chrono::milliseconds period);

  /// The group's ranks that have not signed in, ascending (asks the store; does not wait).
  std::vector<int> missing();

 private:
  using Clock = std::chrono::steady_clock;
  std::string arrived_key(int rank) const;
  /// Waits up to `slice` for `key`: false when it is not there by then; other errors throw.
  bool key_within(const std::string& key, std::chrono::milliseconds slice);
  /// Why the start-up timed out: who never signed in.
  std::string timed_out_text();
  /// Calls abandon (which must not throw), then throws the start-up's error saying `why`.
  [[noreturn]] void fail(const std::string& why, const std::function<void()>& abandon);

  std::shared_ptr<Store> store_;
  std::string what_;
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::vector<int> global_ranks_;
  Clock::time_point deadline_;
};

/// "rank 1", "ranks 1 and 3", "ranks 0, 2 and 5" in a group's numbering; in a group of
/// new_group's (global_ranks[i]: the default group's rank of its rank i) each with its global
/// rank, "rank 1 (global rank 3)". Long lists end with "and N more".
std::string describe_ranks(const std::vector<int>& ranks,
                           const std::vector<int>& global_ranks = {});

}  // namespace ember::distributed
