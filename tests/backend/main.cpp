// These tests need four virtual CPU devices of 64 MiB each; ember reads the variables once, at
// first use, so they are set before anything else runs.
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  setenv("EMBER_CPU_DEVICES", "4", 1);
  setenv("EMBER_CPU_MEMORY_LIMIT", "64MiB", 1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
