// Jobs started by Slurm's srun: a task's place in the job, read from Slurm's environment, so that
// `srun python -m ember.run train.py` and `srun ember launch ...` need nothing else.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ember::distributed {

/// One srun task as Slurm describes it.
struct SlurmTask {
  int rank = 0;              // SLURM_PROCID
  int world_size = 1;        // SLURM_NTASKS
  int local_rank = 0;        // SLURM_LOCALID
  int local_world_size = 1;  // this node's tasks (SLURM_STEP_TASKS_PER_NODE)
  int node_rank = 0;         // SLURM_NODEID
  int nnodes = 1;            // SLURM_STEP_NUM_NODES (or SLURM_NNODES)
  std::string master_addr;   // the step's first node (SLURM_STEP_NODELIST)
  int master_port = 0;       // MASTER_PORT if set, else one derived from the job and step ids
};

/// This process's task, when srun started it (SLURM_PROCID set); nullopt otherwise.
std::optional<SlurmTask> slurm_task();

/// The host names of a Slurm host list: "n[1-3,07],gpu5" -> n1 n2 n3 n07 gpu5.
std::vector<std::string> expand_hostlist(const std::string& list);

/// Tasks per node from SLURM_STEP_TASKS_PER_NODE's form: "2(x3),1" -> 2 2 2 1.
std::vector<int> expand_tasks_per_node(const std::string& spec);

/// Under srun, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR and
/// MASTER_PORT as Slurm's environment gives them (what init_process_group's env:// and torchrun-
/// style programs read); empty outside Slurm or under a launcher that set RANK.
std::vector<std::pair<std::string, std::string>> slurm_environment();

/// Sets slurm_environment()'s variables where they are unset.
void adopt_slurm_environment();

}  // namespace ember::distributed
