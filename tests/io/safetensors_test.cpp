// safetensors: a round trip of every dtype, and one test per reader rule listed in
// io/safetensors.h.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/util/test_util.h"

namespace ember {
namespace {

namespace fs = std::filesystem;
using testing::all_close;

std::string file_bytes(const std::string& header_json, const std::string& data, bool pad = true) {
  std::string h = header_json;
  if (pad) h.append((8 - h.size() % 8) % 8, ' ');
  uint64_t n = h.size();
  std::string out(reinterpret_cast<const char*>(&n), 8);
  return out + h + data;
}

void expect_rejected(const std::string& bytes, const std::string& why) {
  EXPECT_THROW_WITH(io::from_safetensors(bytes), why);
}

TEST(Safetensors, RoundTripsEveryDtypeAndMetadata) {
  nn::NamedTensors tensors;
  for (DType t : {kBool, kUInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64})
    tensors.emplace_back(std::string("t_") + dtype_name(t),
                         testing::uniform({2, 3}, kFloat64, 0, 5).to(t));
  tensors.emplace_back("scalar", scalar_tensor(3.5));
  tensors.emplace_back("empty", zeros({0, 4}));
  std::string bytes = io::to_safetensors(tensors, {{"format", "pt"}, {"epoch", "3"}});
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u) << "the header is padded to 8 bytes";
  EXPECT_EQ(bytes[8], '{');
  io::SafetensorsFile f = io::from_safetensors(bytes);
  EXPECT_EQ(f.metadata.at("epoch"), "3");
  ASSERT_EQ(f.tensors.size(), tensors.size());
  for (auto& [name, t] : tensors) {
    auto it =
        std::find_if(f.tensors.begin(), f.tensors.end(), [&](auto& e) { return e.first == name; });
    ASSERT_NE(it, f.tensors.end()) << name;
    EXPECT_EQ(it->second.dtype(), t.dtype()) << name;
    EXPECT_TRUE(it->second.equal(t)) << name;
  }
  // Descending alignment, then name: the 8-byte types come first.
  EXPECT_EQ(f.tensors[0].first, "t_float64");
  EXPECT_EQ(f.tensors[1].first, "t_int64");
}

TEST(Safetensors, AnEmptyTensorMaySitAtAnotherTensorsOffset) {
  // The writer puts the empty float64 first, at [0, 0], and the float32 at [0, 8]; the reader
  // must not take that for an overlap whatever order the header lists them in.
  nn::NamedTensors tensors{{"a", ones({2})}, {"z", zeros({0}, kFloat64)}};
  io::SafetensorsFile f = io::from_safetensors(io::to_safetensors(tensors));
  ASSERT_EQ(f.tensors.size(), 2u);
  expect_rejected(
      file_bytes(
          R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"z":{"dtype":"F64","shape":[0],"data_offsets":[0,0]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
          std::string(8, '\0')),
      "starts at 4 but the previous data ends at 8");
}

TEST(Safetensors, ReaderRules) {
  std::string four_floats(16, '\0');
  // N bounds
  {
    std::string b(8, '\0');
    uint64_t huge = 200000000;
    std::memcpy(b.data(), &huge, 8);
    expect_rejected(b + std::string(100, ' '), "exceeds the limit of 100000000");
    uint64_t past = 1000;
    std::memcpy(b.data(), &past, 8);
    expect_rejected(b + "{}", "exceeds the file size minus 8");
  }
  expect_rejected("1234", "too small");
  expect_rejected(file_bytes(R"( {"a":1})", ""), "does not start with '{'");
  expect_rejected(file_bytes(R"({"a": )", ""), "not valid JSON");
  // Duplicates, which a JSON library would silently resolve.
  expect_rejected(
      file_bytes(
          R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
          four_floats),
      "duplicate key 'w'");
  expect_rejected(
      file_bytes(R"({"w":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})",
                 std::string(2, '\0')),
      "tensor 'w' has unsupported dtype F8_E4M3");
  expect_rejected(
      file_bytes(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", four_floats),
      "span 16 bytes but dtype and shape need 12");
  expect_rejected(
      file_bytes(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,16]}})", four_floats),
      "non-negative integers");
  expect_rejected(
      file_bytes(R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,16]}})",
                 four_floats),
      "overflows");
  expect_rejected(
      file_bytes(
          R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
          four_floats),
      "offsets must be contiguous");
  expect_rejected(
      file_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", four_floats),
      "starts at 8 but the previous data ends at 0");
  expect_rejected(
      file_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", four_floats),
      "the data ends at 8 but the file holds 16 bytes");
  expect_rejected(
      file_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", four_floats),
      "begin > end");
  expect_rejected(file_bytes(R"({"__metadata__":{"k":3}})", ""), "is not a string");
  expect_rejected(file_bytes(R"({"a":{"dtype":"F32","shape":[4]}})", four_floats),
                  "needs dtype, shape and data_offsets");
  // And a file that follows every rule loads.
  io::SafetensorsFile ok = io::from_safetensors(file_bytes(
      R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"__metadata__":{"k":"v"}})",
      four_floats));
  EXPECT_EQ(ok.tensors[0].second.sizes(), (Shape{2, 2}));
  EXPECT_EQ(ok.metadata.at("k"), "v");
}

