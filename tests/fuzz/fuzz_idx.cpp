// Fuzz target: the IDX reader (MNIST's format) on arbitrary bytes, plain or gzipped as they come
// (zlib reads both through the same calls). Whatever it accepts must match its own header.
#include "ember/data/mnist.h"
#include "tests/fuzz/fuzz_input.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile file;
  std::string path = file.write(data, size);
  try {
    Tensor t = data::read_idx(path);
    if (t.dtype() != kUInt8 || t.dim() < 1 || t.dim() > 4) fuzz::fail("accepted a bad header");
  } catch (const Error&) {
  }
  return 0;
}
