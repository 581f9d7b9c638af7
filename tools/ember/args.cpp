#include "tools/ember/args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "ember/core/error.h"

namespace ember::cli {

Args::Args(int argc, char** argv, const std::set<std::string>& options,
           const std::set<std::string>& flags, const std::set<std::string>& optional) {
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    EMBER_CHECK(a.rfind("--", 0) == 0, "unexpected argument '", a, "' (options start with --)");
    std::string name = a.substr(2), value;
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (optional.count(name)) {
      values_[name] = eq == std::string::npos ? "" : value;
      continue;
    }
    if (flags.count(name)) {
      EMBER_CHECK(eq == std::string::npos, "--", name, " takes no value");
      values_[name] = "1";
      continue;
    }
    EMBER_CHECK(options.count(name), "unknown option --", name, " (see --help)");
    if (eq == std::string::npos) {
      EMBER_CHECK(i + 1 < argc, "--", name, " needs a value");
      value = argv[++i];
    }
    values_[name] = value;
  }
}

std::string Args::str(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

int64_t Args::integer(const std::string& name, int64_t fallback, int64_t lo, int64_t hi) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  bool ok = end && *end == '\0' && !it->second.empty() && errno != ERANGE && v >= lo && v <= hi;
  EMBER_CHECK(ok, "--", name, " expects an integer from ", lo, " to ", hi, ", got '", it->second,
              "'");
  return v;
}

double Args::number(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  EMBER_CHECK(end && *end == '\0' && !it->second.empty() && std::isfinite(v), "--", name,
              " expects a finite number, got '", it->second, "'");
  return v;
}

}  // namespace ember::cli
