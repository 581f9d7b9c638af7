// The process group over Gloo (CPU tensors, TCP between ranks). When ember is built without
// Gloo, create() is an error that says so (no_gloo/process_group_gloo.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ember/distributed/process_group.h"
#include "ember/distributed/store.h"

namespace ember::distributed {

struct GlooOptions {
  std::chrono::milliseconds timeout = kDefaultTimeout;  // per collective
  /// The address other ranks reach this one at; "127.0.0.1" for one machine.
  std::string hostname = "127.0.0.1";
  /// A group of new_group's: the default group's rank of each of its ranks, so that its errors
  /// name a dead rank in both numberings. Empty for the default group.
  std::vector<int> global_ranks;
};

/// Whether this build of ember has the Gloo backend.
bool gloo_available();

/// Joins the group through `store` (every rank calls this with the same store and size); blocks
/// until every rank has joined or the store's timeout passes.
std::shared_ptr<ProcessGroup> make_gloo_process_group(std::shared_ptr<Store> store, int rank,
                                                      int size, const GlooOptions& options = {});

}  // namespace ember::distributed
