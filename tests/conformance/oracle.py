"""PyTorch's own test data as the oracle: each OpInfo sample (torch.testing._internal's op_db) and
each ModuleInfo input (module_db) runs through PyTorch and through ember, and the results are
compared with torch.testing.assert_close under the entry's own tolerances.

Shared by run.py (which runs entries in worker processes and writes their outcomes) and the tests.
The inputs are made by PyTorch, copied into ember (DLPack, strides kept), the outputs copied back.
An outcome is one of:
  pass     every sample gave PyTorch's result (values, dtype, shape)
  missing  ember has no such name (or PyTorch's name for a dtype)
  raises   ember raised where PyTorch computed (the first such sample's error)
  wrong    ember computed something else (the first such sample's difference)
  n/a      PyTorch itself raised on every sample on the CPU (CUDA-only entries)
"""
import contextlib
import functools
import math
import os
import random
import sys
import types
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the expecttest stub

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.testing._internal import common_methods_invocations as _cmi  # noqa: E402
from torch.testing._internal import common_modules as _cm  # noqa: E402
from torch.testing._internal.common_device_type import (precisionOverride,  # noqa: E402
                                                        toleranceOverride)

import ember  # noqa: E402
from labels import ROUNDING  # noqa: E402

warnings.filterwarnings("ignore")

OP_DB = _cmi.op_db
MODULE_DB = _cm.module_db

# Entries whose results are random or uninitialised: only shapes and dtypes are compared (as
# PyTorch's own consistency tests do for them).
RANDOM = {
    "bernoulli", "multinomial", "normal", "uniform", "randn", "randn_like", "rand_like",
    "randint_like", "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout", "nn.functional.rrelu",
    "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d", "new_empty",
    "new_empty_strided", "empty", "empty_like", "svd_lowrank", "pca_lowrank", "resize_",
    "resize_as_", "cauchy", "exponential", "geometric", "log_normal", "random_",
}


# Entries with some random samples (attention with dropout): those samples compare only shapes
# and dtypes, the rest values.
RANDOM_SAMPLES = {
    "nn.functional._scaled_dot_product_attention": lambda s: s.kwargs.get("dropout_p", 0) > 0,
}


