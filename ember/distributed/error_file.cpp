#include "ember/distributed/error_file.h"

#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ember/core/error.h"

namespace ember::distributed {

using json = nlohmann::json;

void record_error(const std::string& message) {
  const char* path = std::getenv("TORCHELASTIC_ERROR_FILE");
  if (!path || !*path) return;
  try {
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
    json error = {
        {"message",
         {{"message", message}, {"extraInfo", {{"timestamp", std::to_string(seconds)}}}}}};
    std::ofstream out(path, std::ios::trunc);
    out << error.dump() << "\n";
  } catch (...) {
    // The failure itself is what matters; a missing error file only shortens the agent's report.
  }
}

int record(const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    record_error(e.what());
    std::cerr << e.what() << std::endl;
    return 1;
  }
}

ErrorFiles::ErrorFiles(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  EMBER_CHECK(::mkdtemp(pattern.data()) != nullptr, "[launch] cannot make a directory '", pattern,
              "' for the ranks' error files: ", std::strerror(errno));
  dir_ = pattern;
}

ErrorFiles::~ErrorFiles() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string ErrorFiles::path(const std::string& name) const { return dir_ + "/" + name + ".json"; }

std::optional<std::string> read_error_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("message")) return std::nullopt;
  const json& m = j["message"];
  if (m.is_string()) return m.get<std::string>();
  if (m.is_object() && m.contains("message") && m["message"].is_string())
    return m["message"].get<std::string>();
  return std::nullopt;
}

}  // namespace ember::distributed
