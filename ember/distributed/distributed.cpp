#include "ember/distributed/distributed.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "ember/backend/cuda/device.h"
#include "ember/core/error.h"
#include "ember/core/profiler_events.h"
#include "ember/core/thread_local_state.h"
#include "ember/distributed/backend_choice.h"
#include "ember/distributed/process_group_gloo.h"
#include "ember/distributed/process_group_mpi.h"
#include "ember/distributed/process_group_nccl.h"
#include "ember/distributed/slurm.h"

namespace ember::distributed {
namespace {

// What init_process_group made: the store stays alive with the groups (rank 0's TCPStore server
// serves the others).
struct State {
  std::shared_ptr<Store> store;
  std::shared_ptr<ProcessGroup> group;
  std::string backend;
  GlooOptions options;
  int groups_made = 0;
};

std::mutex global_mutex;
std::shared_ptr<State> global_state;
// Ranks that are threads (run_threads) each have their own state.
thread_local std::shared_ptr<State> thread_state;

std::shared_ptr<State>& state_slot() { return thread_state ? thread_state : global_state; }

State& state() {
  std::shared_ptr<State>& s = state_slot();
  EMBER_CHECK(
      s != nullptr,
      "[distributed] the default process group is not initialized; call init_process_group first");
  return *s;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  EMBER_CHECK(end && *end == '\0', "[init_process_group] environment variable ", name,
              " must be an integer, got '", v, "'");
  return static_cast<int>(x);
}

std::string env_str(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The address the other ranks reach this rank at: loopback for a job on one machine, else the
// address of this machine's route towards MASTER_ADDR (a UDP socket "connected" there, which
// sends nothing). The host name would do on a machine whose name resolves to its network address,
// but not where it resolves to loopback (Debian's /etc/hosts, containers, network namespaces).
std::string own_hostname(const std::string& master_addr) {
  std::string forced = env_str("EMBER_GLOO_HOSTNAME");
  if (!forced.empty()) return forced;
  if (master_addr.empty() || master_addr == "127.0.0.1" || master_addr == "localhost" ||
      master_addr == "::1")
    return "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  std::string found;
  if (::getaddrinfo(master_addr.c_str(), "9", &hints, &res) == 0) {
    for (addrinfo* a = res; a && found.empty(); a = a->ai_next) {
      int fd = ::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd < 0) continue;
      sockaddr_storage local{};
      socklen_t len = sizeof(local);
      char text[INET6_ADDRSTRLEN] = {};
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
          ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
        const void* ip =
            local.ss_family == AF_INET
                ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
                : &reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr;
        if (::inet_ntop(local.ss_family, ip, text, sizeof(text))) found = text;
      }
      ::close(fd);
    }
    ::freeaddrinfo(res);
  }
  if (!found.empty()) return found;
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
}

// Returns once every rank has joined: a rank may leave (closing its connections) only after all
// have finished connecting. global_ranks: a group of new_group's ranks in the default group.
std::shared_ptr<ProcessGroup> make_group(State& s, const std::string& prefix, int rank, int size,
                                         const std::vector<int>& global_ranks = {}) {
  if (s.backend == "mpi") {  // the default group; new_group makes the others
    std::shared_ptr<ProcessGroup> group = make_mpi_process_group(s.options.timeout);
    EMBER_CHECK(rank < 0 || (group->rank() == rank && group->size() == size),
                "[init_process_group] mpirun started rank ", group->rank(), " of ", group->size(),
                ", but rank ", rank, " of ", size, " was asked for");
    return group;
  }
  if (s.backend == "nccl") {
    std::shared_ptr<ProcessGroup> group =
        make_nccl_process_group(std::make_shared<PrefixStore>(prefix, s.store), rank, size,
                                s.options.timeout, global_ranks);
    group->barrier()->wait();
    return group;
  }
  if (s.backend == "gloo") {
    auto store = std::make_shared<PrefixStore>(prefix, s.store);
    GlooOptions options = s.options;
    options.global_ranks = global_ranks;
    std::shared_ptr<ProcessGroup> group = make_gloo_process_group(store, rank, size, options);
    group->barrier()->wait();
    return group;
  }
  EMBER_FAIL("[init_process_group] backend '", s.backend,
             "' is not built in this ember; available backends: ", available_backends());
}

std::string resolve_backend(const std::string& backend) {
  BackendFacts facts;
  facts.nccl_built = nccl_available();
  facts.mpi_built = mpi_available();
  facts.gpus = [] { return cuda::device_count(); };
  facts.local_world_size = env_int("LOCAL_WORLD_SIZE", 0);
  return choose_backend(backend, facts);
}

std::shared_ptr<Work> finish(ProcessGroup& group, std::shared_ptr<Work> work, bool async_op) {
  if (!async_op) work->wait(group.timeout() + group.wait_slack());
  return work;
}

ProcessGroup& pick(ProcessGroup* group) { return group ? *group : default_group(); }

// The profiler's event of a collective ("gloo:all_reduce" and the bytes it moves), from the call
// to the end of its wait when the call waits, else to its launch.
class CollectiveRecord {
 public:
  CollectiveRecord(ProcessGroup& g, const char* name, int64_t bytes) {
    if (!profiler::active_session()) return;
    scope_.emplace(profiler::EventKind::Collective, g.backend() + ":" + name);
    scope_->event().bytes = bytes;
  }