def entry_id(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def namespace(op):
    """The public namespace an entry belongs to, for the report: torch, Tensor, nn.functional,
    linalg, fft, special, masked, sparse."""
    if op.name.startswith("nn.functional."):
        return "nn.functional"
    head = op.name.split(".")[0]
    if head in ("linalg", "fft", "special", "masked", "sparse"):
        return head
    return "torch"


class Missing(Exception):
    """ember lacks a name the entry needs."""


# --------------------------------------------------------------------------------------------
# torch -> ember
# --------------------------------------------------------------------------------------------

_DTYPES = {}


class MissingDType(Missing):
    """ember has no such dtype: the entry's samples of that dtype are skipped and reported."""


def ember_dtype(d):
    name = str(d).rpartition(".")[2]
    if name not in _DTYPES:
        if not isinstance(getattr(ember, name, None), ember.dtype):
            raise MissingDType(name)
        _DTYPES[name] = getattr(ember, name)
    return _DTYPES[name]


def _storage_copy(t):
    """A copy of t with its strides and storage offset (stride 0 and gaps included), so that
    ember sees the same layout PyTorch's sample has."""
    if t.is_contiguous() or t.numel() == 0:
        return t.detach().clone(memory_format=torch.contiguous_format)
    base = torch.empty(0, dtype=t.dtype)
    base.set_(t.storage().clone(), t.storage_offset(), t.size(), t.stride())
    return base


def to_ember(x):
    """A sample argument in ember's terms, recursively."""
    if isinstance(x, torch.Tensor):
        if x.layout != torch.strided:
            raise Missing(f"{x.layout} tensors")
        if x.is_complex():
            ember_dtype(x.dtype)
        elif x.dtype not in (torch.float32, torch.float64, torch.float16, torch.bfloat16,
                             torch.int64, torch.int32, torch.uint8, torch.bool):
            ember_dtype(x.dtype)
        c = _storage_copy(x.detach().resolve_conj().resolve_neg())
        try:
            # NumPy keeps every layout and knows bool, which PyTorch 1.13's DLPack does not;
            # bfloat16 goes by DLPack, which NumPy lacks, and complex32 as its float16 pairs.
            if c.dtype == torch.bfloat16:
                e = ember.from_dlpack(c)
            elif c.dtype == torch.complex32:
                e = ember.empty(tuple(c.shape), dtype=ember.complex32) if c.numel() == 0 else \
                    ember.view_as_complex(ember.from_numpy(torch.view_as_real(c).numpy()))
            else:
                e = ember.from_numpy(c.numpy())
        except Exception as err:  # noqa: BLE001
            raise MissingDType(str(x.dtype)[6:]) from err
        if x.requires_grad:
            e.requires_grad_(True)
        return e
    if isinstance(x, torch.dtype):
        return ember_dtype(x)
    if isinstance(x, torch.device):
        return ember.device(str(x))
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, torch.memory_format):
        return getattr(ember, str(x).rpartition(".")[2])
    if isinstance(x, torch.layout):
        return getattr(ember, str(x).rpartition(".")[2])
    if isinstance(x, torch.Generator):
        raise Missing("a torch.Generator argument")
    if isinstance(x, list):
        return [to_ember(v) for v in x]
    if isinstance(x, tuple):
        return tuple(to_ember(v) for v in x)
    if isinstance(x, dict):
        return {k: to_ember(v) for k, v in x.items()}
    if isinstance(x, (types.FunctionType, functools.partial)) and \
            getattr(x, "__module__", "").startswith("torch.testing"):
        return retarget(x)
    if callable(x) and getattr(x, "__module__", None) in _TORCH_FUNCTION_MODULES:
        return _ember_function(x)
    if isinstance(x, torch.nn.Module):
        return _ember_module(x)
    return x


def _ember_module(m):
    """A PyTorch module passed as an argument (distance_function=nn.PairwiseDistance()): ember's
    module of that name, made with its defaults and given the same settings. Modules with
    parameters are not converted."""
    if any(True for _ in m.parameters()):
        raise Missing(f"a {type(m).__name__} module with parameters as an argument")
    try:
        e = lookup("nn." + type(m).__name__)()
    except TypeError as err:
        raise Missing(f"a {type(m).__name__} module as an argument") from err
    for k, v in vars(m).items():
        if not k.startswith("_") and k != "training":
            setattr(e, k, v)
    return e


# A PyTorch function passed as an argument (TransformerEncoderLayer(activation=F.gelu)): ember's
# function of the same module and name.
_TORCH_FUNCTION_MODULES = {"torch.nn.functional": "nn.functional", "torch": "",
                           "torch.functional": "", "torch._C._nn": "nn.functional",
                           "torch._C._VariableFunctions": ""}


def _ember_function(fn):
    base = _TORCH_FUNCTION_MODULES[fn.__module__]
    return lookup((base + "." if base else "") + fn.__name__)


def to_torch(x):
    """An ember result in PyTorch's terms, recursively (tensors copied)."""
    if isinstance(x, ember.Tensor):
        t = x.detach()
        if hasattr(t, "resolve_conj"):
            t = t.resolve_conj().resolve_neg()
        if t.device.type != "cpu":
            t = t.cpu()
        if str(t.dtype).endswith("bfloat16"):
            return torch.from_dlpack(t.contiguous()).clone()
        if str(t.dtype).endswith("complex32"):
            if t.numel() == 0:  # (an empty array's strides, 0 in NumPy, are no view's)
                return torch.empty(tuple(t.shape), dtype=torch.complex32)
            pairs = np.ascontiguousarray(ember.view_as_real(t.contiguous()).numpy())
            return torch.view_as_complex(torch.from_numpy(pairs)).clone()
        return torch.from_numpy(t.numpy()).clone()
    if isinstance(x, (list, tuple)):
        converted = [to_torch(v) for v in x]
        return type(x)(converted) if type(x) in (list, tuple) else tuple(converted)
    if isinstance(x, ember.dtype):
        return getattr(torch, str(x).rpartition(".")[2])
    return x


