#include <gtest/gtest.h>

#include "ember/core/device.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

struct Accepted {
  const char* text;
  DeviceType type;
  int index;
};

TEST(Device, AcceptsPyTorchGrammar) {
  const Accepted cases[] = {
      {"cpu", kCPU, -1},    {"cpu:0", kCPU, 0},     {"cpu:3", kCPU, 3},   {"cuda", kCUDA, -1},
      {"cuda:0", kCUDA, 0}, {"cuda:12", kCUDA, 12}, {"cuda:7", kCUDA, 7},
  };
  for (const Accepted& c : cases) {
    Device d(c.text);
    EXPECT_EQ(d.type(), c.type) << c.text;
    EXPECT_EQ(d.index(), c.index) << c.text;
    EXPECT_EQ(d.str(), std::string(c.text)) << "round trip of " << c.text;
  }
}

TEST(Device, RejectsMalformedStringsQuotingThem) {
  const char* rejected[] = {"cuda:", "cuda:01", "cuda:-1", "cuda1",    "cuda 0",  ":0",
                            "CUDA",  "",        "cpu:",    "cuda:0:1", "cuda:1x", " cuda"};
  for (const char* s : rejected) {
    EXPECT_THROW_WITH(Device{s}, std::string("Invalid device string: '") + s + "'");
  }
}

TEST(Device, UnknownTypeNamesTheKnownOnes) {
  EXPECT_THROW_WITH(Device("xpu"), "expected one of cpu, cuda");
  EXPECT_THROW_WITH(Device("tpu:0"), "'tpu'");
}

TEST(Device, CurrentCudaIsNotCudaZero) {
  EXPECT_NE(Device("cuda"), Device("cuda:0"));
  EXPECT_EQ(Device("cuda:1"), Device(kCUDA, 1));
  // cpu and cpu:0 are one device.
  EXPECT_EQ(Device("cpu"), Device("cpu:0"));
  EXPECT_NE(Device("cpu:1"), Device("cpu:0"));
  EXPECT_NE(Device("cpu"), Device("cuda"));
}

TEST(Device, NegativeIndexBelowCurrentIsAnError) {
  EXPECT_THROW_WITH(Device(kCUDA, -2), "non-negative");
}

}  // namespace
}  // namespace ember
