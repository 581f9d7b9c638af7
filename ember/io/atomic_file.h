// Writing a file so that a crash never leaves it half-written: the bytes go to an unnamed temporary
// file in the same directory, which is flushed to disk, named and renamed over the target.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace ember::io {

/// Calls write(stream) into a temporary file next to `path`, fsyncs it, renames it to `path` and
/// fsyncs the directory. On any error the temporary file is removed, the previous `path` is left
/// untouched, and an ember::Error says what failed. A writer killed mid-save leaves the previous
/// file and, rarely, a complete stray that the next save or load removes (Note [Temporary files
/// of a killed writer] in atomic_file.cpp).
void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

/// Removes the temporary files that writers of `path` left when killed mid-save, if those writers
/// are gone (the loaders call it too).
void remove_stray_temporaries(const std::string& path);

}  // namespace ember::io