# --------------------------------------------------------------------------------------------
# Finding ember's callable for an entry
# --------------------------------------------------------------------------------------------


class _TorchAsEmber(types.ModuleType):
    """`torch` as the entries' own lambdas see it: every name looked up in ember, so that
    `lambda x: torch.einsum('i->', x)` calls ember.einsum."""

    def __init__(self):
        super().__init__("torch")

    def __getattr__(self, name):
        try:
            return getattr(ember, name)
        except AttributeError:
            raise Missing(f"ember.{name}") from None


_TORCH = _TorchAsEmber()


def retarget(fn):
    """fn (a function written in PyTorch's test data) with `torch` meaning ember."""
    if isinstance(fn, functools.partial):
        return functools.partial(retarget(fn.func), *fn.args, **fn.keywords)
    if not isinstance(fn, types.FunctionType) or not fn.__module__.startswith("torch.testing"):
        return fn
    g = dict(fn.__globals__)
    g["torch"] = _TORCH
    closure = fn.__closure__
    if closure:
        closure = tuple(types.CellType(retarget(c.cell_contents)
                                       if isinstance(c.cell_contents, types.FunctionType)
                                       else _retarget_value(c.cell_contents)) for c in closure)
    out = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, closure)
    out.__kwdefaults__ = fn.__kwdefaults__
    return out


def _retarget_value(v):
    """A value a test function closes over: torch's functions become ember's of the same name."""
    if isinstance(v, (types.BuiltinFunctionType, types.FunctionType)) and \
            getattr(v, "__module__", "") in ("torch", "torch.functional", "torch._C._VariableFunctions"):
        return lookup(v.__name__)
    if isinstance(v, torch.dtype):
        return ember_dtype(v)
    return v


def lookup(path):
    """ember's object at a dotted path ('linalg.norm', 'nn.functional.relu')."""
    obj = ember
    for part in path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise Missing("ember." + path) from None
    return obj


def _method(name):
    def call(self, *args, **kwargs):
        if not hasattr(type(self), name):
            raise Missing("Tensor." + name)
        return getattr(self, name)(*args, **kwargs)
    return call


def ember_callable(op):
    """What ember calls for the entry's function variant (op.op)."""
    fn = op.op
    if isinstance(fn, types.FunctionType) and fn.__module__.startswith("torch.testing"):
        return retarget(fn)
    if op.name.startswith("__") or type(fn).__name__ in ("method_descriptor", "wrapper_descriptor"):
        return _method(fn.__name__ if hasattr(fn, "__name__") else op.name)
    if type(fn).__name__ == "OpOverload":  # torch.ops.aten.slice.Tensor: ember.ops' own
        namespace, name = fn._schema.name.split("::")
        return lookup(f"ops.{namespace}.{name}.{fn._overloadname}")
    return lookup(op.name)


# --------------------------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------------------------


_DEFAULT_TOL = {torch.float16: (1e-5, 1e-3), torch.bfloat16: (1e-5, 1.6e-2),
                torch.float32: (1e-5, 1.3e-6), torch.float64: (1e-7, 1e-7),
                torch.complex64: (1e-5, 1.3e-6), torch.complex128: (1e-7, 1e-7)}


def tolerances(op, dtype):
    """The loosening the entry's toleranceOverride or precisionOverride decorators allow for
    samples of `dtype` (atol, rtol), or None. They are written per PyTorch test; compare() never
    goes below assert_close's defaults for the result's dtype (an override stricter than the
    default is for another test's inputs, not this comparison)."""
    found = None
    for d in getattr(op, "decorators", ()) or ():
        for dec in getattr(d, "decorators", [d]):
            if isinstance(dec, toleranceOverride) and dtype in dec.d:
                t = dec.d[dtype]
                found = (max(found[0], t.atol), max(found[1], t.rtol)) if found else \
                    (t.atol, t.rtol)
            elif isinstance(dec, precisionOverride) and dtype in dec.d:
                # PyTorch's tests take it as the atol.
                found = (max(found[0], dec.d[dtype]), found[1]) if found else (dec.d[dtype], 0)
    return found


