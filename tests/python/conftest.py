"""Shared by the Python tests. Two virtual CPU devices exist in every test process (read once, when
ember first looks), so DataParallel and replicate run without GPUs; torch (Debian's PyTorch 1.13)
and numpy are the oracles."""
import os

os.environ.setdefault("EMBER_CPU_DEVICES", "2")

import pytest  # noqa: E402

import ember  # noqa: E402

requires_cuda = pytest.mark.skipif(not ember.cuda.is_available(),
                                   reason="needs a CUDA device: " + ember.cuda.unavailable_reason())


def source_dir():
    return os.environ.get("EMBER_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def binary_dir():
    return os.environ["EMBER_BINARY_DIR"]
