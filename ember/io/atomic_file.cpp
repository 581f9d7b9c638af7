#include "ember/io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
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

namespace fs = std::filesystem;

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

// Note [Temporary files of a killed writer]
// The new bytes are written into an unnamed file (O_TMPFILE), so a writer killed while writing or
// flushing (nearly all of a save's time) leaves nothing behind. POSIX has no call that puts an
// unnamed file in place of another, so the complete file is named ".<name>.tmp.<pid>.<n>" and
// renamed at once; a writer killed between those two calls (about 1 kill in 60 at random moments
// of a save loop) leaves that complete stray. The next save or load of the same path removes
// strays whose writer is gone, so none outlives the next use of the checkpoint.
std::string temp_prefix(const fs::path& target) {
  return "." + target.filename().string() + ".tmp.";
}

}  // namespace

void remove_stray_temporaries(const std::string& path) {
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string prefix = temp_prefix(target);
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    pid_t pid = static_cast<pid_t>(std::atol(name.c_str() + prefix.size()));
    bool writer_gone = pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
    if (writer_gone) fs::remove(e.path(), ec);  // best effort: a read-only directory keeps it
  }
}

void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  EMBER_CHECK(fs::is_directory(dir), "[save] directory ", dir.string(), " does not exist");
  std::ostringstream buffer;
  write(buffer);
  std::string bytes = std::move(buffer).str();
  remove_stray_temporaries(path);

  std::random_device rd;
  fs::path tmp =
      dir / (temp_prefix(target) + std::to_string(getpid()) + "." + std::to_string(rd()));
  // See Note [Temporary files of a killed writer]; filesystems without O_TMPFILE get a named file.
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  bool unnamed = fd >= 0;
  if (!unnamed) fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  EMBER_CHECK(fd >= 0, "[save] cannot create a temporary file in ", dir.string(), ": ",
              errno_text());
  bool named = !unnamed;
  try {
    write_all(fd, bytes, tmp.string());
    EMBER_CHECK(::fsync(fd) == 0, "[save] fsync of ", tmp.string(), " failed: ", errno_text());
    if (unnamed) {
      std::string self = "/proc/self/fd/" + std::to_string(fd);
      EMBER_CHECK(::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) == 0,
                  "[save] cannot name the temporary file ", tmp.string(), ": ", errno_text());
      named = true;
    }
    EMBER_CHECK(::rename(tmp.c_str(), target.c_str()) == 0, "[save] renaming ", tmp.string(),
                " to ", path, " failed: ", errno_text());
    named = false;
    EMBER_CHECK(::close(fd) == 0, "[save] closing ", path, " failed: ", errno_text());
    fd = -1;
  } catch (...) {
    if (fd >= 0) ::close(fd);
    if (named) ::unlink(tmp.c_str());
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
