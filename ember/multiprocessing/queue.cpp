#include "ember/multiprocessing/queue.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <unordered_map>

#include "ember/backend/cuda/ipc.h"
#include "ember/core/shared_memory.h"
#include "ember/multiprocessing/process.h"

namespace ember::multiprocessing {

// --- Value ---------------------------------------------------------------------------------------

Value::Value(const std::map<std::string, Tensor>& state_dict) {
  Dict d;
  for (const auto& [k, t] : state_dict) d.emplace(k, Value(t));
  v_ = std::move(d);
}

Value::Value(const std::vector<std::pair<std::string, Tensor>>& named) {
  Dict d;
  for (const auto& [k, t] : named) d.emplace(k, Value(t));
  v_ = std::move(d);
}

double Value::to_double() const {
  if (const int64_t* i = std::get_if<int64_t>(&v_)) return static_cast<double>(*i);
  return get<double>("a number");
}

std::map<std::string, Tensor> Value::tensor_dict() const {
  std::map<std::string, Tensor> out;
  for (const auto& [k, v] : dict()) out.emplace(k, v.tensor());
  return out;
}

const char* Value::type_name() const {
  static const char* const kNames[] = {"none",   "bool",   "int",  "double",
                                       "string", "tensor", "list", "dict"};
  return kNames[v_.index()];
}

void Value::throw_type(const char* what) const {
  EMBER_FAIL("[multiprocessing::Value] expected ", what, ", got a ", type_name());
}

// --- wire format ---------------------------------------------------------------------------------
// One message: the encoded value, then the table of storages (bytes of each); the storages' memfds
// ride along as SCM_RIGHTS in table order. Views of one storage in one message share one entry, so
// they stay views of one storage in the receiver.

namespace {

constexpr size_t kMaxMessage = 200 << 10;  // bytes: under Linux's default socket buffer
constexpr size_t kMaxFds = 253;            // SCM_MAX_FD

enum Tag : uint8_t { kNone, kBool, kInt, kDouble, kString, kTensor, kList, kDict };

struct Writer {
  std::string bytes;
  std::vector<const StorageImpl*> storages;
  std::unordered_map<const StorageImpl*, uint32_t> storage_index;
  std::unordered_map<const StorageImpl*, Storage> owners;  // CUDA storages

  template <typename T>
  void pod(T v) {
    bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    bytes += s;
  }
  void value(const Value& v) {
    std::visit([&](const auto& x) { write(x); }, v.variant());
  }
  void write(std::monostate) { pod(kNone); }
  void write(bool b) {
    pod(kBool);
    pod<uint8_t>(b);
  }
  void write(int64_t i) {
    pod(kInt);
    pod(i);
  }
  void write(double d) {
    pod(kDouble);
    pod(d);
  }
  void write(const std::string& s) {
    pod(kString);
    str(s);
  }
  void write(const Value::List& l) {
    pod(kList);
    pod<uint64_t>(l.size());
    for (const Value& v : l) value(v);
  }
  void write(const Value::Dict& d) {
    pod(kDict);
    pod<uint64_t>(d.size());
    for (const auto& [k, v] : d) {
      str(k);
      value(v);
    }
  }
  void write(const Tensor& t0) {
    EMBER_CHECK(t0.defined(), "[Queue::put] cannot send an undefined tensor");
    Tensor t = t0;
    if (t.is_cpu()) {
      t.share_memory_();  // Note [Tensors by descriptor]; also checks autograd's rule
    } else {
      EMBER_CHECK(
          t.is_leaf() || !t.requires_grad(),
          "[Queue::put] cannot send a non-leaf tensor that requires grad (autograd does not cross processes); send detach() instead");
    }
    const StorageImpl* s = t.storage().get();
    auto [it, fresh] = storage_index.emplace(s, static_cast<uint32_t>(storages.size()));
    if (fresh) {
      storages.push_back(s);
      if (t.is_cuda()) owners.emplace(s, t.storage());  // export_storage keeps it alive
    }
    pod(kTensor);
    pod<uint32_t>(it->second);
    pod<uint8_t>(static_cast<uint8_t>(t.dtype()));
    pod<uint8_t>(static_cast<uint8_t>(t.device().type()));
    pod<int32_t>(t.device().index());
    pod<uint8_t>(t.requires_grad());
    pod<int64_t>(t.storage_offset());
    pod<uint32_t>(static_cast<uint32_t>(t.dim()));
    for (int64_t d : t.sizes()) pod(d);
    for (int64_t d : t.strides()) pod(d);
  }
};

struct Reader {
  const char* p;
  const char* end;
  std::vector<Storage> storages;

