// `ember launch`: starts this node's ranks of a distributed job, like torchrun; with a range of
// nodes, restarts or a rendezvous endpoint, as its elastic agent.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <iostream>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/distributed/launch.h"
#include "ember/distributed/slurm.h"
#include "tools/ember/commands.h"

namespace ember::cli {
namespace {

const char* kLaunchUsage = R"(usage: ember launch [options] PROGRAM [ARGS...]

Starts --nproc-per-node ranks of PROGRAM on this machine with RANK, LOCAL_RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT set (init_process_group's env://). When a rank fails, the others are
ended and its rank, exit code or signal are reported. A PROGRAM ending in .py (a torchrun-style
PyTorch program) runs as `python3 -m ember.run PROGRAM ARGS` (the interpreter: $EMBER_PYTHON,
else the one ember's Python package was built for).

options:
  --nproc-per-node N   ranks on this machine (default 1)
  --nnodes M           machines in the job (default 1)
  --node-rank R        this machine's index, 0 .. M-1 (default 0)
  --master-addr A      the address of node 0, where rank 0 serves rendezvous (default 127.0.0.1)
  --master-port P      its port (default 29500)
  --prefix-output      prefix every output line with "[rank R] "

Under Slurm (srun --ntasks-per-node=1 ember launch ...), --nnodes, --node-rank, --master-addr
(the step's first node) and --master-port (one per job step) come from Slurm's environment.
A program started by srun itself, one task per rank, needs no launcher: init_process_group reads
SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and SLURM_STEP_NODELIST.

elastic jobs (torchrun's elastic agent): one `ember launch` per machine, all with the same
--rdzv-endpoint and --rdzv-id; when a rank fails, every machine stops its ranks and the group
restarts with the machines that are left (or a machine that joined), with new RANK/WORLD_SIZE
and TORCHELASTIC_RESTART_COUNT. The program resumes from its own checkpoint.
  --nnodes MIN:MAX     at least MIN machines (the job fails below), at most MAX
  --max-restarts N     restarts after failures before the job fails (default 0)
  --rdzv-endpoint H:P  the rendezvous store: served by the agent on host H, reached by the
                       others (default --master-addr:--master-port)
  --rdzv-id ID         the job's id (default none)
  --rdzv-backend c10d  accepted for torchrun's command lines (the store is ember's TCPStore)
  --rdzv-conf join_timeout=S,last_call_timeout=S
                       seconds to wait for MIN machines (default 600), and after MIN joined,
                       for more (default 30; a round closes at once when every live agent joined)
  --monitor-interval S seconds between the agent's checks of the store (default 0.1)
)";

int to_int(const std::string& name, const std::string& value) {
  char* end = nullptr;
  long v = std::strtol(value.c_str(), &end, 10);
  EMBER_CHECK(!value.empty() && end && *end == '\0', "[launch] ", name,
              " expects an integer, got '", value, "'");
  return static_cast<int>(v);
}

std::chrono::milliseconds to_duration(const std::string& name, const std::string& value) {
  char* end = nullptr;
  double seconds = std::strtod(value.c_str(), &end);
  EMBER_CHECK(!value.empty() && end && *end == '\0' && seconds >= 0, "[launch] ", name,
              " expects seconds, got '", value, "'");
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// "M" or "MIN:MAX".
void parse_nnodes(distributed::LaunchOptions& o, const std::string& value) {
  size_t colon = value.find(':');
  o.nnodes = to_int("--nnodes", value.substr(0, colon));
  o.max_nnodes = colon == std::string::npos ? 0 : to_int("--nnodes", value.substr(colon + 1));
}

// "join_timeout=600,last_call_timeout=30".
void parse_rdzv_conf(distributed::LaunchOptions& o, const std::string& value) {
  size_t begin = 0;
  while (begin < value.size()) {
    size_t end = value.find(',', begin);
    std::string item = value.substr(begin, end - begin);
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq), v = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "join_timeout")
      o.join_timeout = to_duration("--rdzv-conf join_timeout", v);
    else if (key == "last_call_timeout")
      o.last_call_timeout = to_duration("--rdzv-conf last_call_timeout", v);
    else
      EMBER_FAIL("[launch] unknown --rdzv-conf key '", key,
                 "' (expected join_timeout or last_call_timeout)");
    begin = end == std::string::npos ? value.size() : end + 1;
  }
}

// Under srun, one `ember launch` per node (srun --ntasks-per-node=1): the node's place and node
// 0's address come from Slurm unless given.
void adopt_slurm(distributed::LaunchOptions& o, const std::vector<std::string>& given) {
  std::optional<distributed::SlurmTask> task = distributed::slurm_task();
  if (!task || o.elastic()) return;
  auto was_given = [&](const char* name) {
    return std::find(given.begin(), given.end(), name) != given.end();
  };
  EMBER_CHECK(task->world_size == task->nnodes,
              "[launch] under srun, ember launch starts a node's ranks itself: run one task per "
              "node (srun --ntasks-per-node=1 ember launch --nproc-per-node N ...), got ",
              task->world_size, " tasks on ", task->nnodes, " nodes");
  if (!was_given("--nnodes")) o.nnodes = task->nnodes;
  if (!was_given("--node-rank")) o.node_rank = task->node_rank;
  if (!was_given("--master-addr")) o.master_addr = task->master_addr;
  if (!was_given("--master-port")) o.master_port = task->master_port;
}

void set_option(distributed::LaunchOptions& o, const std::string& name, const std::string& value) {
  if (name == "--nproc-per-node")
    o.nproc_per_node = to_int(name, value);
  else if (name == "--nnodes")
    parse_nnodes(o, value);
  else if (name == "--node-rank")
    o.node_rank = to_int(name, value);
  else if (name == "--master-addr")
    o.master_addr = value;
  else if (name == "--master-port")
    o.master_port = to_int(name, value);
  else if (name == "--max-restarts")
    o.max_restarts = to_int(name, value);
  else if (name == "--rdzv-endpoint")
    o.rdzv_endpoint = value;
  else if (name == "--rdzv-id")
    o.rdzv_id = value;
  else if (name == "--rdzv-backend")
    EMBER_CHECK(value == "c10d", "[launch] --rdzv-backend: only c10d (ember's TCPStore), got '",
                value, "'");
  else if (name == "--rdzv-conf")
    parse_rdzv_conf(o, value);
  else if (name == "--monitor-interval")
    o.monitor_interval = to_duration(name, value);
  else
    EMBER_FAIL("[launch] unknown option ", name, "\n", kLaunchUsage);
}

}  // namespace

int launch(int argc, char** argv) {
  distributed::LaunchOptions o;
  std::vector<std::string> given;
  int i = 0;
  for (; i < argc && std::strncmp(argv[i], "--", 2) == 0; ++i) {
    std::string name = argv[i];
    given.push_back(name.substr(0, name.find('=')));
    if (name == "--help") {
      std::cout << kLaunchUsage;
      return 0;
    }
    if (name == "--prefix-output") {
      o.prefix_output = true;
      continue;
    }
    if (size_t eq = name.find('='); eq != std::string::npos) {  // --name=value, as torchrun takes
      set_option(o, name.substr(0, eq), name.substr(eq + 1));
      continue;
    }
    EMBER_CHECK(i + 1 < argc, "[launch] ", name, " expects a value");
    set_option(o, name, argv[++i]);
  }
  if (i >= argc) {
    std::cerr << kLaunchUsage;
    return 2;
  }
  adopt_slurm(o, given);
  std::vector<std::string> command(argv + i, argv + argc);
  // A Python program runs with torch resolved to ember (torchrun-style DDP programs), in the
  // interpreter ember's package was built for (EMBER_PYTHON overrides it).
  const std::string& program = command[0];
  if (program.size() > 3 && program.compare(program.size() - 3, 3, ".py") == 0) {
    const char* python = std::getenv("EMBER_PYTHON");
    command.insert(command.begin(), {python ? python : EMBER_PYTHON_EXECUTABLE, "-m", "ember.run"});
  }
  return distributed::launch(o, command);
}

}  // namespace ember::cli
