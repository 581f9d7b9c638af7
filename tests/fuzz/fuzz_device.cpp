// Fuzz target: the device-string parser. Whatever it accepts must print back to itself and parse
// to the same device.
#include "ember/core/device.h"
#include "ember/core/error.h"
#include "tests/fuzz/fuzz_input.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s(reinterpret_cast<const char*>(data), size);
  try {
    Device d(s);
    if (d.str() != s) fuzz::fail("an accepted device string does not print back to itself");
    if (Device(d.str()) != d) fuzz::fail("a device does not parse back to itself");
  } catch (const Error&) {
  }
  return 0;
}
