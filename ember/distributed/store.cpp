#include "ember/distributed/store.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "ember/core/error.h"
#include "ember/core/scope_guard.h"

namespace ember::distributed {
namespace {

using Clock = std::chrono::steady_clock;

std::string join_keys(const std::vector<std::string>& keys) {
  std::string s;
  for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

[[noreturn]] void throw_wait_timeout(const std::vector<std::string>& keys,
                                     std::chrono::milliseconds timeout) {
  EMBER_FAIL("[store] timed out after ", timeout.count(), " ms waiting for keys ", join_keys(keys),
             " (did every rank start, with the same world size?)");
}

Bytes encode_int(int64_t v) {
  return Bytes(reinterpret_cast<char*>(&v), reinterpret_cast<char*>(&v) + 8);
}
int64_t decode_int(const Bytes& b) {
  int64_t v = 0;
  if (b.size() == 8) std::memcpy(&v, b.data(), 8);
  return v;
}

}  // namespace

namespace {

// How describe_dead_ranks names the global rank `global`: "rank 3" in the default group,
// "rank 1 (global rank 3)" in a group of new_group's, "" when it is not in the group.
std::string rank_name(int global, const std::vector<int>& global_ranks) {
  if (global_ranks.empty()) return "rank " + std::to_string(global);
  auto it = std::find(global_ranks.begin(), global_ranks.end(), global);
  if (it == global_ranks.end()) return "";
  return detail::str_cat("rank ", it - global_ranks.begin(), " (global rank ", global, ")");
}

}  // namespace

std::string describe_dead_ranks(Store& store, std::chrono::milliseconds grace,
                                const std::vector<int>& global_ranks) {
  if (!store.tracks_ranks()) return "";
  auto deadline = Clock::now() + grace;
  try {
    for (;;) {
      std::vector<std::string> dead;
      for (int global : store.dead_ranks()) {
        std::string name = rank_name(global, global_ranks);
        if (!name.empty()) dead.push_back(std::move(name));
      }
      if (!dead.empty()) {
        // TCPStore lists them in the order they died: the first is the likely cause, the others
        // may have failed because of it. FileStore lists them as some rank first saw them dead.
        std::string also;
        for (size_t i = 1; i < dead.size(); ++i) also += (i == 1 ? "; also " : ", ") + dead[i];
        return detail::str_cat(dead[0],
                               " exited or died without leaving the group (as the rendezvous "
                               "store saw",
                               also, "); ");
      }
      if (Clock::now() >= deadline) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  } catch (const std::exception&) {
    std::string server = rank_name(0, global_ranks);
    return (server.empty() ? "global rank 0" : server) +
           ", which serves the rendezvous store, died or cannot be reached; ";
  }
}

// --- PrefixStore --------------------------------------------------------------------------------

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> store)
    : Store(store->timeout()), prefix_(std::move(prefix) + "/"), store_(std::move(store)) {}
void PrefixStore::set(const std::string& key, const Bytes& value) {
  store_->set(prefix_ + key, value);
}
Bytes PrefixStore::get(const std::string& key) { return store_->get(prefix_ + key); }
int64_t PrefixStore::add(const std::string& key, int64_t delta) {
  return store_->add(prefix_ + key, delta);
}
void PrefixStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::vector<std::string> prefixed;
  for (const auto& k : keys) prefixed.push_back(prefix_ + k);
  store_->wait(prefixed, timeout);
}

// --- HashStore ----------------------------------------------------------------------------------

void HashStore::set(const std::string& key, const Bytes& value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    map_[key] = value;
  }
  changed_.notify_all();
}

Bytes HashStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::lock_guard<std::mutex> lock(mutex_);
  return map_.at(key);
}

int64_t HashStore::add(const std::string& key, int64_t delta) {
  int64_t sum;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    sum = (it == map_.end() ? 0 : decode_int(it->second)) + delta;
    map_[key] = encode_int(sum);
  }
  changed_.notify_all();
  return sum;
}

void HashStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  bool ok = changed_.wait_for(lock, timeout, [&] {
    for (const auto& k : keys)
      if (!map_.count(k)) return false;
    return true;
  });
  if (!ok) throw_wait_timeout(keys, timeout);
}

// --- FileStore ----------------------------------------------------------------------------------

FileStore::FileStore(std::string directory, std::chrono::milliseconds timeout)
    : Store(timeout), directory_(std::move(directory)) {
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  EMBER_CHECK(!ec, "[FileStore] cannot create directory '", directory_, "': ", ec.message());
}

FileStore::~FileStore() {
  if (rank_fd_ >= 0) ::close(rank_fd_);
}