class Wrong(Exception):
    """ember's result differs from PyTorch's."""


class Rounding(Wrong):
    """A float16, bfloat16, float32 or complex64 result that differs from PyTorch's where ember's
    is at least as near the answer computed in float64 (complex128) as PyTorch's: the two round differently
    (PyTorch's CPU kernels accumulate 16-bit matmuls and reductions in their own orders; its
    float32 digamma loses digits near the poles), not a wrong formula."""


# The dtypes whose results may round differently, and the wide dtype the reference runs in.
_WIDE = {torch.float16: torch.float64, torch.bfloat16: torch.float64,
         torch.float32: torch.float64, torch.complex64: torch.complex128}
_ROUNDED = tuple(_WIDE)


def _max_error(x, ref):
    wide = torch.complex128 if x.is_complex() or ref.is_complex() else torch.float64
    err = (x.to(wide) - ref.to(wide)).abs()
    err = torch.where(torch.isnan(x) & torch.isnan(ref), torch.zeros_like(err), err)
    err = torch.where(torch.isnan(err), torch.full_like(err, math.inf), err)
    return err.max().item() if err.numel() else 0.0


def _where_they_differ(actual, expected, reference):
    """actual, expected and reference (widened) at the elements where actual and expected differ
    beyond assert_close's default tolerance for their dtype."""
    atol, rtol = _DEFAULT_TOL[expected.dtype]
    wide = _WIDE[expected.dtype]
    a, e, r = actual.to(wide), expected.to(wide), reference.to(wide)
    differ = ~torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    return a[differ], e[differ], r[differ]


