// DataParallel is tested on four virtual CPU devices; ember reads the variable once, at first use.
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  setenv("EMBER_CPU_DEVICES", "4", 1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
