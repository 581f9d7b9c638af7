// Queues and pipes pass tensors by descriptor (Note [Tensors by descriptor], queue.h): the
// receiver's tensor is the sender's memory; plain values are serialised.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <set>
#include <string>

#include "ember/multiprocessing/process.h"
#include "ember/multiprocessing/queue.h"
#include "tests/util/test_util.h"

namespace ember::multiprocessing {
namespace {

size_t open_fds() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d)) ++n;
    closedir(d);
  }
  return n;
}

TEST(Queue, ATensorRoundTripsWithoutACopy) {
  Queue q;
  Tensor t = arange(0, 6, 1, TensorOptions(kFloat64)).reshape({2, 3});
  t.share_memory_();
  void* before = t.data_ptr();
  q.put(t);
  EXPECT_EQ(t.data_ptr(), before);  // an already shared tensor is not copied
  Tensor r = q.get(5.0).tensor();
  EXPECT_TRUE(r.is_shared());
  EXPECT_EQ(r.dtype(), kFloat64);
  EXPECT_EQ(r.sizes(), t.sizes());
  EXPECT_TRUE(r.equal(t));
  r.fill_(7);  // the same memory, mapped twice
  EXPECT_EQ(t.sum().item<double>(), 42.0);
}

TEST(Queue, PutMovesAnUnsharedTensorIntoSharedMemoryInPlace) {
  Queue q;
  Tensor base = zeros({4, 4});
  Tensor view = base.transpose(0, 1).narrow(1, 1, 2);
  q.put(view);
  EXPECT_TRUE(base.is_shared());
  Tensor r = q.get(5.0).tensor();
  EXPECT_EQ(r.strides(), view.strides());
  EXPECT_EQ(r.storage_offset(), view.storage_offset());
  r.fill_(1);
  EXPECT_EQ(base.sum().item<double>(), 8.0);
}

TEST(Queue, ViewsSentTogetherStayViewsOfOneStorage) {
  Queue q;
  Tensor a = zeros({10});
  q.put(Value::List{a, a.narrow(0, 2, 3), zeros({2})});
  Value v = q.get(5.0);
  ASSERT_EQ(v.list().size(), 3u);
  EXPECT_TRUE(v.list()[0].tensor().is_alias_of(v.list()[1].tensor()));
  EXPECT_FALSE(v.list()[0].tensor().is_alias_of(v.list()[2].tensor()));
}

TEST(Queue, PlainValuesAreSerialised) {
  Queue q;
  Value::Dict d{
      {"lr", 0.1}, {"epochs", 3}, {"name", "lenet"}, {"flags", Value::List{true, Value()}}};
  q.put(d);
  q.put(std::string(1000, 'x'));
  Value v = q.get(5.0);
  EXPECT_EQ(v.dict().at("lr").to_double(), 0.1);
  EXPECT_EQ(v.dict().at("epochs").to_int(), 3);
  EXPECT_EQ(v.dict().at("name").to_string(), "lenet");
  EXPECT_TRUE(v.dict().at("flags").list()[0].to_bool());
  EXPECT_TRUE(v.dict().at("flags").list()[1].is_none());
  EXPECT_EQ(q.get(5.0).to_string().size(), 1000u);
  EXPECT_THROW_WITH(v.dict().at("lr").to_string(), "expected a string, got a double");
}

TEST(Queue, AStateDictTravelsAndKeepsRequiresGrad) {
  Queue q;
  std::map<std::string, Tensor> state{{"w", ones({3, 3}).requires_grad_()}, {"b", zeros({3})}};
  q.put(state);
  auto r = q.get(5.0).tensor_dict();
  EXPECT_TRUE(r.at("w").requires_grad());
  EXPECT_FALSE(r.at("b").requires_grad());
  EXPECT_TRUE(r.at("w").equal(state.at("w")));
}

TEST(Queue, Errors) {
  Queue q;
  Tensor leaf = ones({2}).requires_grad_();
  EXPECT_THROW_WITH(q.put(leaf * 2), "requires grad and is not a leaf");
  EXPECT_THROW_WITH(q.put(std::string(1 << 20, 'x')), "send large data as tensors");
  EXPECT_THROW_WITH(q.get(0.01), "nothing arrived within");
  EXPECT_FALSE(q.get_nowait().has_value());
  EXPECT_TRUE(q.empty());
}