std::optional<int64_t> FileStore::read_int(const std::string& key) const {
  if (!std::filesystem::exists(path(key))) return std::nullopt;
  std::ifstream in(path(key), std::ios::binary);
  return decode_int(Bytes(std::istreambuf_iterator<char>(in), {}));
}

template <typename F>
auto FileStore::locked(F f) {
  std::string lock_path = directory_ + "/.lock";
  int fd = ::open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  EMBER_CHECK(fd >= 0, "[FileStore] cannot open '", lock_path, "': ", std::strerror(errno));
  ::flock(fd, LOCK_EX);
  ScopeGuard unlock([fd] { ::close(fd); });  // closing releases the lock
  return f();
}

std::string FileStore::rank_path(int rank) const {
  return directory_ + "/rank-" + std::to_string(rank) + "-alive";  // '-': never a key's file
}

void FileStore::register_rank(int rank) {
  EMBER_CHECK(rank_ < 0, "[FileStore] this store already registered rank ", rank_);
  std::string p = rank_path(rank);
  int fd = ::open(p.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  EMBER_CHECK(fd >= 0, "[FileStore] cannot open '", p, "': ", std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    EMBER_FAIL("[init_process_group] rank ", rank, " is already running with the store in '",
               directory_, "' (another job uses the same file:// path?)");
  }
  rank_ = rank;
  rank_fd_ = fd;
}

void FileStore::leave() {
  if (rank_fd_ < 0) return;
  ::unlink(rank_path(rank_).c_str());  // first: a released lock on a file still there means dead
  ::close(rank_fd_);
  rank_fd_ = -1;
}

std::vector<int> FileStore::dead_ranks() {
  std::vector<int> dead;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory_, ec)) {
    std::string name = entry.path().filename().string();
    int rank = -1, end = 0;
    if (std::sscanf(name.c_str(), "rank-%d-alive%n", &rank, &end) != 1 ||
        end != static_cast<int>(name.size()) || rank == rank_)
      continue;
    int fd = ::open(entry.path().c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;  // it left meanwhile
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) dead.push_back(rank);
    ::close(fd);
  }
  // In the order they were first seen dead (a rank that failed because of another's death saw
  // that one first), ranks seen together ascending.
  std::vector<std::pair<int64_t, int>> ordered;
  for (int rank : dead) ordered.emplace_back(death_order(rank), rank);
  std::sort(ordered.begin(), ordered.end());
  for (size_t i = 0; i < ordered.size(); ++i) dead[i] = ordered[i].second;
  return dead;
}

int64_t FileStore::death_order(int rank) {
  return locked([&] {
    std::string key = "rank-death-order." + std::to_string(rank), count = "rank-death-count";
    if (std::optional<int64_t> seen = read_int(key)) return *seen;
    int64_t n = read_int(count).value_or(0) + 1;
    set(count, encode_int(n));
    set(key, encode_int(n));
    return n;
  });
}

std::string FileStore::path(const std::string& key) const {
  std::string name;
  for (char c : key) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '.';
  return directory_ + "/" + name;
}

void FileStore::set(const std::string& key, const Bytes& value) {
  std::string final_path = path(key);
  std::string tmp = final_path + ".tmp." + std::to_string(::getpid()) + "." +
                    std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(value.data(), static_cast<std::streamsize>(value.size()));
    EMBER_CHECK(out.good(), "[FileStore] cannot write '", tmp, "'");
  }
  EMBER_CHECK(std::rename(tmp.c_str(), final_path.c_str()) == 0, "[FileStore] cannot rename '", tmp,
              "': ", std::strerror(errno));
}

Bytes FileStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::ifstream in(path(key), std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  return locked([&] {
    int64_t sum = read_int(key).value_or(0) + delta;
    set(key, encode_int(sum));
    return sum;
  });
}

void FileStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    bool all = true;
    for (const auto& k : keys) all = all && std::filesystem::exists(path(k));
    if (all) return;
    if (Clock::now() > deadline) throw_wait_timeout(keys, timeout);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// --- TCPStore -----------------------------------------------------------------------------------
// Requests: command byte, key (u32 length + bytes), value (u32 length + bytes). Replies: value.
// 'S' set (empty reply), 'G' get of a present key, 'A' add (value and reply: int64),
// 'W' wait (value: int64 milliseconds; reply: one byte, 1 when every key is set), 'R' register
// the connection's rank (value: int64), 'Q' a clean goodbye, 'D' dead ranks (reply: int64s).

