// What the fuzz targets share: fuzz bytes as a file (the readers take paths), and the one way a
// target reports a broken invariant.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ember::fuzz {

/// An anonymous in-memory file, rewritten for every input: no disk traffic, nothing left behind.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("ember-fuzz", 0)) {
    if (fd_ < 0) std::perror("memfd_create"), std::abort();
  }
  /// Replaces the contents; returns a path that opens them.
  std::string write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size))
      std::perror("memfd write"), std::abort();
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

/// A broken invariant: the fuzzer records the input that caused it.
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "ember fuzz invariant broken: %s\n", what);
  std::abort();
}

}  // namespace ember::fuzz
