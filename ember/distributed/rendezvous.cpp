#include "ember/distributed/rendezvous.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "ember/core/error.h"

namespace ember::distributed {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A round's "count" holds the joins plus kClosed once it closed: one atomic add both admits an
// agent and tells it whether it came too late, and the first add of kClosed tells its caller it
// closes the round (Note [Elastic rendezvous]).
constexpr int64_t kClosed = int64_t{1} << 32;
constexpr milliseconds kPoll{20};

// Runs fn on a socket bound to (host, port) for each of host's addresses until fn returns true.
template <typename Fn>
bool for_each_bound_socket(const std::string& host, int port, Fn fn) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return false;
  bool done = false;
  for (addrinfo* a = res; a && !done; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0) done = fn(fd);
    ::close(fd);
  }
  ::freeaddrinfo(res);
  return done;
}

// Whether `host` is an address of this machine (binding to it works only then).
bool is_local_address(const std::string& host) {
  return for_each_bound_socket(host, 0, [](int) { return true; });
}

// A port free on `address` now, for rank 0's store should this node be node 0 (as torchrun
// picks one); 0 when none could be had.
int free_port(const std::string& address) {
  int port = 0;
  for_each_bound_socket(address, 0, [&](int fd) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return false;
    port = ntohs(addr.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&addr)->sin_port
                                           : reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    return true;
  });
  return port;
}

Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string to_string(const Bytes& b) { return std::string(b.begin(), b.end()); }

std::string encode(const RendezvousNode& n) {
  return detail::str_cat(n.agent, " ", n.address, " ", n.local_world_size, " ", n.master_port);
}

RendezvousNode decode_node(const std::string& s) {
  RendezvousNode n;
  std::istringstream in(s);
  in >> n.agent >> n.address >> n.local_world_size >> n.master_port;
  EMBER_ASSERT(!in.fail(), "[rendezvous] malformed node record '", s, "'");
  return n;
}

std::shared_ptr<TCPStore> connect_store(const RendezvousOptions& o, bool& serves) {
  serves = false;
  if (is_local_address(o.host)) {
    try {
      auto store = std::make_shared<TCPStore>(o.host, o.port, /*is_server=*/true, o.join_timeout);
      serves = true;
      return store;
    } catch (const Error&) {
      // The port is taken: most likely another agent of this machine serves the store.
    }
  }
  try {
    return std::make_shared<TCPStore>(o.host, o.port, /*is_server=*/false, o.join_timeout);
  } catch (const Error& e) {
    EMBER_FAIL(
        "[rendezvous] cannot reach the rendezvous store at ", o.host, ":", o.port,
        " within the join timeout of ", o.join_timeout.count(),
        " ms (is the agent on that host running, with the same --rdzv-endpoint?): ", e.what());
  }
}

}  // namespace

int RendezvousInfo::world_size() const {
  int n = 0;
  for (const RendezvousNode& node : nodes) n += node.local_world_size;
  return n;
}

int RendezvousInfo::rank_offset() const {
  int n = 0;
  for (int g = 0; g < group_rank; ++g) n += nodes[static_cast<size_t>(g)].local_world_size;
  return n;
}

Rendezvous::Rendezvous(const RendezvousOptions& options)
    : options_(options), prefix_("rdzv/" + options.run_id + "/") {
  EMBER_CHECK(options.min_nodes >= 1 && options.max_nodes >= options.min_nodes,
              "[rendezvous] expected 1 <= min nodes <= max nodes, got ", options.min_nodes, ":",
              options.max_nodes);
  store_ = connect_store(options, serves_);
  agent_ = static_cast<int>(store_->add(key("agents"), 1));
  store_->register_rank(agent_);
  address_ = store_->local_address();
}

Rendezvous::~Rendezvous() {
  try {
    store_->add(key("agent" + std::to_string(agent_) + "/gone"), 1);
    store_->leave();
  } catch (...) {
    // Leaving a job whose store is gone: nothing is left to tell.
  }
}