namespace {

void send_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    EMBER_CHECK(w > 0, "[TCPStore] lost the connection to the store: ", std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

bool recv_all(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void send_bytes(int fd, const std::string& s) {
  uint32_t n = static_cast<uint32_t>(s.size());
  send_all(fd, &n, 4);
  send_all(fd, s.data(), n);
}

bool recv_bytes(int fd, std::string& s) {
  uint32_t n;
  if (!recv_all(fd, &n, 4)) return false;
  s.resize(n);
  return recv_all(fd, s.data(), n);
}

// Note [Store connections notice a vanished host]: a peer that dies closes its connections and
// the other side sees it at once, but one whose machine vanishes (powered off, unplugged, its
// network namespace gone) sends nothing more, and an idle TCP connection would stay open for
// hours. Keepalive probes after 2 s of silence, every second, 3 unanswered: the connection fails
// about 5 s after the host went, so the server counts that rank as dead and a client's next
// request fails instead of waiting for ever. The kernel answers probes, so a rank that is busy
// or stopped is not mistaken for a dead one.
constexpr int kKeepaliveIdleSeconds = 2, kKeepaliveIntervalSeconds = 1, kKeepaliveProbes = 3;

void configure_socket(int fd) {
  int one = 1, idle = kKeepaliveIdleSeconds, interval = kKeepaliveIntervalSeconds,
      probes = kKeepaliveProbes;
  unsigned user_timeout_ms = 1000u * (idle + interval * probes);
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
  // Also bounds how long sent data may stay unacknowledged before the connection fails.
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof(user_timeout_ms));
}

// Connects within `timeout` (a blocking connect to a host that drops packets would wait about
// two minutes); returns the socket, or -1 with `error` set.
int connect_within(const addrinfo& a, std::chrono::milliseconds timeout, std::string& error) {
  int fd = ::socket(a.ai_family, a.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a.ai_protocol);
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  int rc = ::connect(fd, a.ai_addr, a.ai_addrlen);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, timeout.count())));
    int err = 0;
    socklen_t len = sizeof(err);
    if (ready == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
      rc = 0;
    else
      errno = ready == 0 ? ETIMEDOUT : (err ? err : errno);
  }
  if (rc != 0) {
    error = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace

class TCPStore::Server {
 public:
  explicit Server(int port) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EMBER_CHECK(listen_fd_ >= 0, "[TCPStore] socket: ", std::strerror(errno));
    int one = 1, zero = 0;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_addr = in6addr_any;
    addr.sin6_port = htons(static_cast<uint16_t>(port));
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listen_fd_, 128) != 0) {
      int err = errno;
      ::close(listen_fd_);
      EMBER_FAIL("[TCPStore] cannot listen on port ", port, ": ", std::strerror(err),
                 " (is another job using it? choose another MASTER_PORT)");
    }
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin6_port);
    accept_thread_ = std::thread([this] { accept_loop(); });
  }

  // Note [The store outlives rank 0 a little]: when rank 0 ends, the other ranks may still be
  // asking which rank died; the server waits (3 s at most) for their connections to close.
  ~Server() {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait_for(lock, std::chrono::seconds(3), [this] { return active_ == 0; });
    }
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int fd : clients_) ::shutdown(fd, SHUT_RDWR);
    }
    changed_.notify_all();
    accept_thread_.join();
    for (auto& t : threads_) t.join();
    for (int fd : clients_) ::close(fd);
    ::close(listen_fd_);
  }

  int port() const { return port_; }

 private:
  void accept_loop() {
    while (!stop_) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (stop_) return;
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;
      }
      configure_socket(fd);
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) {
        ::close(fd);
        return;
      }
      clients_.push_back(fd);
      ++active_;
      threads_.emplace_back([this, fd] { serve(fd); });
    }
  }

  void serve(int fd) {
    int64_t rank = -1;
    bool clean = false;
    try {
      for (;;) {
        char command;
        std::string key, value;
        if (!recv_all(fd, &command, 1) || !recv_bytes(fd, key) || !recv_bytes(fd, value)) break;
        if (command == 'R') std::memcpy(&rank, value.data(), std::min<size_t>(8, value.size()));
        if (command == 'Q') clean = true;
        std::string reply = handle(command, key, value);
        send_bytes(fd, reply);
      }
    } catch (const std::exception&) {
      // A client that went away ends its connection only.
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (rank >= 0 && !clean && !stop_)
      dead_.push_back(static_cast<int>(rank));  // it exited or died without leaving
    --active_;
    changed_.notify_all();
  }

  std::string handle(char command, const std::string& key, const std::string& value) {
    std::unique_lock<std::mutex> lock(mutex_);
    switch (command) {
      case 'S':
        map_[key] = value;
        changed_.notify_all();
        return {};
      case 'G': {
        auto it = map_.find(key);
        return it == map_.end() ? std::string() : it->second;
      }
      case 'A': {
        int64_t delta = 0, sum = 0;
        std::memcpy(&delta, value.data(), std::min<size_t>(8, value.size()));
        auto it = map_.find(key);
        if (it != map_.end() && it->second.size() == 8) std::memcpy(&sum, it->second.data(), 8);
        sum += delta;
        map_[key] = std::string(reinterpret_cast<char*>(&sum), 8);
        changed_.notify_all();
        return map_[key];
      }
      case 'W': {
        int64_t ms = 0;
        std::memcpy(&ms, value.data(), std::min<size_t>(8, value.size()));
        std::vector<std::string> keys;
        std::istringstream in(key);
        for (std::string k; std::getline(in, k, '\n');) keys.push_back(k);
        bool ok = changed_.wait_for(lock, std::chrono::milliseconds(ms), [&] {
          if (stop_) return true;
          for (const auto& k : keys)
            if (!map_.count(k)) return false;
          return true;
        });
        return std::string(1, ok && !stop_ ? 1 : 0);
      }
      case 'D': {
        std::string out;
        for (int r : dead_) out.append(reinterpret_cast<const char*>(&r), sizeof(r));
        return out;
      }
      default:
        return {};
    }
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread accept_thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<int> clients_;
  std::vector<std::thread> threads_;
  std::unordered_map<std::string, std::string> map_;
  std::vector<int> dead_;  // ranks whose connection closed without a goodbye, in order
  int active_ = 0;         // open client connections
};

TCPStore::TCPStore(const std::string& host, int port, bool is_server,
                   std::chrono::milliseconds timeout)
    : Store(timeout), host_(host), port_(port) {
  if (is_server) {
    server_ = std::make_unique<Server>(port);
    port_ = server_->port();
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  auto deadline = Clock::now() + timeout;
  std::string last_error;
  while (socket_ < 0) {
    addrinfo* res = nullptr;
    int rc = ::getaddrinfo(host.c_str(), std::to_string(port_).c_str(), &hints, &res);
    EMBER_CHECK(rc == 0, "[TCPStore] cannot resolve '", host, "': ", ::gai_strerror(rc));
    for (addrinfo* a = res; a && socket_ < 0; a = a->ai_next) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      socket_ =
          connect_within(*a,
                         std::min<std::chrono::milliseconds>(
                             std::max(left, std::chrono::milliseconds(1)), std::chrono::seconds(1)),
                         last_error);
    }
    ::freeaddrinfo(res);
    if (socket_ >= 0) break;
    EMBER_CHECK(Clock::now() < deadline, "[TCPStore] could not connect to the store at ", host, ":",
                port_, " within ", timeout.count(), " ms: ", last_error,
                " (is rank 0 running, with the same MASTER_ADDR and MASTER_PORT?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  configure_socket(socket_);
}

TCPStore::~TCPStore() {
  if (socket_ >= 0) ::close(socket_);
}

std::string TCPStore::local_address() const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  char text[INET6_ADDRSTRLEN] = {};
  EMBER_CHECK(::getsockname(socket_, reinterpret_cast<sockaddr*>(&addr), &len) == 0,
              "[TCPStore] getsockname: ", std::strerror(errno));
  if (addr.ss_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&addr)->sin_addr, text, sizeof(text));
  else
    ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr, text, sizeof(text));
  std::string s = text;
  return s.rfind("::ffff:", 0) == 0 ? s.substr(7) : s;  // an IPv4 peer of a dual-stack socket
}

