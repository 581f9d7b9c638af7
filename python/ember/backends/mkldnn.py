"""ember.backends.mkldnn: oneDNN, which ember uses for CPU convolutions when it is installed."""
enabled = True


def is_available():
    """Whether ember's CPU convolutions can use oneDNN."""
    return True
