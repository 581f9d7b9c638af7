// The elastic agents' rendezvous, over ember's TCPStore (torchrun's c10d rendezvous, simplified).
// Note [Elastic rendezvous]: the agents of a job meet in numbered rounds under
// "rdzv/<run id>/". A round admits nodes until max_nodes have joined; once min_nodes have, it
// also closes when last_call_timeout has passed or, at a restart, when every agent still alive
// has joined (so a restart does not wait for nodes that are gone). An agent
// that comes after a round closed waits; the agents of the running round see it and restart the
// group (if there is room), so it is admitted in the next round. A failure, a dead agent or a
// waiting node ends the round for every agent; the job's failures and its restart count live in
// the store, so every node reports the same.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ember/distributed/store.h"

namespace ember::distributed {

struct RendezvousOptions {
  std::string host = "127.0.0.1";  // the store's endpoint
  int port = 29400;
  std::string run_id = "none";
  int min_nodes = 1;
  int max_nodes = 1;
  int local_world_size = 1;  // the ranks this node brings
  std::chrono::milliseconds join_timeout = std::chrono::seconds(600);
  std::chrono::milliseconds last_call_timeout = std::chrono::seconds(30);
};

struct RendezvousNode {
  int agent = 0;             // the agent's id in the job (1, 2, ... in the order they started)
  std::string address;       // where the other nodes reach it
  int local_world_size = 0;  // its ranks
  int master_port = 0;       // a free port of its own, for rank 0's store if it is node 0
};

/// A closed round.
struct RendezvousInfo {
  int round = 0;
  int group_rank = 0;                 // this node's place in `nodes`
  std::vector<RendezvousNode> nodes;  // by group rank (ordered by agent id)
  int restart_count = 0;              // rounds that ended with a failure before this one
  int world_size() const;
  /// The global rank of this node's local rank 0.
  int rank_offset() const;
};

/// Why the running round must end, as far as the store knows.
struct RoundEnd {
  enum Kind { kNone, kRequested, kNodesWaiting, kAgentLost } kind = kNone;
  std::string why;  // kNodesWaiting and kAgentLost: for the agent's report
};

/// A failure of the job, as every node reports it.
struct JobFailure {
  int restart = 0;  // the restart count of the round it happened in
  int exit_code = 1;
  std::string text;  // "restart 0: rank 1 (local rank 1) on node 1 (10.1.0.2, pid 345) ..."
};

class Rendezvous {
 public:
  /// Connects to the store at host:port, or serves it when host is an address of this machine
  /// and the port is free there; gets this agent's id. An ember::Error when the store cannot be
  /// reached within join_timeout.
  explicit Rendezvous(const RendezvousOptions& options);
  /// Tells the others this agent is gone. Never throws.
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  /// Joins the next round and returns once it closed with this node in it. An ember::Error when
  /// fewer than min_nodes joined within join_timeout, or when the job ended meanwhile
  /// (job_finished() then says so).
  RendezvousInfo next_rendezvous();
  /// Polled while the round's ranks run (a few store requests).
  RoundEnd check_round();
  /// Ends the current round for every agent.
  void request_restart();
  /// Adds to the job's failures; the first failure of a round adds a restart.
  void record_failure(const JobFailure& failure);
  std::vector<JobFailure> failures();
  /// The restarts the job's failures have used so far.
  int restart_count();
  /// This node's ranks all ended well in the current round; when every node's did, the job has
  /// succeeded (agents that join later end at once).
  void mark_succeeded();
  /// Marks the job as failed for good, for agents that join later.
  void mark_failed();
  /// 0: running; 1: succeeded; 2: failed.
  int job_state();

  /// The agent serving the store calls this before it leaves: waits until every other agent left
  /// or died (one that vanished is dead within about 5 s). Never throws.
  void wait_for_other_agents();

  /// This node's address as the other nodes reach it.
  const std::string& address() const { return address_; }
  bool serves_store() const { return serves_; }
  int agent_id() const { return agent_; }

 private:
  std::string key(const std::string& name) const { return prefix_ + name; }
  std::string round_key(int round, const std::string& name) const;
  int64_t counter(const std::string& name);  // 0 when never added to
  int join(int round, std::chrono::steady_clock::time_point deadline);
  void close(int round);
  bool every_live_agent_joined(int round, int64_t joined);
  std::vector<int> live_agents();
  void wait_while_late(int round, std::chrono::steady_clock::time_point deadline);
  RendezvousInfo read_round(int round);

  RendezvousOptions options_;
  std::string prefix_;
  std::shared_ptr<TCPStore> store_;
  bool serves_ = false;
  int agent_ = 0;
  std::string address_;
  int round_ = -1;  // the round this agent is in
  RendezvousInfo info_;
};

}  // namespace ember::distributed