def _nearer(actual, expected, reference):
    """Whether every 16-bit output of actual is at least as near reference (the float64 result)
    as expected's, the other outputs equal to expected's."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(reference, torch.Tensor) or expected.dtype not in _ROUNDED:
            try:
                compare(actual, expected)
            except Wrong:
                return False
            return True
        if actual.shape != expected.shape or reference.shape != expected.shape:
            return False
        if _max_error(actual, reference) <= _max_error(expected, reference):
            return True
        # Else judged where the two disagree: a tensor whose values span magnitudes has its
        # largest error at its largest values, which may be elsewhere than where they differ.
        a, e, r = _where_they_differ(actual, expected, reference)
        return bool(((a - r).abs() <= (e - r).abs()).all())
    if isinstance(expected, (list, tuple)) and isinstance(reference, (list, tuple)):
        return len(actual) == len(expected) == len(reference) and all(
            _nearer(a, e, r) for a, e, r in zip(actual, expected, reference))
    try:
        compare(actual, expected)
    except Wrong:
        return False
    return True


def _float64_reference(op, targs, tkwargs, dtype):
    """op on the sample with its rounded tensors in float64 (complex128), or None where it does
    not run. Integer samples of an op with a floating result (an FFT of int16) are taken as
    float64 too: the result is rounded in float32 from exact inputs."""
    wide = dict(_WIDE)
    if not dtype.is_floating_point and not dtype.is_complex and dtype != torch.bool:
        wide[dtype] = torch.float64

    def up(v):
        if isinstance(v, torch.Tensor) and v.dtype in wide:
            return v.detach().to(wide[v.dtype])
        if isinstance(v, (list, tuple)):
            return type(v)(up(x) for x in v)
        if isinstance(v, dict):
            return {k: up(x) for k, x in v.items()}
        if v in _ROUNDED:
            return _WIDE[v]
        return v
    try:
        with _seeded(0):
            return op.op(*up(targs), **up(tkwargs))
    except Exception:  # noqa: BLE001
        return None


def compare(actual, expected, tol=None, meta_only=False, where="output"):
    """Raises Wrong when actual (converted to torch) is not expected."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            raise Wrong(f"{where}: expected a Tensor, got {type(actual).__name__}")
        if actual.dtype != expected.dtype:
            raise Wrong(f"{where}: expected dtype {expected.dtype}, got {actual.dtype}")
        if actual.shape != expected.shape:
            raise Wrong(f"{where}: expected shape {list(expected.shape)}, got "
                        f"{list(actual.shape)}")
        if meta_only:
            return
        atol, rtol = _DEFAULT_TOL.get(expected.dtype, (0.0, 0.0))
        if tol is not None:
            atol, rtol = max(atol, tol[0]), max(rtol, tol[1])
        try:
            torch.testing.assert_close(actual, expected, equal_nan=True, check_device=False,
                                       check_stride=False, atol=atol, rtol=rtol)
        except AssertionError as err:
            raise Wrong(f"{where}: " + " ".join(str(err).split("\n")[:3])) from None
        return
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)):
            raise Wrong(f"{where}: expected a sequence, got {type(actual).__name__}")
        if len(actual) != len(expected):
            raise Wrong(f"{where}: expected {len(expected)} results, got {len(actual)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            compare(a, e, tol, meta_only, f"{where}[{i}]")
        return
    if isinstance(expected, bool) or expected is None:
        if actual != expected:
            raise Wrong(f"{where}: expected {expected!r}, got {actual!r}")
        return
    if isinstance(expected, (int, float, complex)):
        if isinstance(actual, torch.Tensor) or not isinstance(actual, (int, float, complex)):
            raise Wrong(f"{where}: expected a Python number, got {type(actual).__name__}")
        if meta_only:
            return
        if not (actual == expected or (isinstance(expected, float) and math.isnan(expected)
                                       and math.isnan(actual))
                or abs(actual - expected) <= 1e-5 + 1.3e-6 * abs(expected)):
            raise Wrong(f"{where}: expected {expected!r}, got {actual!r}")
        return
    if isinstance(expected, torch.dtype):
        if actual != expected:
            raise Wrong(f"{where}: expected {expected}, got {actual}")
        return
    # anything else (torch.Size, strings): compare as plain values
    if (tuple(actual) if isinstance(expected, torch.Size) else actual) != \
            (tuple(expected) if isinstance(expected, torch.Size) else expected):
        raise Wrong(f"{where}: expected {expected!r}, got {actual!r}")


def describe_error(err):
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text[:300]}"


# --------------------------------------------------------------------------------------------
# One OpInfo entry
# --------------------------------------------------------------------------------------------


def _tensors(x):
    if isinstance(x, torch.Tensor) or isinstance(x, ember.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _tensors(v)]
    return []


def _sample_args(sample):
    return (sample.input,) + tuple(sample.args), dict(sample.kwargs)


def _copied(v):
    """v with its tensors cloned: an op that writes into its inputs (embedding's max_norm renorms
    the weight in place) must not hand ember or the float64 reference PyTorch's result."""
    if isinstance(v, torch.Tensor):
        return v.detach().clone().requires_grad_(v.requires_grad) if v.is_leaf else v
    if isinstance(v, (list, tuple)):
        return type(v)(_copied(x) for x in v)
    if isinstance(v, dict):
        return {k: _copied(x) for k, x in v.items()}
    return v


@contextlib.contextmanager
def _seeded(seed):
    # Python's and NumPy's generators too: some sample functions draw their arguments from them
    # (huber_loss's delta is random.uniform), and unseeded those depend on the entries a worker
    # ran before, so that an entry's samples would change from run to run.
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)
    yield


def _grad_outputs(outputs):
    """The differentiable outputs and a random cotangent for each (the same for both sides)."""
    outs = [t for t in _tensors(outputs) if t.requires_grad and t.dtype.is_floating_point]
    return outs, [torch.randn_like(t) for t in outs]