  template <typename T>
  T pod() {
    EMBER_ASSERT(p + sizeof(T) <= end, "a queue message ends early");
    T v;
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    return v;
  }
  std::string str() {
    auto n = pod<uint64_t>();
    EMBER_ASSERT(n <= static_cast<uint64_t>(end - p), "a queue message ends early");
    std::string s(p, n);
    p += n;
    return s;
  }
  Value value() {
    switch (pod<uint8_t>()) {
      case kNone:
        return Value();
      case kBool:
        return Value(pod<uint8_t>() != 0);
      case kInt:
        return Value(pod<int64_t>());
      case kDouble:
        return Value(pod<double>());
      case kString:
        return Value(str());
      case kList: {
        Value::List l(pod<uint64_t>());
        for (Value& v : l) v = value();
        return Value(std::move(l));
      }
      case kDict: {
        Value::Dict d;
        for (auto n = pod<uint64_t>(); n > 0; --n) {
          std::string k = str();
          d.emplace(std::move(k), value());
        }
        return Value(std::move(d));
      }
      case kTensor:
        return Value(tensor());
    }
    EMBER_ASSERT(false, "an unknown tag in a queue message");
    return Value();
  }
  Tensor tensor() {
    auto storage = pod<uint32_t>();
    auto dtype = static_cast<DType>(pod<uint8_t>());
    auto type = static_cast<DeviceType>(pod<uint8_t>());
    auto index = pod<int32_t>();
    bool requires_grad = pod<uint8_t>() != 0;
    auto offset = pod<int64_t>();
    auto dim = pod<uint32_t>();
    Shape sizes, strides;
    for (uint32_t i = 0; i < dim; ++i) sizes.push_back(pod<int64_t>());
    for (uint32_t i = 0; i < dim; ++i) strides.push_back(pod<int64_t>());
    EMBER_ASSERT(storage < storages.size(), "a queue message names a storage it does not carry");
    auto impl = std::make_shared<TensorImpl>(storages[storage], sizes, strides, offset, dtype,
                                             Device(type, index));
    Tensor t(std::move(impl));
    if (requires_grad) t.requires_grad_(true);
    return t;
  }
};

}  // namespace

// --- Connection ----------------------------------------------------------------------------------

struct Connection::Socket {
  explicit Socket(int f) : fd(f) {}
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { close(fd); }
  int fd;
};

Connection::Connection(int fd) : socket_(std::make_shared<Socket>(fd)) {}

int Connection::fd() const { return socket_->fd; }

std::string Connection::handle() const { return kHandlePrefix + std::to_string(socket_->fd); }

namespace {
// The descriptor, checked to be one end of a queue or pipe, closed on exec again.
int adopt(int fd, const std::string& handle) {
  int type = 0;
  socklen_t len = sizeof type;
  EMBER_CHECK(
      fcntl(fd, F_GETFD) != -1, "[multiprocessing] descriptor ", fd, " named by '", handle,
      "' is not open in this process: pass handles among the arguments of a Process started with the spawn start method");
  EMBER_CHECK(getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET,
              "[multiprocessing] descriptor ", fd, " named by '", handle,
              "' is not a queue's or pipe's socket");
  fcntl(fd, F_SETFD, FD_CLOEXEC);  // a grandchild gets it only if named again
  return fd;
}
}  // namespace

Connection Connection::from_handle(const std::string& handle) {
  std::vector<int> fds = handle_descriptors(handle);
  EMBER_CHECK(fds.size() == 1, "[Connection::from_handle] expected the handle of one end, got '",
              handle, "'");
  return Connection(adopt(fds[0], handle));
}

void Connection::send(const Value& value) const {
  Writer w;
  w.value(value);
  std::string table;
  std::vector<int> fds;
  // Note [CUDA IPC] (backend/cuda/ipc.h): a CUDA storage's entry carries the length of its handle,
  // the handles sit before the table, and its descriptor is its reference-count file.
  std::vector<std::string> handles;
  for (const StorageImpl* s : w.storages) {
    if (s->data.device().is_cuda()) {
      Storage owner(w.owners.at(s));
      cuda::ipc::ExportedStorage e = cuda::ipc::export_storage(owner);
      handles.push_back(std::move(e.handle));
      fds.push_back(e.ref_fd);
    } else {
      handles.emplace_back();
      fds.push_back(shared_memory_fd(s->data));
    }
  }
  for (const std::string& h : handles) w.bytes += h;
  for (size_t i = 0; i < w.storages.size(); ++i) {
    w.pod<uint64_t>(w.storages[i]->nbytes);
    w.pod<uint32_t>(static_cast<uint32_t>(handles[i].size()));
  }
  w.pod<uint32_t>(static_cast<uint32_t>(w.storages.size()));
  EMBER_CHECK(w.bytes.size() <= kMaxMessage, "[Queue::put] the value takes ", w.bytes.size(),
              " bytes once serialised, more than a message carries (", kMaxMessage,
              "); send large data as tensors, which travel by descriptor");
  EMBER_CHECK(fds.size() <= kMaxFds, "[Queue::put] the value holds ", fds.size(),
              " tensors with distinct storages; a message carries at most ", kMaxFds);

  iovec iov{w.bytes.data(), w.bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t n;
  do {
    n = sendmsg(socket_->fd, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  EMBER_CHECK(n == static_cast<ssize_t>(w.bytes.size()),
              "[Queue::put] sending failed: ", n < 0 ? std::strerror(errno) : "short write",
              errno == EPIPE ? " (every receiving end is closed)" : "");
}

bool Connection::poll(double timeout_s) const {
  pollfd p{socket_->fd, POLLIN, 0};
  int r;
  do {
    r = ::poll(&p, 1, timeout_s < 0 ? -1 : static_cast<int>(timeout_s * 1000));
  } while (r < 0 && errno == EINTR);
  return r > 0;
}

Value Connection::recv(std::optional<double> timeout_s) const {
  std::optional<Value> v = try_recv(timeout_s);
  EMBER_CHECK(v.has_value(), "[Queue::get] nothing arrived within ", timeout_s.value_or(0), " s");
  return std::move(*v);
}

std::optional<Value> Connection::try_recv(std::optional<double> timeout_s) const {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s.value_or(0));
  // Another process may take the message between poll and recvmsg: then wait again.
  for (;;) {
    double left = timeout_s ? std::chrono::duration<double>(deadline - Clock::now()).count() : -1;
    if (!poll(timeout_s ? std::max(left, 0.0) : -1.0)) return std::nullopt;
    std::optional<Value> v = receive();
    if (v) return v;
  }
}

std::optional<Value> Connection::receive() const {
  thread_local std::vector<char> buffer(kMaxMessage + 1);
  iovec iov{buffer.data(), buffer.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(socket_->fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return std::nullopt;
  EMBER_CHECK(n >= 0, "[Queue::get] receiving failed: ", std::strerror(errno));
  EMBER_CHECK(n > 0, "[Queue::get] the sending end is closed");
  std::vector<int> fds;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const int* data = reinterpret_cast<const int*>(CMSG_DATA(c));
    fds.insert(fds.end(), data, data + count);
  }
  // Descriptors not yet owned by a storage are closed on every path out.
  size_t owned = 0;
  struct CloseRest {
    std::vector<int>& fds;
    size_t& owned;
    ~CloseRest() {
      for (size_t i = owned; i < fds.size(); ++i) close(fds[i]);
    }
  } close_rest{fds, owned};
  EMBER_ASSERT((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) == 0, "a queue message was truncated");

  Reader r{buffer.data(), buffer.data() + n, {}};
  // The storage table sits at the end: its count last, the sizes before it.
  const char* tail = r.end - sizeof(uint32_t);
  uint32_t count;
  std::memcpy(&count, tail, sizeof count);
  EMBER_ASSERT(count == fds.size(), "a queue message carries ", fds.size(), " descriptors for ",
               count, " storages");
  constexpr size_t kEntry = sizeof(uint64_t) + sizeof(uint32_t);
  const char* table = tail - kEntry * count;
  std::vector<uint64_t> nbytes(count);
  std::vector<uint32_t> handle_bytes(count);
  size_t all_handles = 0;
  for (uint32_t i = 0; i < count; ++i) {
    std::memcpy(&nbytes[i], table + kEntry * i, sizeof(uint64_t));
    std::memcpy(&handle_bytes[i], table + kEntry * i + sizeof(uint64_t), sizeof(uint32_t));
    all_handles += handle_bytes[i];
  }
  const char* handle = table - all_handles;
  EMBER_ASSERT(handle >= r.p, "a queue message's storage table is larger than the message");
  for (uint32_t i = 0; i < count; ++i) {
    ++owned;  // map_shared_memory and import_storage take the descriptor over, also when throwing
    if (handle_bytes[i] > 0) {
      r.storages.push_back(cuda::ipc::import_storage(std::string(handle, handle_bytes[i]), fds[i]));
      handle += handle_bytes[i];
    } else {
      r.storages.push_back(std::make_shared<StorageImpl>(
          map_shared_memory(fds[i], nbytes[i], Device(DeviceType::CPU, 0)), nbytes[i]));
    }
  }
  r.end = table - all_handles;
  return r.value();
}

std::pair<Connection, Connection> Pipe() {
  int fds[2];
  EMBER_CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0,
              "[Pipe] socketpair failed: ", std::strerror(errno));
  return {Connection(fds[0]), Connection(fds[1])};
}

// --- Queue ---------------------------------------------------------------------------------------

Queue::Queue() : Queue(Pipe()) {}
Queue::Queue(std::pair<Connection, Connection> ends)
    : in_(std::move(ends.first)), out_(std::move(ends.second)) {}

std::optional<Value> Queue::get_nowait() const { return out_.try_recv(0); }

std::string Queue::handle() const { return in_.handle() + "," + std::to_string(out_.fd()); }

Queue Queue::from_handle(const std::string& handle) {
  std::vector<int> fds = handle_descriptors(handle);
  EMBER_CHECK(fds.size() == 2,
              "[Queue::from_handle] expected a queue's handle (two descriptors), got '", handle,
              "'");
  return Queue({Connection(adopt(fds[0], handle)), Connection(adopt(fds[1], handle))});
}

}  // namespace ember::multiprocessing