 private:
  std::optional<profiler::RecordScope> scope_;
};

int64_t bytes_of(const Tensor& t) { return t.defined() ? t.numel() * t.element_size() : 0; }
int64_t bytes_of(const std::vector<Tensor>& ts) {
  int64_t n = 0;
  for (const Tensor& t : ts) n += bytes_of(t);
  return n;
}

}  // namespace

std::string available_backends() {
  std::string out;
  if (gloo_available()) out += "gloo";
  if (mpi_available()) out += std::string(out.empty() ? "" : ", ") + "mpi";
  if (nccl_available()) out += std::string(out.empty() ? "" : ", ") + "nccl";
  return out.empty() ? "none" : out;
}

bool debug_enabled() {
  static const bool enabled = env_str("EMBER_DISTRIBUTED_DEBUG") == "1";
  return enabled;
}

bool debug_checks(const std::string& op) { return debug_enabled() && op != "send" && op != "recv"; }

void check_same_collective(const std::string& description, int size,
                           const std::function<void(const char* mine, char* all)>& all_gather) {
  std::vector<char> mine(kDescriptionBytes, 0), all(kDescriptionBytes * size, 0);
  std::memcpy(mine.data(), description.data(), std::min(kDescriptionBytes - 1, description.size()));
  all_gather(mine.data(), all.data());
  all.back() = '\0';  // whatever a rank sent, every description below ends
  std::string first(all.data());
  for (int r = 1; r < size; ++r) {
    std::string other(all.data() + r * kDescriptionBytes);
    EMBER_CHECK(other == first,
                "[distributed debug] ranks call different collectives: rank 0 calls ", first,
                " but rank ", r, " calls ", other);
  }
}

void check_matching_p2p(bool is_send, int rank, int peer, int tag, const std::string& mine,
                        const std::string& theirs) {
  if (mine == theirs) return;
  int sender = is_send ? rank : peer, receiver = is_send ? peer : rank;
  EMBER_FAIL("[distributed debug] send and recv do not match: rank ", sender, " sends ",
             is_send ? mine : theirs, " to rank ", receiver, " (tag ", tag, ") but rank ", receiver,
             " receives ", is_send ? theirs : mine, " from rank ", sender);
}

void ProcessGroup::check_rank(int r, const char* op) const {
  EMBER_CHECK(r >= 0 && r < size_, "[", op, "] expected a rank in [0, ", size_, "), got ", r);
}

void ProcessGroup::check_reduce_op(ReduceOp reduce, DType dtype, const char* op) {
  EMBER_CHECK(reduce != ReduceOp::AVG || is_floating_point(dtype), "[", op,
              "] ReduceOp::AVG needs a floating point tensor, got ", dtype);
}

void ProcessGroup::check_like(const Tensor& t, const Tensor& like, const char* op,
                              const char* what) {
  EMBER_CHECK(t.defined() && t.sizes() == like.sizes() && t.dtype() == like.dtype(), "[", op,
              "] expected every ", what, " to have shape ", like.sizes(), " and dtype ",
              like.dtype(), ", got ", t.defined() ? t.sizes() : Shape{}, " ",
              t.defined() ? t.dtype() : like.dtype());
}

