"""ember.backends.mps: Apple's GPUs, which ember does not drive: never available (as PyTorch on
a machine without one)."""


def is_available():
    """False: ember has no Metal backend."""
    return False


def is_built():
    """False: ember has no Metal backend."""
    return False
