// Tensor::share_memory_ and Module::share_memory: storage moved into anonymous shared memory in
// place (Note [Anonymous shared memory], core/shared_memory.h).
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <string>

#include "ember/core/shared_memory.h"
#include "ember/models/lenet.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

std::set<std::string> dev_shm() {
  std::set<std::string> names;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) names.insert(e->d_name);
    closedir(d);
  }
  return names;
}

TEST(ShareMemory, MovesTheStorageInPlaceAndViewsFollow) {
  Tensor base = arange(0, 12, 1, TensorOptions(kFloat32)).reshape({3, 4});
  Tensor view = base.transpose(0, 1).narrow(0, 1, 2);  // (2, 3), strides (1, 4), offset 1
  Tensor expected = view.contiguous();
  EXPECT_FALSE(base.is_shared());
  view.share_memory_();
  EXPECT_TRUE(base.is_shared());
  EXPECT_TRUE(view.is_shared());
  EXPECT_TRUE(view.is_alias_of(base));
  EXPECT_EQ(view.strides(), (Shape{1, 4}));
  EXPECT_EQ(view.storage_offset(), 1);
  EXPECT_TRUE(view.equal(expected));
  base.fill_(5);
  EXPECT_EQ(view.sum().item<double>(), 30.0);
}

TEST(ShareMemory, AlreadySharedIsANoOp) {
  Tensor t = ones({1000}, kFloat64);
  t.share_memory_();
  void* p = t.data_ptr();
  t.share_memory_();
  EXPECT_EQ(t.data_ptr(), p);
}

TEST(ShareMemory, KeepsDtypeAndEmptyTensors) {
  for (DType dt : {kFloat16, kBFloat16, kInt64, kUInt8, kBool}) {
    Tensor t = arange(0, 10, 1, TensorOptions(kInt64)).to(dt);
    Tensor copy = t.clone();
    t.share_memory_();
    EXPECT_EQ(t.dtype(), dt);
    EXPECT_TRUE(t.equal(copy)) << dt;
  }
  Tensor e = empty({0, 3});
  e.share_memory_();
  EXPECT_TRUE(e.is_shared());
  EXPECT_EQ(e.numel(), 0);
}

TEST(ShareMemory, NonLeafThatRequiresGradIsAnError) {
  Tensor leaf = ones({3}).requires_grad_();
  Tensor y = leaf * 2;
  EXPECT_THROW_WITH(y.share_memory_(), "requires grad and is not a leaf");
  leaf.share_memory_();  // a leaf that requires grad is fine (a parameter)
  EXPECT_TRUE(leaf.is_shared());
  EXPECT_TRUE(leaf.requires_grad());
  Tensor d = y.detach();
  d.share_memory_();
  EXPECT_TRUE(d.is_shared());
}

TEST(ShareMemory, AChildsWriteIsSeenByTheParent) {
  Tensor t = zeros({1 << 16});
  t.share_memory_();
  pid_t pid = fork();
  if (pid == 0) {
    t.fill_(3);
    t.narrow(0, 0, 1).fill_(-1);
    std::_Exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(t.sum().item<double>(), 3.0 * ((1 << 16) - 1) - 1);
}

TEST(ShareMemory, NothingAppearsInDevShm) {
  auto before = dev_shm();
  {
    Tensor t = ones({1 << 20});
    t.share_memory_();
    EXPECT_EQ(dev_shm(), before);
  }
  EXPECT_EQ(dev_shm(), before);
}

TEST(ShareMemory, SegmentIsFreedWithItsLastTensor) {
  Tensor t = ones({100});
  t.share_memory_();
  int fd = shared_memory_fd(t.storage()->data);
  EXPECT_GE(fcntl(fd, F_GETFD), 0);
  t = Tensor();
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);  // the descriptor was closed with its storage
}

TEST(ShareMemory, ModuleSharesParametersBuffersAndExistingGrads) {
  auto model = nn::make<models::LeNet>();
  Tensor x = randn({2, 1, 28, 28});
  model->forward(x).sum().backward();
  std::vector<Tensor> params = model->parameters();
  Tensor first_grad = params[0].grad();
  model->share_memory();
  for (const Tensor& p : model->parameters()) {
    EXPECT_TRUE(p.is_shared());
    EXPECT_TRUE(p.grad().is_shared());
  }
  for (const Tensor& b : model->buffers()) EXPECT_TRUE(b.is_shared());
  EXPECT_TRUE(params[0].is_shared());  // handles taken before follow
  EXPECT_TRUE(params[0].grad().is_alias_of(first_grad));
}

}  // namespace
}  // namespace ember
