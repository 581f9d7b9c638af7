#include "ember/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>

#include "ember/core/error.h"

namespace ember::io {
namespace {

std::string errno_text() { return std::strerror(errno); }

// Writes all of `data` to fd or throws.
void write_all(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    EMBER_CHECK(n > 0, "[save] writing ", path, " failed: ", errno_text());
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  EMBER_CHECK(fs::is_directory(dir), "[save] directory ", dir.string(), " does not exist");
  std::ostringstream buffer;
  write(buffer);
  std::string bytes = std::move(buffer).str();

  std::random_device rd;
  fs::path tmp = dir / ("." + target.filename().string() + ".tmp." + std::to_string(getpid()) +
                        "." + std::to_string(rd()));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  EMBER_CHECK(fd >= 0, "[save] cannot create ", tmp.string(), ": ", errno_text());
  try {
    write_all(fd, bytes, tmp.string());
    EMBER_CHECK(::fsync(fd) == 0, "[save] fsync of ", tmp.string(), " failed: ", errno_text());
    EMBER_CHECK(::close(fd) == 0, "[save] closing ", tmp.string(), " failed: ", errno_text());
    fd = -1;
    EMBER_CHECK(::rename(tmp.c_str(), target.c_str()) == 0, "[save] renaming ", tmp.string(),
                " to ", path, " failed: ", errno_text());
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  // Make the rename itself durable.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace ember::io
