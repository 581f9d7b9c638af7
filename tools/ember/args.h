// A small command-line parser: --name value and --flag, with typed getters that explain bad input.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ember::cli {

class Args {
 public:
  /// argv after the subcommand; `flags` take no value, every other --option takes one;
  /// `optional` ones are flags that may take one as --name=value (--profile, --profile=10).
  Args(int argc, char** argv, const std::set<std::string>& options,
       const std::set<std::string>& flags, const std::set<std::string>& optional = {});
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::string str(const std::string& name, const std::string& fallback) const;
  /// An integer in [lo, hi]; anything else (text, out of range) is an error naming the option.
  int64_t integer(const std::string& name, int64_t fallback,
                  int64_t lo = std::numeric_limits<int64_t>::min(),
                  int64_t hi = std::numeric_limits<int64_t>::max()) const;
  double number(const std::string& name, double fallback) const;
  bool flag(const std::string& name) const { return has(name); }

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace ember::cli
