#include "ember/distributed/slurm.h"

#include <cstdlib>
#include <string>

#include "ember/core/error.h"

namespace ember::distributed {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

int number(const std::string& text, const char* what) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  EMBER_CHECK(!text.empty() && end && *end == '\0' && v >= 0, "[slurm] ", what,
              " must be a non-negative integer, got '", text, "'");
  return static_cast<int>(v);
}

int env_number(const char* name, int fallback) {
  std::string v = env(name);
  return v.empty() ? fallback : number(v, name);
}

// Splits at commas outside brackets: "a[1,2],b" -> "a[1,2]", "b".
std::vector<std::string> split_top_level(const std::string& list) {
  std::vector<std::string> out;
  int depth = 0;
  std::string item;
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    EMBER_CHECK(depth >= 0 && depth <= 1, "[slurm] unbalanced brackets in host list '", list, "'");
    if (c == ',' && depth == 0) {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  EMBER_CHECK(depth == 0, "[slurm] unbalanced brackets in host list '", list, "'");
  if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

std::vector<std::string> expand_hostlist(const std::string& list) {
  std::vector<std::string> hosts;
  for (const std::string& item : split_top_level(list)) {
    size_t open = item.find('[');
    if (open == std::string::npos) {
      hosts.push_back(item);
      continue;
    }
    size_t close = item.find(']', open);
    std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
    EMBER_CHECK(suffix.find('[') == std::string::npos, "[slurm] host list '", list,
                "': one bracket range per name is supported");
    std::string ranges = item.substr(open + 1, close - open - 1);
    size_t begin = 0;
    while (begin <= ranges.size()) {
      size_t end = ranges.find(',', begin);
      std::string range = ranges.substr(begin, end - begin);
      size_t dash = range.find('-');
      std::string lo = range.substr(0, dash);
      std::string hi = dash == std::string::npos ? lo : range.substr(dash + 1);
      int a = number(lo, "a host range"), b = number(hi, "a host range");
      EMBER_CHECK(a <= b, "[slurm] host range '", range, "' in '", list, "' runs backwards");
      for (int i = a; i <= b; ++i) {
        std::string digits = std::to_string(i);
        if (digits.size() < lo.size()) digits.insert(0, lo.size() - digits.size(), '0');
        hosts.push_back(prefix + digits + suffix);
      }
      if (end == std::string::npos) break;
      begin = end + 1;
    }
  }
  return hosts;
}

std::vector<int> expand_tasks_per_node(const std::string& spec) {
  std::vector<int> out;
  for (const std::string& item : split_top_level(spec)) {
    size_t paren = item.find("(x");
    int tasks = number(item.substr(0, paren), "SLURM_STEP_TASKS_PER_NODE");
    int repeat = 1;
    if (paren != std::string::npos) {
      EMBER_CHECK(item.back() == ')', "[slurm] SLURM_STEP_TASKS_PER_NODE: bad item '", item, "'");
      repeat = number(item.substr(paren + 2, item.size() - paren - 3), "SLURM_STEP_TASKS_PER_NODE");
    }
    out.insert(out.end(), repeat, tasks);
  }
  return out;
}

std::optional<SlurmTask> slurm_task() {
  if (env("SLURM_PROCID").empty()) return std::nullopt;
  SlurmTask t;
  t.rank = env_number("SLURM_PROCID", 0);
  t.world_size = env_number("SLURM_NTASKS", env_number("SLURM_NPROCS", 1));
  t.local_rank = env_number("SLURM_LOCALID", 0);
  t.node_rank = env_number("SLURM_NODEID", 0);
  t.nnodes = env_number("SLURM_STEP_NUM_NODES", env_number("SLURM_NNODES", 1));
  std::string per_node = env("SLURM_STEP_TASKS_PER_NODE");
  if (per_node.empty()) per_node = env("SLURM_TASKS_PER_NODE");
  std::vector<int> counts;
  if (!per_node.empty()) counts = expand_tasks_per_node(per_node);
  t.local_world_size = t.node_rank < static_cast<int>(counts.size())
                           ? counts[t.node_rank]
                           : env_number("SLURM_NTASKS_PER_NODE", 1);
  std::string nodes = env("SLURM_STEP_NODELIST");
  if (nodes.empty()) nodes = env("SLURM_JOB_NODELIST");
  if (nodes.empty()) nodes = env("SLURM_NODELIST");
  std::vector<std::string> hosts;
  if (!nodes.empty()) hosts = expand_hostlist(nodes);
  EMBER_CHECK(!hosts.empty(), "[slurm] SLURM_PROCID is set but no node list is "
                              "(SLURM_STEP_NODELIST, SLURM_JOB_NODELIST): cannot find node 0");
  t.master_addr = env("MASTER_ADDR").empty() ? hosts.front() : env("MASTER_ADDR");
  // One port per job step, so that steps of several jobs on one node do not meet.
  long job = env_number("SLURM_JOB_ID", env_number("SLURM_JOBID", 0));
  long step = env_number("SLURM_STEP_ID", env_number("SLURM_STEPID", 0));
  t.master_port = env_number("MASTER_PORT", 15000 + static_cast<int>((job * 31 + step) % 40000));
  return t;
}

std::vector<std::pair<std::string, std::string>> slurm_environment() {
  if (!env("RANK").empty()) return {};  // a launcher (ember launch, torchrun) placed this process
  std::optional<SlurmTask> t = slurm_task();
  if (!t) return {};
  return {{"RANK", std::to_string(t->rank)},
          {"WORLD_SIZE", std::to_string(t->world_size)},
          {"LOCAL_RANK", std::to_string(t->local_rank)},
          {"LOCAL_WORLD_SIZE", std::to_string(t->local_world_size)},
          {"GROUP_RANK", std::to_string(t->node_rank)},
          {"MASTER_ADDR", t->master_addr},
          {"MASTER_PORT", std::to_string(t->master_port)}};
}

void adopt_slurm_environment() {
  for (const auto& [name, value] : slurm_environment()) setenv(name.c_str(), value.c_str(), 0);
}

}  // namespace ember::distributed
