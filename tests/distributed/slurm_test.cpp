// Slurm's environment as srun sets it: host lists, tasks per node, a task's place and the
// variables init_process_group reads. A real Slurm cluster runs in tests/python/test_slurm.py.
#include "ember/distributed/slurm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "ember/core/error.h"

namespace ember::distributed {
namespace {

using Strings = std::vector<std::string>;

TEST(Slurm, HostListsExpand) {
  EXPECT_EQ(expand_hostlist("n0"), Strings({"n0"}));
  EXPECT_EQ(expand_hostlist("n[0-2]"), Strings({"n0", "n1", "n2"}));
  EXPECT_EQ(expand_hostlist("gpu[08-10,15],cpu1"),
            Strings({"gpu08", "gpu09", "gpu10", "gpu15", "cpu1"}));
  EXPECT_EQ(expand_hostlist("a[1-2]-ib,b"), Strings({"a1-ib", "a2-ib", "b"}));
  EXPECT_THROW(expand_hostlist("n[3-1]"), Error);
  EXPECT_THROW(expand_hostlist("n[1-2"), Error);
}

TEST(Slurm, TasksPerNodeExpand) {
  EXPECT_EQ(expand_tasks_per_node("2(x3),1"), std::vector<int>({2, 2, 2, 1}));
  EXPECT_EQ(expand_tasks_per_node("4"), std::vector<int>({4}));
  EXPECT_THROW(expand_tasks_per_node("2(x"), Error);
}

// Sets variables for one test and removes them after.
class Env {
 public:
  explicit Env(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {
    for (const auto& [k, v] : vars_) setenv(k.c_str(), v.c_str(), 1);
  }
  ~Env() {
    for (const auto& [k, v] : vars_) unsetenv(k.c_str());
  }

 private:
  std::map<std::string, std::string> vars_;
};

TEST(Slurm, ATaskKnowsItsPlace) {
  unsetenv("RANK");
  unsetenv("MASTER_ADDR");
  unsetenv("MASTER_PORT");
  EXPECT_FALSE(slurm_task().has_value());
  EXPECT_TRUE(slurm_environment().empty());
  Env env({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "5"}, {"SLURM_LOCALID", "1"},
           {"SLURM_NODEID", "1"}, {"SLURM_STEP_NUM_NODES", "2"},
           {"SLURM_STEP_TASKS_PER_NODE", "2(x2),1"}, {"SLURM_STEP_NODELIST", "node[07-09]"},
           {"SLURM_JOB_ID", "1234"}, {"SLURM_STEP_ID", "0"}});
  auto t = slurm_task();
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->rank, 3);
  EXPECT_EQ(t->world_size, 5);
  EXPECT_EQ(t->local_rank, 1);
  EXPECT_EQ(t->local_world_size, 2);
  EXPECT_EQ(t->node_rank, 1);
  EXPECT_EQ(t->nnodes, 2);
  EXPECT_EQ(t->master_addr, "node07");
  EXPECT_EQ(t->master_port, 15000 + (1234 * 31) % 40000);
  std::map<std::string, std::string> vars;
  for (const auto& [k, v] : slurm_environment()) vars[k] = v;
  EXPECT_EQ(vars["RANK"], "3");
  EXPECT_EQ(vars["WORLD_SIZE"], "5");
  EXPECT_EQ(vars["LOCAL_WORLD_SIZE"], "2");
  EXPECT_EQ(vars["MASTER_ADDR"], "node07");
  {
    // Under a launcher, its variables win.
    Env launched(std::map<std::string, std::string>{{"RANK", "0"}});
    EXPECT_TRUE(slurm_environment().empty());
  }
  {
    Env port(std::map<std::string, std::string>{{"MASTER_PORT", "40000"}});
    EXPECT_EQ(slurm_task()->master_port, 40000);
  }
  Env bad(std::map<std::string, std::string>{{"SLURM_NTASKS", "two"}});
  EXPECT_THROW(slurm_task(), Error);
}

}  // namespace
}  // namespace ember::distributed
