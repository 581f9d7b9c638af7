// The multiprocessing tests' main: multiprocessing::init first, so that children started with the
// spawn start method (a fresh exec of this binary) run their entry point instead of the tests.
#include <gtest/gtest.h>

#include "ember/multiprocessing/process.h"

int main(int argc, char** argv) {
  ember::multiprocessing::init(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