def run_sample(op, fn, sample, dtype, grad):
    """Compares ember's result (and, if grad, gradients) with PyTorch's for one sample. Returns
    None when PyTorch itself raised (the sample does not count), else raises Missing, Wrong or
    ember's exception."""
    targs, tkwargs = _sample_args(sample)
    pristine = _copied((targs, tkwargs))
    try:
        with _seeded(0):
            expected = op.op(*targs, **tkwargs)
    except Exception:  # noqa: BLE001
        return None
    meta_only = op.name in RANDOM or RANDOM_SAMPLES.get(op.name, lambda s: False)(sample)
    tol = tolerances(op, dtype)
    targs, tkwargs = pristine
    eargs, ekwargs = to_ember(_copied(targs)), to_ember(dict(_copied(tkwargs)))
    with _seeded(0):
        actual = fn(*eargs, **ekwargs)
    if not grad:
        actual = to_torch(actual)
        try:
            compare(actual, expected, tol, meta_only)
        except Wrong as err:
            if any(e.dtype in _ROUNDED for e in _tensors(expected)):
                reference = _float64_reference(op, targs, tkwargs, dtype)
                if reference is not None and _nearer(actual, expected, reference):
                    pairs = [(a, e, r) for a, e, r in zip(_tensors(actual), _tensors(expected),
                                                          _tensors(reference))
                             if e.dtype in _ROUNDED]
                    # The figures of the criterion that held (_nearer): over the whole output,
                    # else over the elements where the two differ.
                    where = ""
                    ours = max(_max_error(a, r) for a, _, r in pairs)
                    theirs = max(_max_error(e, r) for _, e, r in pairs)
                    if ours > theirs:
                        pairs = [_where_they_differ(a, e, r) for a, e, r in pairs]
                        ours = max(_max_error(a, r) for a, _, r in pairs)
                        theirs = max(_max_error(e, r) for _, e, r in pairs)
                        where = "where they differ, "
                    raise Rounding(f"{where}largest error from float64 {ours:.3g} (PyTorch's "
                                   f"{theirs:.3g}); {err}") from None
            raise
        return True
    # The entry's gradcheck wrapper (a Hermitian or triangular input made from the sample, a
    # masked output zeroed), as PyTorch's own gradient tests apply it.
    wrapper = op.gradcheck_wrapper
    with _seeded(0):
        expected = wrapper(op.op, *targs, **tkwargs)
    with _seeded(0):
        actual = retarget(wrapper)(fn, *eargs, **ekwargs)
    process = sample.output_process_fn_grad
    t_outs, cotangents = _grad_outputs(process(expected))
    t_inputs = [t for t in _tensors((targs, tkwargs)) if t.requires_grad]
    if not t_outs or not t_inputs:
        return True
    expected_grads = torch.autograd.grad(t_outs, t_inputs, cotangents, allow_unused=True)
    e_outs = [t for t in _tensors(retarget(process)(actual))
              if t.requires_grad and t.dtype.is_floating_point]
    if len(e_outs) != len(t_outs):
        raise Wrong(f"gradient: expected {len(t_outs)} differentiable outputs, got "
                    f"{len(e_outs)}")
    e_inputs = [t for t in _tensors((eargs, ekwargs)) if t.requires_grad]
    actual_grads = ember.autograd.grad(e_outs, e_inputs, [to_ember(c) for c in cotangents],
                                       allow_unused=True)
    for i, (a, e) in enumerate(zip(actual_grads, expected_grads)):
        ref = torch.zeros_like(t_inputs[i]) if e is None else e
        got = torch.zeros_like(t_inputs[i]) if a is None else to_torch(a)
        compare(got, ref, tol, meta_only, where=f"gradient of input {i}")
    return True


def cpu_dtypes(op):
    return sorted(op.supported_dtypes("cpu"), key=str)


def _samples(op, dtype, requires_grad, limit):
    with _seeded(0):
        it = op.sample_inputs("cpu", dtype, requires_grad=requires_grad)
        out = []
        for s in it:
            out.append(s)
            if limit and len(out) >= limit:
                break
    return out