void ProcessGroup::check_list(const std::vector<Tensor>& list, const Tensor& like, const char* op,
                              const char* what) const {
  EMBER_CHECK(static_cast<int>(list.size()) == size_, "[", op, "] expected ", size_, " ", what,
              " tensors (one per rank), got ", list.size());
  for (const Tensor& t : list) check_like(t, like, op, what);
}

void ProcessGroup::check_flat(const Tensor& whole, const Tensor& part, const char* op,
                              const char* whole_name, const char* part_name) const {
  EMBER_CHECK(whole.defined() && part.defined(), "[", op, "] undefined tensor");
  EMBER_CHECK(whole.dtype() == part.dtype(), "[", op, "] expected the ", whole_name, " and ",
              part_name, " tensors to have one dtype, got ", whole.dtype(), " and ", part.dtype());
  EMBER_CHECK(whole.numel() == part.numel() * size_, "[", op, "] expected the ", whole_name,
              " tensor to have world_size (", size_, ") times the ", part_name,
              " tensor's elements (", part.numel() * size_, " for shape ", part.sizes(), "), got ",
              whole.numel(), " (shape ", whole.sizes(), ")");
}

Error ProcessGroup::collective_error(const std::string& op, uint64_t sequence,
                                     const std::string& what) const {
  return Error(detail::str_cat("[", op, "] collective #", sequence, " on rank ", rank_, " of ",
                               size_, " (", backend(), ") ", what));
}

std::string ProcessGroup::timed_out_text() const {
  return detail::str_cat("timed out after ", timeout().count(),
                         " ms (a rank stopped calling collectives?)");
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return "SUM";
    case ReduceOp::AVG:
      return "AVG";
    case ReduceOp::PRODUCT:
      return "PRODUCT";
    case ReduceOp::MIN:
      return "MIN";
    case ReduceOp::MAX:
      return "MAX";
  }
  return "?";
}

std::string describe_tensor(const Tensor& tensor) {
  std::ostringstream s;
  s << tensor.dtype() << tensor.sizes();
  return s.str();
}

std::string describe_collective(const std::string& op, const std::vector<Tensor>& tensors) {
  std::string s = op + "(";
  for (size_t i = 0; i < tensors.size(); ++i) s += (i ? ", " : "") + describe_tensor(tensors[i]);
  return s + ")";
}

void init_process_group(const std::string& backend, std::shared_ptr<Store> store, int world_size,
                        int rank, std::chrono::milliseconds timeout) {
  EMBER_CHECK(!state_slot(),
              "[init_process_group] the default process group is already initialized; "
              "call destroy_process_group first");
  EMBER_CHECK(world_size >= 1 && rank >= 0 && rank < world_size,
              "[init_process_group] expected 0 <= rank < world_size, got rank ", rank,
              " and world_size ", world_size);
  auto s = std::make_shared<State>();
  s->backend = resolve_backend(backend);
  s->store = std::move(store);
  // One GPU per rank: the launcher's LOCAL_RANK picks it (as torchrun users do by hand).
  if (s->backend == "nccl" && !env_str("LOCAL_RANK").empty())
    cuda::set_device(env_int("LOCAL_RANK", 0) % cuda::device_count());
  s->options.timeout = timeout;
  s->options.hostname = own_hostname(env_str("MASTER_ADDR"));
  s->group = make_group(*s, "default_pg", rank, world_size);
  std::lock_guard<std::mutex> lock(global_mutex);
  state_slot() = s;
}

