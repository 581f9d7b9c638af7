// scripts/differential's program: `ember-differential [seed] [cases]` runs that many random cases
// against libtorch and prints the report; the exit status is 1 when any case mismatched.
#include <cstdlib>
#include <iostream>
#include <string>

#include "tests/oracle/differential.h"

int main(int argc, char** argv) {
  uint64_t seed = argc > 1 ? std::stoull(argv[1]) : 1;
  int64_t cases = argc > 2 ? std::stoll(argv[2]) : 10000;
  ember::oracle::DifferentialReport r = ember::oracle::run_differential(seed, cases);
  std::cout << ember::oracle::format_report(seed, r);
  return r.mismatch_count == 0 ? 0 : 1;
}
