// Streams and events: ordering, the guides' wrong example (a consumer on a side stream that does
// not wait for its producer) made right with wait_stream, record_stream, and event timing.
#include "tests/cuda/cuda_test_util.h"

namespace ember {
namespace {

// Enough GPU work to keep a stream busy for a while.
Tensor busy_work(const Tensor& x, int rounds) {
  Tensor y = x;
  for (int i = 0; i < rounds; ++i) y = (y * 1.000001 + 0.000001).relu();
  return y;
}

TEST(CudaStreams, PoolsGuardsAndCurrentStreams) {
  EMBER_REQUIRE_CUDA();
  cuda::Stream def = cuda::current_stream();
  EXPECT_EQ(def, cuda::default_stream());
  cuda::Stream side = cuda::get_stream_from_pool();
  EXPECT_NE(side, def);
  {
    cuda::StreamGuard guard(side);
    EXPECT_EQ(cuda::current_stream(), side);
  }
  EXPECT_EQ(cuda::current_stream(), def);
  cuda::Stream high = cuda::get_stream_from_pool(/*high_priority=*/true);
  EXPECT_NE(high, side);
}

TEST(CudaStreams, TheSideStreamMustWaitForItsProducer) {
  EMBER_REQUIRE_CUDA();
  Tensor x = ones({1 << 22}, TensorOptions().with_device("cuda:0"));
  Tensor y = busy_work(x, 50);  // produced on the default stream
  cuda::Stream side = cuda::get_stream_from_pool();
  side.wait_stream(cuda::current_stream());  // without this line the sum below may read y early
  Tensor total;
  {
    cuda::StreamGuard guard(side);
    total = y.sum();
    y.record_stream(side.handle());  // y is used on `side`: its memory waits for it
  }
  cuda::current_stream().wait_stream(side);
  EXPECT_NEAR(
      total.item<double>(),
      busy_work(ones({1}, TensorOptions().with_device("cuda:0")), 50).item<double>() * (1 << 22),
      1e-2 * (1 << 22));
}

TEST(CudaStreams, RecordStreamDelaysReuse) {
  EMBER_REQUIRE_CUDA();
  cuda::Stream side = cuda::get_stream_from_pool();
  void* ptr;
  {
    Tensor t = ones({1 << 20}, TensorOptions().with_device("cuda:0"));
    ptr = t.data_ptr();
    cuda::StreamGuard guard(side);
    Tensor r = busy_work(t, 200);  // keeps `side` busy with t
    t.record_stream(side.handle());
  }
  Tensor u = empty({1 << 20}, TensorOptions().with_device("cuda:0"));
  if (!side.query())
    EXPECT_NE(u.data_ptr(), ptr) << "t's memory was handed out while `side` still used it";
  side.synchronize();
}

TEST(CudaStreams, EventsTimeAndOrder) {
  EMBER_REQUIRE_CUDA();
  cuda::Event start(/*enable_timing=*/true), end(true);
  start.record();
  Tensor y = busy_work(ones({1 << 22}, TensorOptions().with_device("cuda:0")), 20);
  end.record();
  end.synchronize();
  EXPECT_TRUE(end.query());
  EXPECT_GT(start.elapsed_time(end), 0.0f);
  cuda::Event plain;
  EXPECT_TRUE(plain.query()) << "an event never recorded has happened";
  EXPECT_THROW_WITH(plain.elapsed_time(end), "enable_timing");
}

TEST(CudaStreams, BackwardRunsOnTheForwardStream) {
  EMBER_REQUIRE_CUDA();
  cuda::Stream side = cuda::get_stream_from_pool();
  Tensor w = ones({1000}, TensorOptions().with_device("cuda:0")).requires_grad_();
  Tensor loss;
  {
    cuda::StreamGuard guard(side);
    loss = (w * w).sum();
  }
  side.synchronize();
  {
    cuda::StreamGuard guard(side);
    loss.backward();
  }
  side.synchronize();
  EXPECT_EQ(w.grad().sum().item<double>(), 2000);
}

}  // namespace
}  // namespace ember
