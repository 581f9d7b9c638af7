"""The one module PyTorch's test data needs from the expecttest package (not in Debian): its
TestCase and ACCEPT. common_methods_invocations imports it; nothing here calls it."""
import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    pass