TEST(Queue, ChildrenAndParentShareTensorsThroughIt) {
  Queue to_children, to_parent;
  Tensor t = zeros({2, 1000});
  to_children.put(t);
  to_children.put(t);
  spawn(2, [&](int i) {
    Tensor mine = to_children.get(10.0).tensor();
    mine.select(0, i).fill_(i + 1);  // written in the child, into the parent's memory
    for (int k = 0; k < 50; ++k) to_parent.put(Value::List{i, full({3}, k)});
  });
  EXPECT_EQ(t.select(0, 0).sum().item<double>(), 1000.0);
  EXPECT_EQ(t.select(0, 1).sum().item<double>(), 2000.0);
  int per_child[2] = {0, 0};
  double total = 0;
  while (auto v = to_parent.get_nowait()) {
    per_child[v->list()[0].to_int()] += 1;
    total += v->list()[1].tensor().sum().item<double>();
  }
  EXPECT_EQ(per_child[0], 50);
  EXPECT_EQ(per_child[1], 50);
  EXPECT_EQ(total, 2 * 3 * (49 * 50 / 2));
}

// A child started by exec: its queue and pipe end come by handle among its arguments.
void queue_by_handle_worker(int index, const std::vector<std::string>& args) {
  Queue q = Queue::from_handle(args.at(0));
  Connection reply = Connection::from_handle(args.at(1));
  Tensor t = q.get(10.0).tensor();
  t.fill_(index + 7);  // into the parent's memory
  reply.send(Value::List{index, t.sum()});
}
EMBER_MULTIPROCESSING_ENTRY(queue_by_handle_worker);

TEST(Queue, SpawnedChildrenGetQueuesByHandle) {
  Queue q;
  auto [mine, theirs] = Pipe();
  Tensor t = zeros({4, 256});
  for (int i = 0; i < 2; ++i) q.put(t.select(0, i));
  size_t before = open_fds();
  spawn(2, "queue_by_handle_worker", {q.handle(), theirs.handle()}, StartMethod::Spawn);
  EXPECT_EQ(open_fds(), before);  // the ends handed over stay the parent's too, nothing leaks
  double sums[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    Value v = mine.recv(10.0);
    sums[v.list()[0].to_int()] = v.list()[1].tensor().item<double>();
  }
  // Each child filled the row it got: which one is a race, the values are not.
  std::set<double> rows = {t.select(0, 0).sum().item<double>(),
                           t.select(0, 1).sum().item<double>()};
  EXPECT_EQ(rows, (std::set<double>{7 * 256.0, 8 * 256.0}));
  EXPECT_EQ(sums[0], 7 * 256.0);
  EXPECT_EQ(sums[1], 8 * 256.0);
  EXPECT_EQ(t.select(0, 2).sum().item<double>(), 0.0);
}

TEST(Queue, HandlesAreChecked) {
  Queue q;
  EXPECT_THROW_WITH(Queue::from_handle("ember-fds:1x"), "expected a handle like");
  EXPECT_THROW_WITH(Queue::from_handle(q.handle().substr(0, q.handle().find(','))),
                    "two descriptors");
  EXPECT_THROW_WITH(Connection::from_handle("ember-fds:987654"), "is not open in this process");
  int file = open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_THROW_WITH(Connection::from_handle("ember-fds:" + std::to_string(file)),
                    "is not a queue's or pipe's socket");
  close(file);
  // A handle whose queue is gone cannot reach a child.
  std::string stale;
  {
    Queue gone;
    stale = gone.handle();
  }
  Process p("queue_by_handle_worker", 0, {stale, stale});
  EXPECT_THROW_WITH(p.start(), "which is not open here");
}

TEST(Queue, ReceivedTensorsCloseTheirDescriptors) {
  Queue q;
  Tensor t = ones({100});
  t.share_memory_();  // its own segment stays open as long as t
  size_t before = open_fds();
  for (int i = 0; i < 100; ++i) {
    q.put(t);
    Tensor r = q.get(5.0).tensor();
  }
  EXPECT_EQ(open_fds(), before);
}

TEST(Pipe, BothEndsSendAndReceive) {
  auto [a, b] = Pipe();
  a.send(1);
  b.send("two");
  EXPECT_EQ(b.recv(5.0).to_int(), 1);
  EXPECT_EQ(a.recv(5.0).to_string(), "two");
  EXPECT_FALSE(a.poll(0));
}

}  // namespace
}  // namespace ember::multiprocessing
