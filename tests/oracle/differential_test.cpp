// The differential test against libtorch on fixed seeds, in every `make test`: random cases over
// every op family (tests/oracle/differential_cases.cpp); scripts/differential runs more.
#include <gtest/gtest.h>

#include "tests/oracle/differential.h"

namespace ember::oracle {
namespace {

class Differential : public ::testing::TestWithParam<uint64_t> {};

TEST_P(Differential, AgreesWithLibtorch) {
  DifferentialReport r = run_differential(GetParam(), 5000);
  EXPECT_EQ(r.mismatch_count, 0) << format_report(GetParam(), r);
  // The cases must mostly compute: a generator that only makes errors tests nothing.
  EXPECT_GT(r.compared, r.cases / 2) << format_report(GetParam(), r);
}

INSTANTIATE_TEST_SUITE_P(Seeds, Differential, ::testing::Values(11, 12, 13, 14));

}  // namespace
}  // namespace ember::oracle
