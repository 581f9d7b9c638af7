"""ember.backends.openmp: ember runs its CPU work on its own thread pool, not OpenMP."""


def is_available():
    """False: ember's CPU parallelism is its own pool."""
    return False