void init_process_group(const std::string& backend, const std::string& init_method, int world_size,
                        int rank, std::chrono::milliseconds timeout) {
  if (resolve_backend(backend) == "mpi") {  // mpirun did the rendezvous
    EMBER_CHECK(!state_slot(),
                "[init_process_group] the default process group is already initialized; "
                "call destroy_process_group first");
    auto s = std::make_shared<State>();
    s->backend = "mpi";
    s->options.timeout = timeout;
    s->group = make_group(*s, "default_pg", -1, -1);
    std::lock_guard<std::mutex> lock(global_mutex);
    state_slot() = s;
    return;
  }
  if (init_method.empty() || init_method == "env://") adopt_slurm_environment();
  if (rank < 0) rank = env_int("RANK", env_int("OMPI_COMM_WORLD_RANK", -1));
  if (world_size < 0) world_size = env_int("WORLD_SIZE", env_int("OMPI_COMM_WORLD_SIZE", -1));
  EMBER_CHECK(
      rank >= 0 && world_size >= 1,
      "[init_process_group] rank and world_size are not known: pass them, or set RANK and WORLD_SIZE (ember launch, mpirun and srun do)");
  std::shared_ptr<Store> store;
  if (init_method.empty() || init_method == "env://") {
    std::string addr = env_str("MASTER_ADDR");
    int port = env_int("MASTER_PORT", -1);
    EMBER_CHECK(
        !addr.empty() && port > 0,
        "[init_process_group] env:// needs MASTER_ADDR and MASTER_PORT in the environment (ember launch sets them)");
    auto tcp = std::make_shared<TCPStore>(addr, port, rank == 0, timeout);
    tcp->register_rank(rank);
    store = tcp;
  } else if (init_method.rfind("tcp://", 0) == 0) {
    std::string rest = init_method.substr(6);
    size_t colon = rest.rfind(':');
    EMBER_CHECK(colon != std::string::npos && colon > 0,
                "[init_process_group] expected tcp://host:port, got '", init_method, "'");
    std::string host = rest.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    int port = std::atoi(rest.c_str() + colon + 1);
    EMBER_CHECK(port > 0 && port < 65536, "[init_process_group] bad port in '", init_method, "'");
    setenv("MASTER_ADDR", host.c_str(), 0);  // where own_hostname learns about loopback
    auto tcp = std::make_shared<TCPStore>(host, port, rank == 0, timeout);
    tcp->register_rank(rank);
    store = tcp;
  } else if (init_method.rfind("file://", 0) == 0) {
    store = std::make_shared<FileStore>(init_method.substr(7), timeout);
    store->register_rank(rank);
  } else {
    EMBER_FAIL("[init_process_group] unknown init_method '", init_method,
               "'; expected env://, tcp://host:port or file:///path");
  }
  init_process_group(backend, std::move(store), world_size, rank, timeout);
}

bool is_initialized() { return state_slot() != nullptr; }

void destroy_process_group() {
  std::shared_ptr<State> s;
  {
    std::lock_guard<std::mutex> lock(global_mutex);
    s = std::move(state_slot());
    state_slot() = nullptr;
  }
  if (!s) return;
  try {
    if (s->store) s->store->leave();
  } catch (const std::exception&) {
    // Leaving a broken group: the peers already know.
  }
}

ProcessGroup& default_group() { return *state().group; }
std::shared_ptr<ProcessGroup> default_group_ptr() { return state().group; }

int get_rank(ProcessGroup* group) { return pick(group).rank(); }
int get_world_size(ProcessGroup* group) { return pick(group).size(); }

std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks) {
  State& s = state();
  int id = ++s.groups_made;
  int me = s.group->rank();
  for (size_t i = 0; i < ranks.size(); ++i) {
    EMBER_CHECK(ranks[i] >= 0 && ranks[i] < s.group->size(), "[new_group] rank ", ranks[i],
                " is not in the default group of size ", s.group->size());
    for (size_t j = 0; j < i; ++j)
      EMBER_CHECK(ranks[j] != ranks[i], "[new_group] rank ", ranks[i], " is listed twice");
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] != me) continue;
    // MPI makes the communicator itself; the other backends meet in the store under a prefix.
    if (s.backend == "mpi") return make_mpi_subgroup(*s.group, ranks, id);
    return make_group(s, "group_" + std::to_string(id), static_cast<int>(i),
                      static_cast<int>(ranks.size()), ranks);
  }
  return nullptr;
}

