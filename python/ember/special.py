"""torch.special: the special functions (declared in C++, ember._C._special) and PyTorch's
special.* aliases of functions ember has at the top level (expit is sigmoid, multigammaln is
mvlgamma, ...)."""
from ._C._special import *  # noqa: F401,F403

# special.name -> ember.name, looked up when used (some are written in ember._compat).
_ALIASES = {"erf": "erf", "erfc": "erfc", "expm1": "expm1", "exp2": "exp2", "expit": "sigmoid",
            "logit": "logit", "log1p": "log1p", "round": "round", "sinc": "sinc",
            "softmax": "softmax", "log_softmax": "log_softmax", "logsumexp": "logsumexp",
            "xlogy": "xlogy", "multigammaln": "mvlgamma"}


def __getattr__(name):
    if name in _ALIASES:
        import ember
        return getattr(ember, _ALIASES[name])
    raise AttributeError(f"module 'ember.special' has no attribute '{name}'")


def __dir__():
    return sorted(list(globals()) + list(_ALIASES))