def run_entry(op, limit=8, grad=True):
    """The outcome of one entry: {"forward": (status, detail), "gradient": (status, detail) or
    None, "dtypes": [...checked]}."""
    result = {"forward": None, "gradient": None}
    try:
        fn = ember_callable(op)
    except Missing as err:
        if not _torch_computes(op):
            result["forward"] = ("n/a", "PyTorch raised on every sample on the CPU")
            return result
        result["forward"] = ("missing", str(err))
        if grad and op.supports_autograd:
            result["gradient"] = ("missing", str(err))
        return result
    result["forward"] = _run_dtypes(op, fn, cpu_dtypes(op), limit, grad=False)
    if grad and op.supports_autograd and torch.float64 in op.supported_backward_dtypes("cpu"):
        result["gradient"] = _run_dtypes(op, fn, [torch.float64], limit, grad=True)
    return result


def _torch_computes(op):
    """Whether PyTorch computes any of the entry's samples on the CPU."""
    for dtype in cpu_dtypes(op):
        try:
            for sample in _samples(op, dtype, False, 2):
                targs, tkwargs = _sample_args(sample)
                op.op(*targs, **tkwargs)
                return True
        except Exception:  # noqa: BLE001
            continue
    return False


def _run_dtypes(op, fn, dtypes, limit, grad):
    counted = 0
    rounding = None
    lacking = []
    for dtype in dtypes:
        try:
            samples = _samples(op, dtype, grad, limit)
        except Exception:  # noqa: BLE001
            continue  # PyTorch cannot make this dtype's samples on the CPU
        for i, sample in enumerate(samples):
            where = f"{str(dtype)[6:]} sample {i}"
            try:
                r = run_sample(op, fn, sample, dtype, grad)
            except MissingDType as err:
                lacking.append(str(err))
                break
            except Missing as err:
                return ("missing", f"{where}: {err}")
            except Rounding as err:
                # Go on: a wrong answer in a later sample or dtype is the one to report.
                rounding = rounding or ("wrong", f"{ROUNDING}: {where}: {err}")
                continue
            except Wrong as err:
                return ("wrong", f"{where}: {err}")
            except Exception as err:  # noqa: BLE001
                text = describe_error(err)
                if "does not have" in text or "has no attribute" in text:
                    return ("missing", f"{where}: {text}")
                return ("raises", f"{where}: {text}")
            if r:
                counted += 1
    if rounding:
        return rounding
    if counted == 0:
        if lacking:
            return ("missing", "dtypes ember lacks: " + ", ".join(sorted(set(lacking))))
        return ("n/a", "PyTorch raised on every sample on the CPU")
    detail = f"{counted} samples"
    if lacking:
        detail += "; not run for the dtypes ember lacks: " + ", ".join(sorted(set(lacking)))
    return ("pass", detail)


# --------------------------------------------------------------------------------------------
# One ModuleInfo entry
# --------------------------------------------------------------------------------------------


def module_id(info):
    return info.name


def _ember_module_class(info):
    path = info.module_cls.__module__.replace("torch.", "", 1).split(".")
    name = info.module_cls.__name__
    try:
        return lookup("nn." + name)
    except Missing:
        raise Missing(f"ember.nn.{name}") from None


def _copy_state(tmod, emod):
    """PyTorch's parameters and buffers into ember's module, by state-dict name."""
    tstate = tmod.state_dict()
    estate = emod.state_dict()
    if set(tstate) != set(estate):
        raise Wrong(f"state_dict keys: expected {sorted(tstate)}, got {sorted(estate)}")
    with ember.no_grad():
        for k, v in tstate.items():
            e = estate[k]
            if tuple(e.shape) != tuple(v.shape):
                raise Wrong(f"state_dict[{k!r}]: expected shape {list(v.shape)}, got "
                            f"{list(e.shape)}")
            e.copy_(to_ember(v.detach()))


