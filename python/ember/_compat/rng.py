"""Random number state: get/set_rng_state, seed, fork_rng, ember.random and torch.cuda's seed
functions and other small torch.cuda names. Part of ember._compat (see its __init__)."""
import builtins
import contextlib
import os
import types

from ._registry import _TORCH, _dname, _is_tensor, _torch

_E = None  # the ember module, set by install()


# ================================================================================================
# random number state
# ================================================================================================


@_torch
def get_rng_state():
    """The default generator's state as a uint8 tensor (its seed and offset, 16 bytes)."""
    state = _E.default_generator.get_state().numpy()  # int64 [seed, offset]
    return _E.from_numpy(state.view("uint8").copy())


@_torch
def set_rng_state(new_state):
    """Restores a state get_rng_state returned."""
    if not _is_tensor(new_state) or _dname(new_state.dtype) != "uint8":
        raise TypeError("RNG state must be a torch.ByteTensor")
    if new_state.numel() != 16:
        raise RuntimeError(f"[set_rng_state] expected the 16-byte state get_rng_state returns, "
                           f"got {new_state.numel()} bytes")
    raw = new_state.detach().cpu().contiguous().numpy().copy().view("int64")
    _E.default_generator.set_state(_E.from_numpy(raw))


@_torch
def seed():
    """Seeds the default generator from the OS's entropy and returns the seed."""
    s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
    _E.manual_seed(s)
    return s


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices"):
    """Restores the random state on leaving the block (one generator serves every device)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def _make_random_module():
    m = types.ModuleType("ember.random", "ember.random: the default generator's seed and state "
                         "(torch.random).")
    m.manual_seed, m.initial_seed = _E.manual_seed, _E.initial_seed
    m.seed, m.get_rng_state, m.set_rng_state, m.fork_rng = (seed, get_rng_state, set_rng_state,
                                                            fork_rng)
    m.default_generator = _E.default_generator
    return m


# torch.cuda's seed functions: ember has one generator for every device (see manual_seed), so
# they act on it; a program that seeds both gets the same stream.
def _cuda_seed_functions():
    def manual_seed(seed):
        """Seeds the generator every device draws from."""
        _E.manual_seed(seed)

    def get_rng_state(device="cuda"):
        """The shared generator's state (see ember.get_rng_state)."""
        return _TORCH["get_rng_state"]()

    def set_rng_state(new_state, device="cuda"):
        """Restores the shared generator's state."""
        _TORCH["set_rng_state"](new_state)

    def get_rng_state_all():
        """One state per GPU, each the shared generator's."""
        return [get_rng_state() for _ in range(builtins.max(1, _E.cuda.device_count()))]

    def set_rng_state_all(new_states):
        """Restores the shared generator from the first state."""
        for s in new_states[:1]:
            set_rng_state(s)

    def cuda_seed():
        """Seeds the shared generator from the OS's entropy (ember.initial_seed() tells it)."""
        seed()

    return dict(manual_seed=manual_seed, manual_seed_all=manual_seed, seed=cuda_seed,
                seed_all=cuda_seed,
                initial_seed=_E.initial_seed, get_rng_state=get_rng_state,
                set_rng_state=set_rng_state, get_rng_state_all=get_rng_state_all,
                set_rng_state_all=set_rng_state_all)


def _cuda_misc():
    c = _E.cuda

    def is_initialized():
        """Whether a GPU is there (ember starts CUDA on first use, never half-way)."""
        return c.is_available()

    def init():
        """Nothing to do: ember starts CUDA on first use."""

    def is_bf16_supported():
        """Whether the current GPU computes in bfloat16 (compute capability 8.0 or newer)."""
        return c.is_available() and c.get_device_capability()[0] >= 8

    def get_arch_list():
        """The GPU architectures of this machine's devices (ember compiles for the one it has)."""
        if not c.is_available():
            return []
        return sorted({"sm_%d%d" % c.get_device_capability(i) for i in range(c.device_count())})

    def ipc_collect():
        """Nothing to collect: ember shares CUDA memory through its own IPC."""

    def device_of(obj):
        """The device scope of a tensor: `with ember.cuda.device_of(x): ...`."""
        return c.device(obj.get_device() if _is_tensor(obj) and obj.is_cuda else -1)

    from .._tensor import CUDA_TYPES
    out = dict(is_initialized=is_initialized, init=init, is_bf16_supported=is_bf16_supported,
               get_arch_list=get_arch_list, ipc_collect=ipc_collect, device_of=device_of,
               StreamContext=c.stream, has_half=True, max_memory_cached=c.max_memory_reserved,
               reset_max_memory_allocated=c.reset_peak_memory_stats,
               reset_max_memory_cached=c.reset_peak_memory_stats,
               reset_accumulated_memory_stats=c.reset_peak_memory_stats)
    out.update(CUDA_TYPES)
    return out


# ================================================================================================
# samplers PyTorch has as ATen ops (written with ATen's algorithms in ember.distributions)
# ================================================================================================


def _default_generator_only(op, generator):
    if generator is not None and generator is not _E.default_generator:
        raise NotImplementedError(f"{op}: ember draws from the default generator only, got "
                                  "another generator")


@_torch
def poisson(input, generator=None):
    """A Poisson draw for each rate in input, as float counts in input's dtype."""
    from ..distributions.utils import _poisson
    _default_generator_only("poisson", generator)
    return _poisson(input).to(input.dtype)


@_torch
def binomial(count, prob, generator=None):
    """A binomial draw for each (count, prob) pair, in prob's dtype."""
    from ..distributions.utils import _binomial
    _default_generator_only("binomial", generator)
    return _binomial(count, prob).to(prob.dtype)