TEST(Safetensors, AtomicSaveKeepsThePreviousFileOnFailure) {
  fs::path dir = fs::temp_directory_path() / ("ember_io_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "model.safetensors").string();
  io::save_safetensors(path, {{"w", ones({3})}});
  // A failure while writing (here: an undefined tensor) leaves the old checkpoint, and no debris.
  EXPECT_THROW_WITH(io::save_safetensors(path, {{"w", Tensor()}}), "undefined");
  EXPECT_THROW_WITH(io::write_atomically(path,
                                         [](std::ostream& os) {
                                           os << "half a file";
                                           EMBER_FAIL("simulated crash while serialising");
                                         }),
                    "simulated crash");
  EXPECT_TRUE(io::load_safetensors(path).tensors[0].second.equal(ones({3})));
  size_t files = 0;
  for (auto& e : fs::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u) << "no temporary file left behind";
  EXPECT_THROW_WITH(
      io::save_safetensors((dir / "missing" / "x.safetensors").string(), {{"w", ones({1})}}),
      "does not exist");
  fs::remove_all(dir);
}

TEST(Checkpoint, ModelAndOptimizerComeBack) {
  fs::path dir = fs::temp_directory_path() / ("ember_ckpt_" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto model = nn::make<models::MLP>(std::vector<int64_t>{4, 8, 2});
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
  Tensor x = randn({5, 4});
  nn::functional::cross_entropy(model->forward(x), tensor({0, 1, 1, 0, 1})).backward();
  opt.step();
  std::string path = (dir / "ckpt.safetensors").string();
  io::save_checkpoint(path, *model, opt, {{"epoch", "7"}});
  auto model2 = nn::make<models::MLP>(std::vector<int64_t>{4, 8, 2});
  optim::SGD opt2(model2->parameters(), optim::SGDOptions(0.5).with_momentum(0.9));
  io::Metadata meta = io::load_checkpoint(path, *model2, opt2);
  EXPECT_EQ(meta.at("epoch"), "7");
  EXPECT_EQ(opt2.lr(), 0.1);
  EXPECT_TRUE(all_close(model->forward(x), model2->forward(x), 0, 0));
  // A checkpoint of another model changes neither the model nor the optimizer.
  auto other = nn::make<models::MLP>(std::vector<int64_t>{4, 3, 2});
  optim::SGD other_opt(other->parameters(), optim::SGDOptions(0.3));
  io::save_checkpoint(path, *other, other_opt);
  EXPECT_THROW_WITH(io::load_checkpoint(path, *model2, opt2), "size mismatch");
  EXPECT_EQ(opt2.lr(), 0.1);
  EXPECT_EQ(opt2.state_dict().size(), opt.state_dict().size()) << "the momentum buffers are kept";
  fs::remove_all(dir);
}

// The scheduler's state and extra tensors (a generator's state) travel with model and optimizer;
// a checkpoint that does not fit leaves the scheduler as it was too.
TEST(Checkpoint, SchedulerAndExtraTensorsComeBack) {
  fs::path dir = fs::temp_directory_path() / ("ember_ckpt_sched_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "ckpt.safetensors").string();
  auto model = nn::make<models::MLP>(std::vector<int64_t>{4, 8, 2});
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
  optim::StepLR sched(opt, /*step_size=*/2, /*gamma=*/0.5);
  for (int i = 0; i < 3; ++i) sched.step();  // epoch 3: lr 0.1 * 0.5
  Tensor generator = tensor({5.0, 9.0}).to(kInt64);
  io::save_checkpoint(path, *model, opt, {{"epoch", "3"}}, {&sched, {{"generator.0", generator}}});

  auto model2 = nn::make<models::MLP>(std::vector<int64_t>{4, 8, 2});
  optim::SGD opt2(model2->parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
  optim::StepLR sched2(opt2, 2, 0.5);
  io::LoadedCheckpoint loaded = io::load_checkpoint(path, *model2, opt2, &sched2);
  EXPECT_EQ(loaded.metadata.at("epoch"), "3");
  EXPECT_EQ(sched2.last_epoch(), 3);
  EXPECT_DOUBLE_EQ(opt2.lr(), 0.05);
  ASSERT_EQ(loaded.extra.size(), 1u);
  EXPECT_EQ(loaded.extra[0].first, "generator.0");
  EXPECT_TRUE(loaded.extra[0].second.equal(generator));
  sched2.step();
  EXPECT_DOUBLE_EQ(opt2.lr(), 0.025) << "the schedule goes on from where it was";

  // Without the scheduler it holds, or with one it lacks: clear errors.
  EXPECT_THROW_WITH(io::load_checkpoint(path, *model2, opt2), "pass the scheduler");
  io::save_checkpoint(path, *model, opt);
  EXPECT_THROW_WITH(io::load_checkpoint(path, *model2, opt2, &sched2),
                    "holds no learning-rate scheduler's state");
  // Another model's checkpoint changes neither the scheduler nor the rates.
  auto other = nn::make<models::MLP>(std::vector<int64_t>{4, 3, 2});
  optim::SGD other_opt(other->parameters(), optim::SGDOptions(0.3));
  optim::StepLR other_sched(other_opt, 1, 0.1);
  io::save_checkpoint(path, *other, other_opt, {}, {&other_sched, {}});
  EXPECT_THROW_WITH(io::load_checkpoint(path, *model2, opt2, &sched2), "size mismatch");
  EXPECT_EQ(sched2.last_epoch(), 4);
  EXPECT_DOUBLE_EQ(opt2.lr(), 0.025);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ember
