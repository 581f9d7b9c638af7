// A LeNet trained in PyTorch 1.13 and written as safetensors (json + struct, tests/oracle) loads
// into ember and predicts the same classes; ember's file loads into PyTorch and does too.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tests/util/npy.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

namespace fs = std::filesystem;

TEST(Interop, PyTorchToEmberAndBack) {
  std::string py = testing::torch_python();
  if (py.empty()) GTEST_SKIP() << "needs /usr/bin/python3 with torch (python3-torch)";
  if (!fs::exists(fs::path(data::datasets::kFashionMnistDir) / "t10k-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "needs Debian's dataset-fashion-mnist";
  fs::path dir = fs::temp_directory_path() / ("ember_interop_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string script = std::string(EMBER_SOURCE_DIR) + "/tests/oracle/lenet_interop.py";
  // 1. PyTorch trains and saves; ember loads and predicts.
  ASSERT_EQ(std::system((py + " " + script + " train " + dir.string()).c_str()), 0);
  data::datasets::MNIST test(data::datasets::kFashionMnistDir, {false});
  std::vector<size_t> idx;
  for (size_t i = 0; i < 500; ++i) idx.push_back(i);
  Tensor x = test.get_batch(idx).data;
  auto model = nn::make<models::LeNet>();
  io::load(*model, (dir / "torch_lenet.safetensors").string());
  model->eval();
  Tensor logits;
  {
    NoGradGuard no_grad;
    logits = model->forward(x);
  }
  Tensor torch_logits = testing::read_npy((dir / "torch_logits.npy").string());
  EXPECT_TRUE(argmax(logits, 1).equal(argmax(torch_logits, 1))) << "same classes";
  EXPECT_TRUE(testing::all_close(logits, torch_logits, 1e-4, 1e-4));
  // 2. ember trains a little more and saves; PyTorch loads and predicts the same classes.
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.01).with_momentum(0.9));
  model->train();
  for (size_t start = 0; start < 512; start += 64) {
    std::vector<size_t> b;
    for (size_t i = start; i < start + 64; ++i) b.push_back(i);
    data::Example batch = test.get_batch(b);
    opt.zero_grad();
    nn::functional::cross_entropy(model->forward(batch.data), batch.target).backward();
    opt.step();
  }
  model->eval();
  io::save(*model, (dir / "ember_lenet.safetensors").string());
  {
    NoGradGuard no_grad;
    testing::write_npy((dir / "ember_logits.npy").string(), model->forward(x));
  }
  ASSERT_EQ(std::system((py + " " + script + " check " + dir.string()).c_str()), 0)
      << "PyTorch disagreed with ember's predictions";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ember