void TCPStore::register_rank(int rank) {
  request('R', "", encode_int(rank));
  registered_ = true;
}

void TCPStore::leave() {
  if (registered_) request('Q', "", {});
}

std::vector<int> TCPStore::dead_ranks() {
  Bytes reply = request('D', "", {});
  std::vector<int> out(reply.size() / sizeof(int));
  if (!out.empty()) std::memcpy(out.data(), reply.data(), out.size() * sizeof(int));
  return out;
}

Bytes TCPStore::request(char command, const std::string& key, const Bytes& value) {
  std::lock_guard<std::mutex> lock(mutex_);
  send_all(socket_, &command, 1);
  send_bytes(socket_, key);
  send_bytes(socket_, std::string(value.begin(), value.end()));
  std::string reply;
  EMBER_CHECK(recv_bytes(socket_, reply), "[TCPStore] the store at ", host_, ":", port_,
              " closed the connection (did rank 0 exit?)");
  return Bytes(reply.begin(), reply.end());
}

void TCPStore::set(const std::string& key, const Bytes& value) { request('S', key, value); }

Bytes TCPStore::get(const std::string& key) {
  wait({key}, timeout_);
  return request('G', key, {});
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  return decode_int(request('A', key, encode_int(delta)));
}

void TCPStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::string joined;
  for (const auto& k : keys) joined += (joined.empty() ? "" : "\n") + k;
  Bytes reply = request('W', joined, encode_int(timeout.count()));
  if (reply.size() != 1 || reply[0] != 1) throw_wait_timeout(keys, timeout);
}

}  // namespace ember::distributed
