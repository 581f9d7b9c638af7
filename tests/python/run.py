"""Runs one pytest file for CTest: exit 0 when it passed, 77 (CTest's Skipped) when every test in
it skipped, pytest's code otherwise. A test needing a GPU skips with its reason; a file of such
tests must not read as Passed."""
import sys

import pytest


class Outcomes:
    def __init__(self):
        self.passed = self.skipped = self.failed = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            self.passed += 1
        elif report.skipped:
            self.skipped += 1
        elif report.failed:
            self.failed += 1


if __name__ == "__main__":
    outcomes = Outcomes()
    code = pytest.main(["-q", "-rs", "-p", "no:cacheprovider", sys.argv[1]] + sys.argv[2:],
                       plugins=[outcomes])
    if code == 0 and outcomes.passed == 0 and outcomes.skipped > 0:
        sys.exit(77)
    sys.exit(int(code))