def run_module(info, limit=8, dtype=torch.float64):
    """The outcome of one ModuleInfo entry, in float64: construction, forward in train and eval
    modes, input and parameter gradients."""
    try:
        ecls = _ember_module_class(info)
    except Missing as err:
        return {"forward": ("missing", str(err))}
    counted = 0
    for training in (True, False):
        try:
            with _seeded(0):
                inputs = info.module_inputs_func(info, device="cpu", dtype=dtype,
                                                 requires_grad=True, training=training)
        except TypeError:
            with _seeded(0):
                inputs = info.module_inputs_func(info, device="cpu", dtype=dtype,
                                                 requires_grad=True)
        for i, mi in enumerate(inputs[:limit]):
            where = f"{'train' if training else 'eval'} input {i} ({mi.desc or 'default'})"
            try:
                if _run_module_input(info, ecls, mi, dtype, training):
                    counted += 1
            except Missing as err:
                return {"forward": ("missing", f"{where}: {err}")}
            except Wrong as err:
                return {"forward": ("wrong", f"{where}: {err}")}
            except Exception as err:  # noqa: BLE001
                return {"forward": ("raises", f"{where}: {describe_error(err)}")}
    if counted == 0:
        return {"forward": ("n/a", "PyTorch raised on every input")}
    return {"forward": ("pass", f"{counted} inputs")}


def _run_module_input(info, ecls, mi, dtype, training):
    cargs, ckwargs = mi.constructor_input.args, mi.constructor_input.kwargs
    if mi.forward_input is None:
        return False
    fargs, fkwargs = mi.forward_input.args, mi.forward_input.kwargs
    try:
        with _seeded(0):
            tmod = info.module_cls(*cargs, **ckwargs).to(dtype)
            tmod.train(training)
            expected = tmod(*fargs, **fkwargs)
    except Exception:  # noqa: BLE001
        return False
    with _seeded(0):
        emod = ecls(*to_ember(cargs), **to_ember(dict(ckwargs)))
    emod = emod.to(ember.float64 if dtype == torch.float64 else ember.float32)
    emod.train(training)
    eargs, ekwargs = to_ember(fargs), to_ember(dict(fkwargs))
    if any(n.startswith("Lazy") for n in [info.module_cls.__name__]):
        emod(*eargs, **ekwargs)  # materialise, then take PyTorch's values
    _copy_state(tmod, emod)
    eargs, ekwargs = to_ember(fargs), to_ember(dict(fkwargs))
    meta = info.module_cls.__name__ in ("Dropout", "RReLU")
    with _seeded(0):
        actual = emod(*eargs, **ekwargs)
    compare(to_torch(actual), expected, None, meta)
    t_outs, cotangents = _grad_outputs(expected)
    t_inputs = [t for t in _tensors((fargs, fkwargs)) if t.requires_grad]
    tparams = [p for _, p in tmod.named_parameters()]
    if not t_outs:
        return True
    eparams = dict(emod.named_parameters())
    names = [n for n, _ in tmod.named_parameters()]
    expected_grads = torch.autograd.grad(t_outs, t_inputs + tparams, cotangents,
                                         allow_unused=True)
    e_outs = [t for t in _tensors(actual) if t.requires_grad and t.dtype.is_floating_point]
    e_inputs = [t for t in _tensors((eargs, ekwargs)) if t.requires_grad]
    if len(e_outs) != len(t_outs):
        raise Wrong(f"expected {len(t_outs)} differentiable outputs, got {len(e_outs)}")
    actual_grads = ember.autograd.grad(e_outs, e_inputs + [eparams[n] for n in names],
                                       [to_ember(c) for c in cotangents], allow_unused=True)
    labels = [f"input {i}" for i in range(len(t_inputs))] + [f"parameter {n!r}" for n in names]
    refs = t_inputs + tparams
    for label, ref_t, a, e in zip(labels, refs, actual_grads, expected_grads):
        ref = torch.zeros_like(ref_t) if e is None else e
        got = torch.zeros_like(ref_t) if a is None else to_torch(a)
        compare(got, ref, None, meta, where=f"gradient of {label}")
    return True
