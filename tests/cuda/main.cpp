// The CUDA tests' main: multiprocessing::init first, so that the CUDA IPC tests' children (started
// with the spawn start method, the only one CUDA allows) run their entry point instead of the
// tests.
#include <gtest/gtest.h>

#include "ember/multiprocessing/process.h"

int main(int argc, char** argv) {
  ember::multiprocessing::init(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
