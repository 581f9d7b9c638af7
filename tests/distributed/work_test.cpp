// Work, the handle of an operation that may still be running: blocking waits with timeouts, and
// stream-ordered Works (NCCL's) whose wait does not block the host.
#include "ember/distributed/work.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/util/test_util.h"

namespace ember::distributed {
namespace {

using std::chrono::milliseconds;

TEST(Work, WaitTimesOutNamingTheOperationAndSequence) {
  Work work("all_reduce", 17);
  EXPECT_THROW_WITH(work.wait(milliseconds(20)),
                    "[all_reduce] collective #17 timed out after 20 ms");
  std::thread finisher([&] { work.finish(std::make_exception_ptr(Error("boom"))); });
  EXPECT_THROW_WITH(work.wait(), "boom");
  finisher.join();
  EXPECT_TRUE(work.is_completed());
  EXPECT_FALSE(work.is_success());
}

TEST(Work, StreamOrderedWaitReturnsAtOnceAndRethrowsAFailure) {
  Work work("broadcast", 3, /*stream_ordered=*/true);
  work.wait();  // would block for ever if it waited on the host
  EXPECT_FALSE(work.is_completed());
  EXPECT_THROW_WITH(work.synchronize(milliseconds(20)), "[broadcast] collective #3 timed out");
  std::thread finisher([&] { work.finish(std::make_exception_ptr(Error("peer lost"))); });
  EXPECT_THROW_WITH(work.synchronize(), "peer lost");
  finisher.join();
  EXPECT_THROW_WITH(work.wait(), "peer lost");
}

}  // namespace
}  // namespace ember::distributed
