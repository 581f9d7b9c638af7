// Copies that involve a GPU: both directions, every layout and dtype conversion, pinned and
// pageable memory, and between GPUs where there are several.
#include "tests/cuda/cuda_test_util.h"

namespace ember {
namespace {

using testing::all_close;

TEST(CudaTransfers, RoundTripsWithConversionsAndLayouts) {
  EMBER_REQUIRE_CUDA();
  Tensor x = testing::uniform({33, 17}, kFloat64);
  for (DType dt : {kFloat32, kFloat16, kBFloat16, kInt64, kUInt8}) {
    Tensor g = x.to(Device("cuda:0"), dt);
    EXPECT_TRUE(g.is_cuda());
    EXPECT_TRUE(g.cpu().equal(x.to(dt))) << dt;
  }
  Tensor t = x.t();  // non-contiguous source
  EXPECT_TRUE(t.cuda().cpu().equal(t));
  Tensor dst = zeros({17, 33}, TensorOptions(kFloat32).with_device("cuda:0"))
                   .t();  // non-contiguous destination
  dst.copy_(x);
  EXPECT_TRUE(all_close(dst.cpu(), x, 1e-6, 1e-6));
  Tensor host = zeros({33, 17}, kFloat16);
  host.copy_(x.cuda());
  EXPECT_TRUE(host.equal(x.to(kFloat16)));
  EXPECT_EQ(zeros({0, 3}).cuda().sizes(), (Shape{0, 3}));
  EXPECT_EQ(scalar_tensor(2.5).cuda().item<double>(), 2.5);
}

TEST(CudaTransfers, NonBlockingFromPinnedMemory) {
  EMBER_REQUIRE_CUDA();
  Tensor src = arange(1 << 20, kFloat32).pin_memory();
  Tensor d = src.to(Device("cuda:0"), /*non_blocking=*/true);
  Tensor back = empty({1 << 20}).pin_memory();
  back.copy_(d, /*non_blocking=*/true);
  cuda::current_stream().synchronize();
  EXPECT_TRUE(back.equal(arange(1 << 20, kFloat32)));
}

TEST(CudaTransfers, BetweenGpus) {
  EMBER_REQUIRE_CUDA();
  if (cuda::device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
  Tensor a = testing::uniform({1000, 100}).to("cuda:0");
  Tensor b = a.to("cuda:1");
  EXPECT_EQ(b.device(), Device("cuda:1"));
  EXPECT_TRUE(b.cpu().equal(a.cpu()));
  EXPECT_TRUE(a.t().to("cuda:1", kFloat64).cpu().equal(a.t().cpu().to(kFloat64)));
  EXPECT_THROW_WITH(a + b, "cuda:0 and cuda:1");
}

}  // namespace
}  // namespace ember
