// Queues and pipes between processes that pass tensors by handle, not by copy
// (torch.multiprocessing queues). Note [Tensors by descriptor]: a CPU tensor put on a queue is
// first moved into shared memory (Tensor::share_memory_, in place, as PyTorch does), then its memfd
// travels over a UNIX socket with SCM_RIGHTS next to its dtype, sizes, strides and offset; the
// receiver maps the same memory, so a write on either side is seen on the other and a 64 MiB tensor
// costs a few system calls. Plain values (numbers, strings, lists, dicts such as state dicts) are
// serialised into the same message. Each message is one SOCK_SEQPACKET record, so any number of
// processes may put and get on one queue without a lock. Children started by fork inherit every
// queue made before; a child started by exec (the spawn start method) gets the ones named among its
// arguments by handle() and rebuilds them with from_handle() (Note [Ends across exec], process.h):
//
//   mp::Queue q;
//   mp::Process p("worker", 0, {q.handle()});     // in the parent
//   mp::Queue q = mp::Queue::from_handle(args[0]);  // in worker(index, args)
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::multiprocessing {

/// What a queue carries: nothing, a bool, an integer, a double, a string, a tensor, or a list or
/// string-keyed dict of values.
class Value {
 public:
  using List = std::vector<Value>;
  using Dict = std::map<std::string, Value>;

  Value() = default;
  Value(bool b) : v_(b) {}                                          // NOLINT
  Value(int i) : v_(static_cast<int64_t>(i)) {}                     // NOLINT
  Value(int64_t i) : v_(i) {}                                       // NOLINT
  Value(double d) : v_(d) {}                                        // NOLINT
  Value(const char* s) : v_(std::string(s)) {}                      // NOLINT
  Value(std::string s) : v_(std::move(s)) {}                        // NOLINT
  Value(Tensor t) : v_(std::move(t)) {}                             // NOLINT
  Value(List l) : v_(std::move(l)) {}                               // NOLINT
  Value(Dict d) : v_(std::move(d)) {}                               // NOLINT
  Value(const std::map<std::string, Tensor>& state_dict);           // NOLINT
  Value(const std::vector<std::pair<std::string, Tensor>>& named);  // NOLINT

  bool is_none() const { return v_.index() == 0; }
  bool is_tensor() const { return std::holds_alternative<Tensor>(v_); }
  bool to_bool() const { return get<bool>("a bool"); }
  int64_t to_int() const { return get<int64_t>("an integer"); }
  double to_double() const;
  const std::string& to_string() const { return get<std::string>("a string"); }
  const Tensor& tensor() const { return get<Tensor>("a tensor"); }
  const List& list() const { return get<List>("a list"); }
  const Dict& dict() const { return get<Dict>("a dict"); }
  /// A dict of tensors (a state dict).
  std::map<std::string, Tensor> tensor_dict() const;
  /// "none", "bool", "int", "double", "string", "tensor", "list" or "dict".
  const char* type_name() const;

  using Variant =
      std::variant<std::monostate, bool, int64_t, double, std::string, Tensor, List, Dict>;
  const Variant& variant() const { return v_; }

 private:
  template <typename T>
  const T& get(const char* what) const {
    const T* p = std::get_if<T>(&v_);
    if (!p) throw_type(what);
    return *p;
  }
  [[noreturn]] void throw_type(const char* what) const;
  Variant v_;
};

/// One end of a Pipe (multiprocessing.connection.Connection).
class Connection {
 public:
  /// Takes ownership of `fd`, a SOCK_SEQPACKET UNIX socket.
  explicit Connection(int fd);
  /// Sends `value`; tensors in it are moved into shared memory first. Blocks while the other end's
  /// buffer is full.
  void send(const Value& value) const;
  /// The next value; waits `timeout_s` seconds at most when given (then throws), forever when not.
  /// A closed other end is an error.
  Value recv(std::optional<double> timeout_s = std::nullopt) const;
  /// The next value, or nothing if none arrived within `timeout_s` (forever when not given).
  std::optional<Value> try_recv(std::optional<double> timeout_s) const;
  /// Whether a value is waiting (within `timeout_s`; forever when negative).
  bool poll(double timeout_s = 0) const;
  int fd() const;
  /// Names this end among the arguments of a Process started with the spawn start method.
  std::string handle() const;
  /// The end named by `handle` in a spawned child's arguments.
  static Connection from_handle(const std::string& handle);

 private:
  std::optional<Value> receive() const;  // without waiting
  struct Socket;
  std::shared_ptr<Socket> socket_;  // copies (and forked children) share the descriptor
};

/// A bidirectional pipe: what one end sends, the other receives (multiprocessing.Pipe).
std::pair<Connection, Connection> Pipe();

/// A queue any number of processes started by fork after its creation can put to and get from
/// (multiprocessing.Queue, SimpleQueue).
class Queue {
 public:
  Queue();
  void put(const Value& value) const { in_.send(value); }
  /// The next value, waiting at most `timeout_s` seconds when given (then throws).
  Value get(std::optional<double> timeout_s = std::nullopt) const { return out_.recv(timeout_s); }
  /// The next value if one is waiting.
  std::optional<Value> get_nowait() const;
  bool empty() const { return !out_.poll(0); }
  /// Names the queue among the arguments of a Process started with the spawn start method.
  std::string handle() const;
  /// The queue named by `handle` in a spawned child's arguments.
  static Queue from_handle(const std::string& handle);

 private:
  Connection in_, out_;
  Queue(std::pair<Connection, Connection> ends);
};

using SimpleQueue = Queue;

}  // namespace ember::multiprocessing
