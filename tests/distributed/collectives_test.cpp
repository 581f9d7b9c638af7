// Every collective on every dtype, ranks as threads over the real Gloo algorithms, against a
// reference computed in the test.
#include <gtest/gtest.h>

#include "ember/distributed/distributed.h"
#include "ember/distributed/process_group_nccl.h"
#include "tests/util/test_util.h"

namespace ember::distributed {
namespace {

using testing::values;

const std::vector<DType> kAllDTypes = {kBool,    kUInt8,    kInt32,   kInt64,
                                       kFloat16, kBFloat16, kFloat32, kFloat64};

// Rank r's values: small integers, exact in every dtype (bool: r is odd at odd positions).
Tensor rank_tensor(int rank, DType dtype, int64_t n = 5) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(dtype == kBool ? static_cast<double>((rank + i) % 2) : (rank + 1) * (i + 1) % 7);
  return from_vector(v).to(dtype);
}

std::vector<double> reference(int world, DType dtype, ReduceOp op, int64_t n = 5) {
  std::vector<double> out = values(rank_tensor(0, dtype, n));
  for (int r = 1; r < world; ++r) {
    std::vector<double> v = values(rank_tensor(r, dtype, n));
    for (int64_t i = 0; i < n; ++i) {
      switch (op) {
        case ReduceOp::SUM:
        case ReduceOp::AVG:
          out[i] += v[i];
          break;
        case ReduceOp::PRODUCT:
          out[i] *= v[i];
          break;
        case ReduceOp::MIN:
          out[i] = std::min(out[i], v[i]);
          break;
        case ReduceOp::MAX:
          out[i] = std::max(out[i], v[i]);
          break;
      }
    }
  }
  for (double& x : out) {
    if (op == ReduceOp::AVG) x /= world;
    if (dtype == kBool) x = x != 0;
    if (dtype == kUInt8) x = static_cast<double>(static_cast<uint8_t>(x));
  }
  return out;
}

TEST(Collectives, AllReduceEveryOpAndDType) {
  for (int world : {2, 3}) {
    run_threads(world, [&](int rank) {
      for (DType dtype : kAllDTypes) {
        for (ReduceOp op :
             {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::PRODUCT, ReduceOp::MIN, ReduceOp::MAX}) {
          if (op == ReduceOp::AVG && !is_floating_point(dtype)) continue;
          Tensor t = rank_tensor(rank, dtype);
          all_reduce(t, op);
          std::vector<double> expected = reference(world, dtype, op);
          std::vector<double> got = values(t);
          for (size_t i = 0; i < got.size(); ++i)
            ASSERT_NEAR(got[i], expected[i], std::abs(expected[i]) * 1e-2)
                << dtype << " " << reduce_op_name(op) << " world " << world << " at " << i;
        }
      }
    });
  }
}

TEST(Collectives, AvgOfIntegersIsAnError) {
  run_threads(2, [](int rank) {
    EXPECT_THROW_WITH(all_reduce(rank_tensor(rank, kInt64), ReduceOp::AVG),
                      "AVG needs a floating point tensor");
  });
}

TEST(Collectives, NonContiguousTensorsAreWrittenBack) {
  run_threads(2, [](int rank) {
    Tensor base = arange(6, kFloat64).reshape({2, 3}) * (rank + 1);
    Tensor t = base.transpose(0, 1);  // (3, 2), not contiguous
    all_reduce(t);
    EXPECT_EQ(values(base), (std::vector<double>{0, 3, 6, 9, 12, 15}));
  });
}

TEST(Collectives, BroadcastReduceAndBarrier) {
  run_threads(3, [](int rank) {
    for (DType dtype : kAllDTypes) {
      Tensor t = rank_tensor(rank, dtype);
      broadcast(t, 2);
      EXPECT_EQ(values(t), values(rank_tensor(2, dtype))) << dtype;
      Tensor r = rank_tensor(rank, dtype);
      reduce(r, 1, ReduceOp::MAX);
      if (rank == 1) EXPECT_EQ(values(r), reference(3, dtype, ReduceOp::MAX)) << dtype;
    }
    barrier();
  });
}

TEST(Collectives, GatherScatterAndAllToAll) {
  const int world = 3;
  run_threads(world, [&](int rank) {
    for (DType dtype : kAllDTypes) {
      Tensor in = rank_tensor(rank, dtype);
      std::vector<Tensor> outs;
      for (int r = 0; r < world; ++r) outs.push_back(zeros({5}, dtype));
      all_gather(outs, in);
      for (int r = 0; r < world; ++r) EXPECT_EQ(values(outs[r]), values(rank_tensor(r, dtype)));

      std::vector<Tensor> gathered;
      if (rank == 0)
        for (int r = 0; r < world; ++r) gathered.push_back(zeros({5}, dtype));
      gather(in, gathered, 0);
      for (int r = 0; r < static_cast<int>(gathered.size()); ++r)
        EXPECT_EQ(values(gathered[r]), values(rank_tensor(r, dtype)));

      std::vector<Tensor> pieces;
      if (rank == 1)
        for (int r = 0; r < world; ++r) pieces.push_back(rank_tensor(10 + r, dtype));
      Tensor piece = zeros({5}, dtype);
      scatter(piece, pieces, 1);
      EXPECT_EQ(values(piece), values(rank_tensor(10 + rank, dtype)));

      // all_to_all: chunk r of rank s's input (values s*10 + r) lands in chunk s of rank r.
      Tensor send_buf =
          (full({world, 2}, rank * 10.0) + arange(world, kFloat64).reshape({world, 1}))
              .to(dtype == kBool ? kFloat64 : dtype);
      Tensor recv_buf = zeros_like(send_buf);
      all_to_all(recv_buf, send_buf);
      std::vector<double> got = values(recv_buf);
      for (int s = 0; s < world; ++s) EXPECT_EQ(got[s * 2], static_cast<double>(s * 10 + rank));
    }
  });
}

TEST(Collectives, ReduceScatter) {
  const int world = 2;
  run_threads(world, [&](int rank) {
    for (DType dtype : {kInt32, kFloat32, kFloat64, kBFloat16}) {
      std::vector<Tensor> inputs;
      for (int r = 0; r < world; ++r) inputs.push_back(rank_tensor(rank + r, dtype));
      Tensor out = zeros({5}, dtype);
      reduce_scatter(out, inputs);
      std::vector<double> expected(5, 0);
      for (int s = 0; s < world; ++s) {
        std::vector<double> v = values(rank_tensor(s + rank, dtype));
        for (int i = 0; i < 5; ++i) expected[i] += v[i];
      }
      EXPECT_EQ(values(out), expected) << dtype;
    }
  });
}

// The flat forms, in both shapes PyTorch takes ([world * n] and [world, n]) and through a
// non-contiguous output; the list form of reduce_scatter runs the same ring.
TEST(Collectives, AllGatherIntoTensorAndReduceScatterTensor) {
  for (int world : {1, 2, 3, 4}) {
    run_threads(world, [&](int rank) {
      for (DType dtype : kAllDTypes) {
        Tensor in = rank_tensor(rank, dtype);
        for (bool stacked : {false, true}) {
          Tensor out = stacked ? zeros({world, 5}, dtype) : zeros({world * 5}, dtype);
          all_gather_into_tensor(out, in);
          std::vector<double> got = values(out);
          for (int r = 0; r < world; ++r) {
            std::vector<double> expected = values(rank_tensor(r, dtype));
            for (int i = 0; i < 5; ++i) ASSERT_EQ(got[r * 5 + i], expected[i]) << dtype << r;
          }
        }
        for (ReduceOp op :
             {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::PRODUCT, ReduceOp::MIN, ReduceOp::MAX}) {
          if (op == ReduceOp::AVG && !is_floating_point(dtype)) continue;
          // Every chunk of rank s is rank_tensor(s): the ops and dtypes. Placement is checked
          // below with distinct chunks.
          std::vector<Tensor> chunks;
          for (int r = 0; r < world; ++r) chunks.push_back(rank_tensor(rank, dtype));
          Tensor input = cat(chunks, 0);
          Tensor out = zeros({5}, dtype);
          reduce_scatter_tensor(out, input, op);
          std::vector<double> expected = reference(world, dtype, op);
          std::vector<double> got = values(out);
          for (int i = 0; i < 5; ++i)
            ASSERT_NEAR(got[i], expected[i], std::abs(expected[i]) * 1e-2)
                << dtype << " " << reduce_op_name(op) << " world " << world << " at " << i;
        }
      }
      // Distinct chunks: rank s's input is s * 100 + position; the sum of chunk `rank` over
      // ranks is world * (100 * (world - 1) / 2 + rank * 7 + i).
      Tensor input = arange(world * 7, kFloat64) + 100.0 * rank;
      Tensor base = zeros({7, 2}, kFloat64);
      Tensor out = base.select(1, 1);  // strided
      reduce_scatter_tensor(out, input);
      std::vector<double> got = values(out);
      for (int i = 0; i < 7; ++i)
        ASSERT_EQ(got[i], world * (100.0 * (world - 1) / 2 + rank * 7 + i)) << i;
      EXPECT_EQ(values(base.select(1, 0)), std::vector<double>(7, 0.0));
      std::vector<Tensor> list;
      for (int r = 0; r < world; ++r) list.push_back(input.narrow(0, r * 7, 7));
      Tensor from_list = zeros({7}, kFloat64);
      reduce_scatter(from_list, list);
      EXPECT_EQ(values(from_list), got);
    });
  }
}

TEST(Collectives, FlatCollectivesCheckTheirSizes) {
  run_threads(2, [](int rank) {
    (void)rank;
    EXPECT_THROW_WITH(all_gather_into_tensor(zeros({5}), zeros({3})),
                      "[all_gather_into_tensor] expected the output tensor to have world_size (2) "
                      "times the input tensor's elements (6 for shape [3]), got 5");
    EXPECT_THROW_WITH(reduce_scatter_tensor(zeros({3}), zeros({3})),
                      "expected the input tensor to have world_size (2) times the output tensor's");
    EXPECT_THROW_WITH(all_gather_into_tensor(zeros({6}, kFloat64), zeros({3})),
                      "to have one dtype, got float64 and float32");
    EXPECT_THROW_WITH(reduce_scatter_tensor(zeros({3}, kInt64), zeros({6}, kInt64), ReduceOp::AVG),
                      "AVG needs a floating point tensor");
    barrier();  // nothing was queued: the group still works
  });
}

TEST(Collectives, SendRecvAndAsyncWork) {
  run_threads(2, [](int rank) {
    Tensor t = rank == 0 ? arange(4, kFloat32) : zeros({4});
    if (rank == 0) {
      send(t, 1, nullptr, /*tag=*/7);
    } else {
      recv(t, 0, nullptr, 7);
      EXPECT_EQ(values(t), (std::vector<double>{0, 1, 2, 3}));
    }
    Tensor a = full({1000}, 1.0);
    std::shared_ptr<Work> work = all_reduce(a, ReduceOp::SUM, nullptr, /*async_op=*/true);
    work->wait(std::chrono::seconds(30));
    EXPECT_TRUE(work->is_completed());
    EXPECT_TRUE(work->is_success());
    EXPECT_EQ(a.sum().item<double>(), 2000);
  });
}

TEST(Collectives, NewGroupHasItsOwnRanks) {
  run_threads(3, [](int rank) {
    std::shared_ptr<ProcessGroup> g = new_group({2, 0});
    if (rank == 1) {
      EXPECT_EQ(g, nullptr);
      return;
    }
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(get_rank(g.get()), rank == 2 ? 0 : 1);
    EXPECT_EQ(get_world_size(g.get()), 2);
    Tensor t = full({2}, static_cast<double>(rank));
    all_reduce(t, ReduceOp::SUM, g.get());
    EXPECT_EQ(values(t), (std::vector<double>{2, 2}));
  });
}

TEST(Collectives, MisuseIsAClearError) {
  EXPECT_THROW_WITH(default_group(), "not initialized");
  EXPECT_THROW_WITH(init_process_group("ucc", "env://", 1, 0), "unknown backend 'ucc'");
  if (!nccl_available())
    EXPECT_THROW_WITH(init_process_group("nccl", "env://", 1, 0), "available backends: gloo");
  EXPECT_THROW_WITH(init_process_group("gloo", "udp://x", 1, 0), "unknown init_method");
  run_threads(2, [](int rank) {
    EXPECT_THROW_WITH(broadcast(zeros({2}), 5), "expected a rank in [0, 2)");
    std::vector<Tensor> two = {zeros({2}), zeros({3})};
    EXPECT_THROW_WITH(all_gather(two, zeros({2})), "expected every output to have shape");
  });
}

TEST(Collectives, AFailingRankIsNamed) {
  EXPECT_THROW_WITH(run_threads(2,
                                [](int rank) {
                                  if (rank == 1) EMBER_FAIL("boom");
                                  all_reduce(zeros({2}));
                                }),
                    "rank");
}

}  // namespace
}  // namespace ember::distributed
