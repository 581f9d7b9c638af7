// CUDA IPC through a pipe (label cuda) (Note [CUDA IPC], backend/cuda/ipc.h): a spawned child receives a CUDA
// tensor by handle, sees the parent's values, writes into the same memory, and the parent's block
// stays held until the child has released it. Skipped without a GPU.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "ember/backend/cuda/ipc.h"
#include "ember/multiprocessing/process.h"
#include "ember/multiprocessing/queue.h"
#include "tests/cuda/cuda_test_util.h"

namespace ember {
namespace {

using multiprocessing::Connection;

// The consumer: gets the tensor, checks it, adds 1 in place, answers, then releases it.
void cuda_ipc_consumer(int, const std::vector<std::string>& args) {
  Connection conn(std::stoi(args.at(0)));
  {
    Tensor t = conn.recv(30.0).tensor();
    EMBER_CHECK(t.is_cuda(), "[consumer] expected a CUDA tensor, got one on ", t.device());
    EMBER_CHECK(t.cpu().equal(
                    arange(0, 1000, 1, TensorOptions().with_dtype(kFloat32)).view({10, 100}).cpu()),
                "[consumer] the received values differ");
    t.add_(1.0);
    cuda::synchronize();
    conn.send(true);
    conn.recv(30.0);  // the parent has read the values
  }                   // released here: the parent may reuse the block
  conn.send(true);
}
EMBER_MULTIPROCESSING_ENTRY(cuda_ipc_consumer);

TEST(CudaIpc, ATensorTravelsByHandleAndStaysHeldUntilReleased) {
  EMBER_REQUIRE_CUDA();
  auto [mine, theirs] = multiprocessing::Pipe();
  ASSERT_EQ(fcntl(theirs.fd(), F_SETFD, 0), 0);  // the spawned child inherits its end
  multiprocessing::Process child("cuda_ipc_consumer", 0, {std::to_string(theirs.fd())});
  child.start();
  Tensor t =
      arange(0, 1000, 1, TensorOptions().with_dtype(kFloat32)).view({10, 100}).to(testing::gpu());
  mine.send(t);
  EXPECT_EQ(cuda::ipc::collect(), 1u);  // held for the child
  ASSERT_TRUE(mine.recv(30.0).to_bool());
  EXPECT_TRUE(t.cpu().equal(arange(1, 1001, 1, TensorOptions().with_dtype(kFloat32))
                                .view({10, 100})));  // the child's write
  mine.send(true);
  ASSERT_TRUE(mine.recv(30.0).to_bool());
  ASSERT_TRUE(child.join(30.0));
  EXPECT_EQ(child.exitcode(), 0) << child.error();
  EXPECT_EQ(cuda::ipc::collect(), 0u);  // released by the child
}

TEST(CudaIpc, ReceivingFromAnExitedProducerIsAnError) {
  EMBER_REQUIRE_CUDA();
  // A storage exported and marked as from a producer that has gone: import must refuse it.
  Tensor t = ones({16}, TensorOptions(testing::gpu()));
  cuda::ipc::ExportedStorage e = cuda::ipc::export_storage(t.storage());
  // The reference file's header starts with the producer-alive flag.
  ASSERT_EQ(pwrite(e.ref_fd, "\0\0\0\0", 4, 0), 4);
  EXPECT_THROW_WITH(cuda::ipc::import_storage(e.handle, dup(e.ref_fd)), "has exited");
}

}  // namespace
}  // namespace ember
