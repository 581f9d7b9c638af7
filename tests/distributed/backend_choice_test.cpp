// What "auto" picks, and NCCL's one GPU per rank, on made-up machines (no GPU or NCCL needed).
#include "ember/distributed/backend_choice.h"

#include <gtest/gtest.h>

#include "tests/util/test_util.h"

namespace ember::distributed {
namespace {

BackendFacts machine(bool nccl, int gpus, int local_world_size) {
  BackendFacts f;
  f.nccl_built = nccl;
  f.mpi_built = false;
  f.gpus = [gpus] { return gpus; };
  f.local_world_size = local_world_size;
  return f;
}

TEST(BackendChoice, AutoIsNcclOnlyWhenEachLocalRankHasAGpu) {
  EXPECT_EQ(choose_backend("auto", machine(true, 1, 0)), "nccl");  // no launcher: one rank
  EXPECT_EQ(choose_backend("auto", machine(true, 1, 1)), "nccl");
  EXPECT_EQ(choose_backend("auto", machine(true, 2, 2)), "nccl");
  EXPECT_EQ(choose_backend("auto", machine(true, 1, 2)), "gloo");  // two ranks, one GPU
  EXPECT_EQ(choose_backend("auto", machine(true, 0, 1)), "gloo");
  EXPECT_EQ(choose_backend("auto", machine(false, 8, 2)), "gloo");
}

TEST(BackendChoice, AutoAsksForTheGpusOnlyWhenNcclIsBuilt) {
  BackendFacts f = machine(false, 1, 2);
  f.gpus = []() -> int { throw std::logic_error("CUDA was asked"); };
  EXPECT_EQ(choose_backend("auto", f), "gloo");
  EXPECT_EQ(choose_backend("gloo", f), "gloo");
}

TEST(BackendChoice, NcclWithTwoRanksOnOneGpuIsAClearError) {
  EXPECT_THROW_WITH(choose_backend("nccl", machine(true, 1, 2)),
                    "nccl needs a GPU for each rank, but LOCAL_WORLD_SIZE=2 ranks share this "
                    "machine's 1 CUDA device(s)");
  EXPECT_EQ(choose_backend("nccl", machine(true, 2, 2)), "nccl");
  EXPECT_EQ(choose_backend("nccl", machine(true, 1, 0)), "nccl");
  // No GPU at all: joining the group reports why (no driver, CUDA_VISIBLE_DEVICES...).
  EXPECT_EQ(choose_backend("nccl", machine(true, 0, 2)), "nccl");
}

TEST(BackendChoice, UnknownAndMissingBackendsAreNamed) {
  EXPECT_THROW_WITH(choose_backend("nccl", machine(false, 1, 1)), "is not built in this ember");
  EXPECT_THROW_WITH(choose_backend("mpi", machine(false, 1, 1)), "is not built in this ember");
  EXPECT_THROW_WITH(choose_backend("ucc", machine(true, 1, 1)), "unknown backend 'ucc'");
}

}  // namespace
}  // namespace ember::distributed
