// The CUDA tests' main: multiprocessing::init first, so that the CUDA IPC tests' children (started
// with the spawn start method, the only one CUDA allows) run their entry point instead of the
// tests. cuDNN's TF32 is off for the suite, as cuBLAS's is by default: TF32 rounds float32
// products to 10 bits, and the tests compare with the CPU's float32 (PyTorch's tests turn it off
// likewise); CudaConv.Tf32StaysWithinItsPrecision covers TF32.
#include <gtest/gtest.h>

#include "ember/backend/cudnn.h"
#include "ember/multiprocessing/process.h"

int main(int argc, char** argv) {
  ember::multiprocessing::init(argc, argv);
  ember::cudnn::set_allow_tf32(false);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
