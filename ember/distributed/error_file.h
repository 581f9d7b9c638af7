// How a rank tells its elastic agent why it failed: the exception's message in the file named by
// TORCHELASTIC_ERROR_FILE, in torch.distributed.elastic's format, so that the agent's report of the
// job's failures can quote it (torchrun reads ember's files, ember's agent reads PyTorch's).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace ember::distributed {

/// Writes `message` to the file TORCHELASTIC_ERROR_FILE names (nothing when it is unset). Never
/// throws: it runs while a rank is failing.
void record_error(const std::string& message);

/// Runs a rank's main function `fn`; if it throws, records the exception's message
/// (record_error), writes it to stderr and returns 1 (torch.distributed.elastic's @record).
int record(const std::function<int()>& fn);

/// A temporary directory of the ranks' error files, removed with the object.
class ErrorFiles {
 public:
  /// Makes $TMPDIR/<prefix>-XXXXXX (TMPDIR defaults to /tmp); throws ember::Error if it cannot.
  explicit ErrorFiles(const std::string& prefix);
  ~ErrorFiles();
  ErrorFiles(const ErrorFiles&) = delete;
  ErrorFiles& operator=(const ErrorFiles&) = delete;
  /// The path of the error file called `name` (".json" added).
  std::string path(const std::string& name) const;

 private:
  std::string dir_;
};

/// The message of an error file (ember's or PyTorch's), or nothing when the file is missing or
/// unreadable.
std::optional<std::string> read_error_file(const std::string& path);

}  // namespace ember::distributed
