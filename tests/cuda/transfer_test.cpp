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

TEST(CudaTransfers, PinnedBuffersAreNotReusedUnderAPendingCopy) {
  EMBER_REQUIRE_CUDA();
  // The guides' loader loop: each batch pinned, copied without waiting, its pinned buffer freed at
  // once. A buffer reused before its copy ran would hand a later batch's values to an earlier one.
  constexpr int kBatches = 16;
  constexpr int64_t kN = 1 << 22;  // 16 MiB per batch: copies take long enough to overlap
  std::vector<Tensor> on_gpu;
  for (int i = 0; i < kBatches; ++i)
    on_gpu.push_back(full({kN}, static_cast<double>(i)).pin_memory().to(Device("cuda:0"), true));
  for (int i = 0; i < kBatches; ++i) {
    EXPECT_EQ(on_gpu[static_cast<size_t>(i)].min().item<double>(), i);
    EXPECT_EQ(on_gpu[static_cast<size_t>(i)].max().item<double>(), i);
  }
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
  // A converting copy stages on the source GPU; the staging memory must outlive the peer copy
  // even when the source's next kernel reuses it at once.
  for (int i = 0; i < 8; ++i) {
    Tensor h =
        full({1 << 22}, static_cast<double>(i), TensorOptions(kFloat16).with_device("cuda:0"));
    Tensor f = h.to("cuda:1", kFloat32);
    Tensor scribble = full({1 << 22}, -1.0, TensorOptions(kFloat32).with_device("cuda:0"));
    EXPECT_EQ(f.min().item<double>(), i);
    EXPECT_EQ(f.max().item<double>(), i);
  }
}

TEST(CudaTransfers, OpsRunOnTheirTensorsDeviceWhateverIsCurrent) {
  EMBER_REQUIRE_CUDA();
  if (cuda::device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
  cuda::DeviceGuard current(Device("cuda:0"));
  Tensor x = testing::uniform({257, 129}).to("cuda:1");
  Tensor y = (x * 2 + 1).softmax(1).sum(0);
  Tensor ref = (x.cpu() * 2 + 1).softmax(1).sum(0);
  EXPECT_TRUE(all_close(y.cpu(), ref, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(x.matmul(x.t()).cpu(), x.cpu().matmul(x.cpu().t()), 1e-3, 1e-4));
  EXPECT_EQ(cuda::current_device(), 0);  // the ops switched devices only for their launches
  cuda::Stream side = cuda::get_stream_from_pool(false, 1);
  cuda::StreamGuard on_side(side);  // a pool stream of cuda:1, used while cuda:1 is current
  cuda::DeviceGuard back(Device("cuda:0"));
  EXPECT_TRUE(all_close((x + x).cpu(), x.cpu() * 2, 1e-6, 1e-6));
}

}  // namespace
}  // namespace ember