void Rendezvous::wait_for_other_agents() {
  try {
    for (;;) {
      std::vector<int> live = live_agents();
      if (live.empty() || live == std::vector<int>{agent_}) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  } catch (...) {
    // Our own store: it cannot fail but by a bug, and then there is nobody left to wait for.
  }
}

std::string Rendezvous::round_key(int round, const std::string& name) const {
  return key("r" + std::to_string(round) + "/" + name);
}

int64_t Rendezvous::counter(const std::string& name) { return store_->add(name, 0); }

std::vector<int> Rendezvous::live_agents() {
  int64_t agents = counter(key("agents"));
  std::vector<int> dead = store_->dead_ranks();
  std::vector<int> live;
  for (int id = 1; id <= agents; ++id)
    if (std::find(dead.begin(), dead.end(), id) == dead.end() &&
        counter(key("agent" + std::to_string(id) + "/gone")) == 0)
      live.push_back(id);
  return live;
}

bool Rendezvous::every_live_agent_joined(int round, int64_t joined) {
  std::set<int> in_round;
  for (int64_t s = 0; s < joined; ++s)
    in_round.insert(
        decode_node(to_string(store_->get(round_key(round, "node" + std::to_string(s))))).agent);
  for (int id : live_agents())
    if (!in_round.count(id)) return false;
  return true;
}

void Rendezvous::close(int round) {
  int64_t v = store_->add(round_key(round, "count"), kClosed);
  if (v >= 2 * kClosed) return;  // another agent closed it
  int64_t admitted = std::min<int64_t>(v - kClosed, options_.max_nodes);
  store_->set(round_key(round, "closed"),
              to_bytes(detail::str_cat(admitted, " ", restart_count())));
  store_->add(round_key(round, "closed_flag"), 1);
  store_->add(key("latest"), round - counter(key("latest")));  // rounds close in order
}

// Returns this agent's slot in the round, or -1 when it came too late for it.
int Rendezvous::join(int round, Clock::time_point deadline) {
  int64_t v = store_->add(round_key(round, "count"), 1);
  if (v > kClosed || v > options_.max_nodes) return -1;
  int slot = static_cast<int>(v - 1);
  RendezvousNode me{agent_, address_, options_.local_world_size, free_port(address_)};
  store_->set(round_key(round, "node" + std::to_string(slot)), to_bytes(encode(me)));
  std::optional<Clock::time_point> min_reached;
  while (counter(round_key(round, "closed_flag")) == 0) {
    int64_t joined = counter(round_key(round, "count"));
    if (joined < kClosed) {
      if (joined >= options_.max_nodes) {
        close(round);
      } else if (joined >= options_.min_nodes) {
        if (!min_reached) min_reached = Clock::now();
        // At a restart the agents are known: the round need not wait for any other. At the
        // job's start they are not (nodes start at different times): it waits the last call.
        if (Clock::now() - *min_reached >= options_.last_call_timeout ||
            (round > 0 && every_live_agent_joined(round, joined)))
          close(round);
      } else if (Clock::now() > deadline) {
        EMBER_FAIL("[rendezvous] only ", joined, " of the at least ", options_.min_nodes,
                   " nodes joined round ", round, " of job '", options_.run_id,
                   "' within the join timeout of ", options_.join_timeout.count(), " ms");
      }
    }
    std::this_thread::sleep_for(kPoll);
  }
  return slot;
}

void Rendezvous::wait_while_late(int round, Clock::time_point deadline) {
  store_->add(round_key(round, "waiting"), 1);
  while (counter(round_key(round, "restart")) == 0) {
    EMBER_CHECK(job_state() == 0, "[rendezvous] job '", options_.run_id, "' already ",
                job_state() == 1 ? "succeeded" : "failed", "; this node was not needed");
    EMBER_CHECK(Clock::now() < deadline, "[rendezvous] round ", round, " of job '", options_.run_id,
                "' ran full (", options_.max_nodes, " nodes) for the whole join timeout of ",
                options_.join_timeout.count(), " ms; this node could not join");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

RendezvousInfo Rendezvous::read_round(int round) {
  std::istringstream closed(to_string(store_->get(round_key(round, "closed"))));
  int admitted = 0;
  RendezvousInfo info;
  info.round = round;
  closed >> admitted >> info.restart_count;
  for (int s = 0; s < admitted; ++s)
    info.nodes.push_back(
        decode_node(to_string(store_->get(round_key(round, "node" + std::to_string(s))))));
  std::sort(info.nodes.begin(), info.nodes.end(),
            [](const RendezvousNode& a, const RendezvousNode& b) { return a.agent < b.agent; });
  info.group_rank = -1;
  for (size_t g = 0; g < info.nodes.size(); ++g)
    if (info.nodes[g].agent == agent_) info.group_rank = static_cast<int>(g);
  return info;
}

RendezvousInfo Rendezvous::next_rendezvous() {
  auto deadline = Clock::now() + options_.join_timeout;
  int round = std::max<int>(round_ + 1, static_cast<int>(counter(key("latest"))));
  for (;; ++round) {
    EMBER_CHECK(job_state() == 0, "[rendezvous] job '", options_.run_id, "' already ",
                job_state() == 1 ? "succeeded" : "failed", "; this node was not needed");
    if (join(round, deadline) >= 0) {
      RendezvousInfo info = read_round(round);
      if (info.group_rank >= 0) {
        round_ = round;
        info_ = info;
        return info;
      }
    }
    wait_while_late(round, deadline);
  }
}

RoundEnd Rendezvous::check_round() {
  if (counter(round_key(round_, "restart")) > 0) return {RoundEnd::kRequested, ""};
  if (static_cast<int>(info_.nodes.size()) < options_.max_nodes) {
    if (int64_t waiting = counter(round_key(round_, "waiting")); waiting > 0)
      return {RoundEnd::kNodesWaiting, detail::str_cat(waiting, " node(s) waiting to join")};
  }
  std::vector<int> dead = store_->dead_ranks();
  for (size_t g = 0; g < info_.nodes.size(); ++g) {
    const RendezvousNode& node = info_.nodes[g];
    if (std::find(dead.begin(), dead.end(), node.agent) != dead.end())
      return {RoundEnd::kAgentLost,
              detail::str_cat("restart ", info_.restart_count, ": node ", g, " (", node.address,
                              ") lost: its agent died or lost contact with the rendezvous store")};
  }
  return {};
}

void Rendezvous::request_restart() { store_->add(round_key(round_, "restart"), 1); }

void Rendezvous::record_failure(const JobFailure& failure) {
  int64_t i = store_->add(key("failures"), 1);
  store_->set(
      key("failure" + std::to_string(i)),
      to_bytes(detail::str_cat(failure.restart, " ", failure.exit_code, "\n", failure.text)));
  if (store_->add(round_key(round_, "failed"), 1) == 1) store_->add(key("restarts"), 1);
}

std::vector<JobFailure> Rendezvous::failures() {
  std::vector<JobFailure> out;
  int64_t n = counter(key("failures"));
  for (int64_t i = 1; i <= n; ++i) {
    std::string s = to_string(store_->get(key("failure" + std::to_string(i))));
    size_t nl = s.find('\n');
    int restart = 0, code = 1;
    std::sscanf(s.substr(0, nl).c_str(), "%d %d", &restart, &code);
    out.push_back({restart, code, nl == std::string::npos ? "" : s.substr(nl + 1)});
  }
  return out;
}

int Rendezvous::restart_count() { return static_cast<int>(counter(key("restarts"))); }

void Rendezvous::mark_succeeded() {
  if (store_->add(round_key(round_, "succeeded"), 1) >= static_cast<int64_t>(info_.nodes.size()))
    store_->add(key("job_succeeded"), 1);
}

void Rendezvous::mark_failed() { store_->add(key("job_failed"), 1); }

int Rendezvous::job_state() {
  if (counter(key("job_failed")) > 0) return 2;
  if (counter(key("job_succeeded")) > 0) return 1;
  return 0;
}

}  // namespace ember::distributed
