#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "tests/util/test_util.h"

namespace ember {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  TempDir()
      : path(fs::temp_directory_path() /
             ("ember_mnist_" + std::to_string(getpid()) + "_" + std::to_string(counter++))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
  static inline int counter = 0;
};

std::string idx_bytes(std::vector<uint32_t> dims, size_t data_bytes, uint8_t type = 0x08,
                      uint8_t lead = 0) {
  std::string s;
  s += static_cast<char>(lead);
  s += static_cast<char>(0);
  s += static_cast<char>(type);
  s += static_cast<char>(dims.size());
  for (uint32_t d : dims)
    for (int shift : {24, 16, 8, 0}) s += static_cast<char>((d >> shift) & 0xFF);
  for (size_t i = 0; i < data_bytes; ++i) s += static_cast<char>(i % 10);
  return s;
}

void write_file(const fs::path& p, const std::string& bytes, bool gz) {
  if (gz) {
    gzFile f = gzopen(p.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(p, std::ios::binary) << bytes;
  }
}

TEST(Idx, ReadsPlainAndGzippedFiles) {
  TempDir dir;
  for (bool gz : {false, true}) {
    fs::path p = dir.path / (gz ? "a.gz" : "a");
    write_file(p, idx_bytes({3, 2, 2}, 12), gz);
    Tensor t = data::read_idx(p.string(), 3);
    EXPECT_EQ(t.sizes(), (Shape{3, 2, 2}));
    EXPECT_EQ(t.dtype(), kUInt8);
    EXPECT_EQ(t[2][1][1].item<int64_t>(), 11 % 10);
  }
}

TEST(Idx, EveryCorruptionIsAOneLineErrorWithFieldAndOffset) {
  TempDir dir;
  auto check = [&](const std::string& bytes, bool gz, const std::string& expected,
                   std::optional<int> dims = 3) {
    fs::path p = dir.path / "bad.gz";
    write_file(p, bytes, gz);
    try {
      data::read_idx(p.string(), dims);
      ADD_FAILURE() << "expected an error containing " << expected;
    } catch (const Error& e) {
      std::string m = e.what();
      EXPECT_NE(m.find(expected), std::string::npos) << m;
      EXPECT_NE(m.find(p.string()), std::string::npos) << "the file is named: " << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
    }
  };
  check(idx_bytes({2, 2, 2}, 8, 0x08, 7), false, "magic number at offset 0");
  check(idx_bytes({2, 2, 2}, 8, 0x0D), true, "data type at offset 2: expected 0x08");
  check(idx_bytes({2, 2}, 4), true, "number of dimensions at offset 3: expected 3, got 2");
  check(idx_bytes({2, 2, 2}, 5), true, "data at offset 21: expected 8 bytes, got 5");
  check(idx_bytes({2, 2, 2}, 5), false, "the header implies 24 bytes, but the file has only 21");
  check(idx_bytes({0, 2, 2}, 0), true, "dimension 0 at offset 4");
  check(idx_bytes({65536, 65536, 65536}, 0), true, "more than the 4 GiB limit");
  check(std::string("\0\0", 2), true, "magic number at offset 2: expected 4 bytes, got 2");
  check(idx_bytes({2, 2, 2}, 9), true, "end of data at offset 24: expected the end of the file");
  check(idx_bytes({2, 2, 2}, 9), false, "end of data at offset 24: expected the end of the file");
  // Sizes the file cannot hold are rejected before anything is allocated for them (found by
  // fuzzing: a 20-byte header asked for 4 GiB): a plain file must have the bytes, a gzipped one
  // must be able to inflate to them (deflate's ratio is at most 1032:1).
  check(idx_bytes({4096, 4096, 64}, 0), false, "but the file has only 16 bytes");
  check(idx_bytes({4096, 4096, 64}, 0), true, "which cannot inflate to that much");
  // A flipped bit in the CRC: zlib checks it once it reaches the end of the stream.
  {
    fs::path whole = dir.path / "crc.gz";
    write_file(whole, idx_bytes({2, 2, 2}, 8), true);
    std::ifstream in(whole, std::ios::binary);
    std::string gzbytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    gzbytes[gzbytes.size() - 6] ^= 0x01;  // inside the CRC-32 of the trailer
    check(gzbytes, false, "incorrect data check");
  }
  // A gzip stream cut in the middle: zlib reports it only through gzerror.
  {
    fs::path whole = dir.path / "whole.gz";
    write_file(whole, idx_bytes({10, 28, 28}, 7840), true);
    std::ifstream in(whole, std::ios::binary);
    std::string gzbytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    fs::path cut = dir.path / "cut.gz";
    std::ofstream(cut, std::ios::binary) << gzbytes.substr(0, gzbytes.size() / 2);
    try {
      data::read_idx(cut.string(), 3);
      ADD_FAILURE() << "a truncated .gz must be an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("unexpected end of file"), std::string::npos)
          << e.what();
    }
  }
}

TEST(MNIST, FashionMnistFromDebian) {
  std::string root = data::datasets::kFashionMnistDir;
  if (!fs::exists(fs::path(root) / "t10k-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "needs Debian's dataset-fashion-mnist (scripts/install-deps installs it)";
  data::datasets::MNIST test(root, {false});
  ASSERT_EQ(test.size(), 10000u);
  EXPECT_EQ(test.images().sizes(), (Shape{10000, 28, 28}));
  Tensor counts = one_hot(test.labels(), 10).sum({0});
  for (double c : testing::values(counts)) EXPECT_EQ(c, 1000);
  data::Example e = test.get(0);
  EXPECT_EQ(e.data.sizes(), (Shape{1, 28, 28}));
  EXPECT_EQ(e.data.dtype(), kFloat32);
  data::Example b = test.get_batch({0, 5, 9});
  EXPECT_EQ(b.data.sizes(), (Shape{3, 1, 28, 28}));
  EXPECT_TRUE(testing::all_close(b.data[0], e.data));
  // The normalisation the references use: (x / 255 - 0.2860) / 0.3530
  double raw = test.images()[0][14][14].item<double>();
  EXPECT_NEAR(e.data[0][14][14].item<double>(), (raw / 255 - 0.2860) / 0.3530, 1e-5);
  data::datasets::MNIST train(root, {true});
  EXPECT_EQ(train.size(), 60000u);
}

TEST(MNIST, ResizedImagesAreTheBilinearInterpolation) {
  std::string root = data::datasets::kFashionMnistDir;
  if (!fs::exists(fs::path(root) / "t10k-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "needs Debian's dataset-fashion-mnist (scripts/install-deps installs it)";
  data::datasets::MNISTOptions options;
  options.train = false;
  options.resize = 96;
  data::datasets::MNIST resized(root, options), plain(root, {false});
  data::Example b = resized.get_batch({0, 7});
  EXPECT_EQ(b.data.sizes(), (Shape{2, 1, 96, 96}));
  EXPECT_TRUE(testing::all_close(
      b.data, nn::functional::interpolate(plain.get_batch({0, 7}).data, {96, 96}, "bilinear"), 1e-5,
      1e-5));
  EXPECT_EQ(resized.get(7).data.sizes(), (Shape{1, 96, 96}));
  EXPECT_TRUE(testing::all_close(resized.get(7).data, b.data[1], 1e-6, 1e-6));
}

TEST(MNIST, MismatchedFilesAreReported) {
  TempDir dir;
  write_file(dir.path / "t10k-images-idx3-ubyte.gz", idx_bytes({3, 28, 28}, 3 * 784), true);
  write_file(dir.path / "t10k-labels-idx1-ubyte.gz", idx_bytes({2}, 2), true);
  EXPECT_THROW_WITH(data::datasets::MNIST(dir.path.string(), {false}), "has 3 images but");
  EXPECT_THROW_WITH(data::datasets::MNIST((dir.path / "nowhere").string(), {false}), "found in");
}

}  // namespace
}  // namespace ember
