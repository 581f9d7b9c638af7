// Key-value stores for rendezvous: ranks publish their addresses and wait for each other's.
// HashStore for ranks that are threads of one process, FileStore for a shared file system,
// TCPStore (a server in rank 0, like PyTorch's) for env:// and tcp:// rendezvous.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace ember::distributed {

using Bytes = std::vector<char>;

class Store {
 public:
  explicit Store(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  virtual void set(const std::string& key, const Bytes& value) = 0;
  /// Waits (up to the store's timeout) for the key, then returns its value.
  virtual Bytes get(const std::string& key) = 0;
  /// Adds `delta` to the integer stored at key (0 when absent) and returns the sum.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  /// Waits until every key is set; an ember::Error naming the missing keys after `timeout`.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  /// Says which rank this process is, so that its death can be seen by the others (TCPStore:
  /// its connection closes; FileStore: its lock on a file is released). No-op elsewhere.
  virtual void register_rank(int /*rank*/) {}
  /// Ranks known to have died without leaving the group (TCPStore: in the order they died;
  /// FileStore: in the order some rank first saw them dead; empty elsewhere). Lets a failed
  /// collective name the rank it lost.
  virtual std::vector<int> dead_ranks() { return {}; }
  /// Whether dead_ranks() can know anything.
  virtual bool tracks_ranks() const { return false; }
  /// Says goodbye: from now on this rank's closing connection does not count as a death.
  virtual void leave() {}
  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

 protected:
  std::chrono::milliseconds timeout_;
};

/// Why a collective lost its peers, as far as `store` knows: "rank 1 exited or died without
/// leaving the group (...); " (the first to die, then the others), or "" when it knows of none.
/// The store's server sees connections close at about the time the collective fails, so this
/// asks again for up to `grace`. Shared by the backends that name a dead rank in their errors.
/// `global_ranks` maps a group of new_group's ranks to the default group's (global_ranks[i] is
/// the global rank of its rank i; empty for the default group): the store knows global ranks,
/// its user knows the group's, so a dead member is named in both, "rank 1 (global rank 3)", as
/// PyTorch does; dead ranks outside the group did not break its collective and are left out.
std::string describe_dead_ranks(Store& store, std::chrono::milliseconds grace,
                                const std::vector<int>& global_ranks = {});

/// Keys under "prefix/" of another store (one rendezvous per process group).
class PrefixStore final : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::vector<int> dead_ranks() override { return store_->dead_ranks(); }
  bool tracks_ranks() const override { return store_->tracks_ranks(); }
  void register_rank(int rank) override { store_->register_rank(rank); }
  void leave() override { store_->leave(); }

 private:
  std::string prefix_;
  std::shared_ptr<Store> store_;
};

/// In memory, shared by threads of one process.
class HashStore final : public Store {
 public:
  explicit HashStore(std::chrono::milliseconds timeout = std::chrono::seconds(300))
      : Store(timeout) {}
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::unordered_map<std::string, Bytes> map_;
};

/// One file per key in a directory every rank can see (file:///path); writes are atomic
/// renames, counters are guarded by an flock. A registered rank holds an flock on its own file
/// for as long as it is in the group: the kernel drops it when the process dies, however it dies,
/// which is how the others tell a dead rank (as TCPStore's server sees a connection close).
class FileStore final : public Store {
 public:
  FileStore(std::string directory, std::chrono::milliseconds timeout);
  ~FileStore() override;
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  void register_rank(int rank) override;
  std::vector<int> dead_ranks() override;
  bool tracks_ranks() const override { return rank_ >= 0; }
  void leave() override;

 private:
  std::string path(const std::string& key) const;
  std::string rank_path(int rank) const;
  /// f() under the store's lock (a file every process of the store locks).
  template <typename F>
  auto locked(F f);
  std::optional<int64_t> read_int(const std::string& key) const;
  /// The number of `rank` in the order ranks were first seen dead, from 1: whoever sees it dead
  /// first numbers it, under the lock.
  int64_t death_order(int rank);
  std::string directory_;
  int rank_ = -1;     // registered rank
  int rank_fd_ = -1;  // holds the flock on rank_path(rank_)
};

/// A TCP key-value server (started by the rank with is_server) and a client in every rank.
/// Clients retry connecting until the timeout, so ranks may start in any order. Connections use
/// TCP keepalive (Note [Store connections notice a vanished host] in store.cpp): a host that
/// vanishes is a dead rank to the server, and a lost server an error to a client, within about 5 s.
class TCPStore final : public Store {
 public:
  TCPStore(const std::string& host, int port, bool is_server, std::chrono::milliseconds timeout);
  ~TCPStore() override;
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::vector<int> dead_ranks() override;
  bool tracks_ranks() const override { return registered_; }
  void leave() override;
  /// Tells the server which rank this client is: if its connection closes before it left, that
  /// rank counts as dead.
  void register_rank(int rank) override;
  /// The port the server listens on (the one asked for, or the one the system chose for 0).
  int port() const { return port_; }
  /// This machine's address on the connection to the server: where the server's host (and
  /// likely every other host of the job) reaches this one.
  std::string local_address() const;

 private:
  class Server;
  Bytes request(char command, const std::string& key, const Bytes& value);
  std::unique_ptr<Server> server_;
  std::string host_;
  int port_;
  int socket_ = -1;
  bool registered_ = false;
  std::mutex mutex_;  // one request at a time on the client socket
};

}  // namespace ember::distributed
