// Copies between devices are profiler events of their own kind, with their bytes: here between
// the virtual CPU devices main.cpp sets up ("Memcpy HtoH"; a GPU's are HtoD, DtoH and DtoD).
#include <gtest/gtest.h>

#include "ember/ember.h"

namespace ember {
namespace {

TEST(ProfiledTransfers, ACopyBetweenDevicesIsAMemcpyEventWithItsBytes) {
  Tensor x = randn({64, 32});
  profiler::Profile prof;
  prof.start();
  Tensor y = x.to(Device("cpu:1"));
  Tensor z = x + 1;  // on one device: no transfer
  prof.stop();
  EXPECT_EQ(y.device(), Device("cpu:1"));
  int transfers = 0;
  for (const profiler::Event& e : prof.events()) {
    if (e.kind != profiler::EventKind::Memcpy) continue;
    ++transfers;
    EXPECT_EQ(e.name, "Memcpy HtoH");
    EXPECT_EQ(e.bytes, 64 * 32 * 4);
    EXPECT_EQ(e.device, Device("cpu:1"));
  }
  EXPECT_EQ(transfers, 1);
  // In the Chrome trace it is its own category.
  EXPECT_NE(prof.chrome_trace().find("\"cat\": \"memcpy\""), std::string::npos);
}

}  // namespace
}  // namespace ember
