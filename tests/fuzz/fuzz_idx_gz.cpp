// Fuzz target: the IDX reader behind gzip. The input is compressed first, so every case reaches
// the IDX parser through a valid gzip stream: lying headers, streams that inflate past or short of
// what the header declares.
#include <zlib.h>

#include <vector>

#include "ember/data/mnist.h"
#include "tests/fuzz/fuzz_input.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile file;
  // A gzip wrapper (windowBits 16 + 15) around the input.
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    fuzz::fail("deflateInit2");
  std::vector<uint8_t> gz(deflateBound(&z, size) + 32);
  z.next_in = const_cast<uint8_t*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = gz.data();
  z.avail_out = static_cast<uInt>(gz.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) fuzz::fail("deflate");
  size_t n = z.total_out;
  deflateEnd(&z);
  std::string path = file.write(gz.data(), n);
  try {
    Tensor t = data::read_idx(path);
    if (t.dtype() != kUInt8 || static_cast<size_t>(t.numel()) + 4 + 4 * t.dim() != size)
      fuzz::fail("accepted data that does not match its header");
  } catch (const Error&) {
  }
  return 0;
}