void run_threads(int world_size, const std::function<void(int)>& fn,
                 std::chrono::milliseconds timeout) {
  EMBER_CHECK(world_size >= 1, "[run_threads] expected world_size >= 1, got ", world_size);
  auto store = std::make_shared<HashStore>(timeout);
  std::vector<std::string> errors(world_size);
  std::vector<std::thread> threads;
  ThreadLocalState caller = ThreadLocalState::capture();  // grad mode, autocast, the profiler
  for (int rank = 0; rank < world_size; ++rank) {
    threads.emplace_back([&, rank] {
      ThreadLocalStateGuard caller_state(caller);
      try {
        auto s = std::make_shared<State>();
        s->backend = "gloo";
        s->store = store;
        s->options.timeout = timeout;
        s->group = make_group(*s, "default_pg", rank, world_size);
        thread_state = s;
        fn(rank);
        s->group->barrier()->wait();
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
      thread_state = nullptr;  // leaves the group: peers still waiting on it fail fast
    });
  }
  for (auto& t : threads) t.join();
  std::string failures;
  for (int rank = 0; rank < world_size; ++rank)
    if (!errors[rank].empty())
      failures += detail::str_cat(failures.empty() ? "" : "; ", "rank ", rank, ": ", errors[rank]);
  EMBER_CHECK(failures.empty(), "[run_threads] ", failures);
}

std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op, ProcessGroup* group, bool async_op) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "all_reduce", bytes_of(tensor));
  return finish(g, g.all_reduce(std::move(tensor), op), async_op);
}
std::shared_ptr<Work> broadcast(Tensor tensor, int src, ProcessGroup* group, bool async_op) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "broadcast", bytes_of(tensor));
  return finish(g, g.broadcast(std::move(tensor), src), async_op);
}
std::shared_ptr<Work> reduce(Tensor tensor, int dst, ReduceOp op, ProcessGroup* group,
                             bool async_op) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "reduce", bytes_of(tensor));
  return finish(g, g.reduce(std::move(tensor), dst, op), async_op);
}
std::shared_ptr<Work> all_gather(std::vector<Tensor> outputs, Tensor input, ProcessGroup* group,
                                 bool async_op) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "all_gather", bytes_of(outputs));
  return finish(g, g.all_gather(std::move(outputs), std::move(input)), async_op);
}
std::shared_ptr<Work> gather(Tensor input, std::vector<Tensor> outputs, int dst,
                             ProcessGroup* group, bool async_op) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "gather", bytes_of(input));
  return finish(g, g.gather(std::move(outputs), std::move(input), dst), async_op);
}
std::shared_ptr<Work> scatter(Tensor output, std::vector<Tensor> inputs, int src,
                              ProcessGroup* group, bool async_op) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "scatter", bytes_of(output));
  return finish(g, g.scatter(std::move(output), std::move(inputs), src), async_op);
}
std::shared_ptr<Work> reduce_scatter(Tensor output, std::vector<Tensor> inputs, ReduceOp op,
                                     ProcessGroup* group, bool async_op) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "reduce_scatter", bytes_of(inputs));
  return finish(g, g.reduce_scatter(std::move(output), std::move(inputs), op), async_op);
}
std::shared_ptr<Work> all_gather_into_tensor(Tensor output, Tensor input, ProcessGroup* group,
                                             bool async_op) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "all_gather_into_tensor", bytes_of(output));
  return finish(g, g.all_gather_into_tensor(std::move(output), std::move(input)), async_op);
}
std::shared_ptr<Work> reduce_scatter_tensor(Tensor output, Tensor input, ReduceOp op,
                                            ProcessGroup* group, bool async_op) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "reduce_scatter_tensor", bytes_of(input));
  return finish(g, g.reduce_scatter_tensor(std::move(output), std::move(input), op), async_op);
}
std::shared_ptr<Work> all_to_all(Tensor output, Tensor input, ProcessGroup* group, bool async_op) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "all_to_all", bytes_of(input));
  return finish(g, g.all_to_all(std::move(output), std::move(input)), async_op);
}
std::shared_ptr<Work> barrier(ProcessGroup* group, bool async_op) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "barrier", 0);
  return finish(g, g.barrier(), async_op);
}
std::shared_ptr<Work> send(Tensor tensor, int dst, ProcessGroup* group, int tag) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "send", bytes_of(tensor));
  return finish(g, g.send(std::move(tensor), dst, tag), false);
}
std::shared_ptr<Work> recv(Tensor tensor, int src, ProcessGroup* group, int tag) {
  ProcessGroup& g = pick(group);
  CollectiveRecord record(g, "recv", bytes_of(tensor));
  return finish(g, g.recv(std::move(tensor), src, tag), false);
}
std::shared_ptr<Work> isend(Tensor tensor, int dst, ProcessGroup* group, int tag) {
  return pick(group).send(std::move(tensor), dst, tag);
}
std::shared_ptr<Work> irecv(Tensor tensor, int src, ProcessGroup* group, int tag) {
  return pick(group).recv(std::move(tensor), src, tag);
}

}  // namespace ember::distributed
