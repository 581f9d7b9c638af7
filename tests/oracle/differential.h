// ember against libtorch 1.13 in one process on random cases drawn from a seed: every op family,
// every dtype, 0-dim, empty, size-1 and non-contiguous inputs, and autograd chains. Compares
// values, dtypes, shapes and whether both raise. See tests/oracle/differential_cases.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ember::oracle {

struct DifferentialReport {
  int64_t cases = 0;
  int64_t compared = 0;     // both computed and agreed
  int64_t both_raised = 0;  // both rejected the case
  // ember computes where torch 1.13's CPU build has no kernel for the dtype ("not implemented
  // for 'Half'"): an ember extension, counted but not a mismatch.
  int64_t extensions = 0;
  // Documented deliberate differences (README, "Differences from PyTorch"), by name.
  std::map<std::string, int64_t> deliberate;
  std::map<std::string, int64_t> per_family;
  std::vector<std::string> mismatches;  // the first few, each reproducible from its seed and index
  int64_t mismatch_count = 0;
};

/// Runs `cases` random cases from `seed`; case i depends only on (seed, i).
DifferentialReport run_differential(uint64_t seed, int64_t cases, int64_t first_case = 0);

/// The report as text: counts, per-family counts, and the mismatches kept.
std::string format_report(uint64_t seed, const DifferentialReport& r);

}  // namespace ember::oracle
