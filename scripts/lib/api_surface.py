"""Every public name of PyTorch's user-facing namespaces, and which of them resolve in ember
(`scripts/api-coverage --public`; the corpus measure is the script's own).

A PyTorch's names are read where that PyTorch runs: `--dump FILE` writes them as JSON, so the names
of PyTorch 2.6 come from the Debian 13 root where it is installed (its Python cannot load ember's
extension) and are resolved against ember on this machine.

Public: for a module, its `__all__` where it has one, else every name in `dir()` without a leading
underscore; for Tensor, `dir(torch.Tensor)` likewise. Not counted, as not part of the API a program
calls (each rule is in NOT_API with its reason): modules from outside the namespace (`torch.nn.
functional.math`), typing constructs (`List`, `Optional`), and the names in EXCLUDED, whose
reasons are written beside them.
"""
import importlib
import json
import types

NAMESPACES = ["torch", "torch.nn", "torch.nn.functional", "torch.optim", "torch.utils.data",
              "torch.linalg", "torch.fft", "torch.special", "torch.distributions", "Tensor"]

NOT_API = {
    "foreign module": "a module imported into the namespace (math, warnings, typing), not "
                      "PyTorch's",
    "typing": "a typing construct imported for annotations (List, Optional, Callable, "
              "TYPE_CHECKING, and torch._jit_internal's BroadcastingList1-3)",
    "re-exported Tensor": "torch.Tensor imported into a submodule for annotations "
                          "(torch.linalg.Tensor)",
    "docstring fragments": "the *_notes dicts nn.functional and linalg format their docstrings "
                           "with",
    "protocol helpers": "handle_torch_function and has_torch_function*, torch.overrides' "
                        "__torch_function__ machinery imported into nn.functional",
}
_INTERNAL_MODULES = ("torch._jit_internal", "torch.overrides", "torch._C._jit")

# Names a program does not call as API, with the reason (matched as `namespace.name` or as a
# prefix ending in '.').
EXCLUDED = {
    "torch.jit": "TorchScript: a compiler of its own, not an API ember can mean to provide by name",
    "torch.fx": "torch.fx graph capture: the capture issue (compile/fusion) decides its form",
    "torch.quantization": "eager quantization workflow, superseded by torch.ao",
    "torch.ao": "quantization internals",
    "torch.quantize_per_tensor": "quantized tensors (no quantized dtypes in ember)",
    "torch.quantize_per_channel": "quantized tensors (no quantized dtypes in ember)",
    "torch.quantize_per_tensor_dynamic": "quantized tensors (no quantized dtypes in ember)",
    "torch.quantized_batch_norm": "quantized tensors",
    "torch.quantized_max_pool1d": "quantized tensors",
    "torch.quantized_max_pool2d": "quantized tensors",
    "torch.quantized_lstm_cell": "quantized tensors",
    "torch.quantized_gru_cell": "quantized tensors",
    "torch.quantized_rnn_relu_cell": "quantized tensors",
    "torch.quantized_rnn_tanh_cell": "quantized tensors",
    "torch.fbgemm_": "FBGEMM's quantized-linear entry points (internal kernels)",
    "torch.mkldnn_": "oneDNN layout internals",
    "torch.miopen_": "AMD MIOpen entry points",
    "torch.cudnn_": "cuDNN entry points behind the public ops",
    "torch.onnx": "export to ONNX: a separate capability",
    "torch.package": "torch.package archives",
    "torch.testing": "PyTorch's own test utilities",
    "torch.classes": "TorchScript custom classes",
    "torch.ops": "the dispatcher's raw operator namespace",
    "torch.library": "registering operators into PyTorch's dispatcher",
    "torch.overrides": "the __torch_function__ protocol's helpers",
    "torch.compiler": "torch.compile's internals (the capture issue)",
    "torch.export": "torch.export graph capture (the capture issue)",
    "torch.masked._ops": "internal",
}
# TorchScript's IR, types and runtime, which `from torch._C import *` puts in torch's __all__.
for _name in """AliasDb AnyType Argument ArgumentSpec BenchmarkConfig BenchmarkExecutionStats Block
        BoolType BufferDict CallStack Capsule ClassType Code CompilationUnit CompleteArgumentSpec
        ComplexType ConcreteModuleType ConcreteModuleTypeBuilder DeepCopyMemoTable
        DeserializationStorageContext DeviceObjType DictType EnumType ErrorReport ExecutionPlan
        FatalError FileCheck FloatType FunctionSchema FutureType Gradient Graph GraphExecutorState
        IODescriptor InferredType IntType InterfaceType JITException ListType LiteScriptModule
        LockingLogger ModuleDict Node NoneType NoopLogger NumberType OperatorInfo OptionalType
        ParameterDict PyObjectType PyTorchFileReader PyTorchFileWriter RRefType ScriptClass
        ScriptClassFunction ScriptDict ScriptDictIterator ScriptDictKeyIterator ScriptFunction
        ScriptList ScriptListIterator ScriptMethod ScriptModule ScriptModuleSerializer
        ScriptObject ScriptObjectProperty SerializationStorageContext StaticModule StreamObjType
        StringType SymFloatNode SymIntNode SymIntType SymBoolType AwaitType TensorType ThroughputBenchmark TracingState
        TupleType Type UnionType Use Value AggregationType AVG SUM MobileOptimizerType
        CONV_BN_FUSION FUSE_ADD_RELU HOIST_CONV_PACKED_PARAMS INSERT_FOLD_PREPACK_OPS
        REMOVE_DROPOUT fork wait import_ir_module import_ir_module_from_buffer
        merge_type_from_type_comment parse_ir parse_schema parse_type_comment unify_type_list
        read_vitals set_vital vitals_enabled cpp""".split():
    EXCLUDED["torch." + _name] = "TorchScript's IR, types or runtime (from torch._C)"
# Quantized tensors: their dtypes, their accessors and the ops that make or read them (ember has no
# quantized dtype; quantization itself is torch.ao, excluded above). The fake-quantize ops, which
# compute in float, are counted.
for _name in """qint8 qint32 quint8 quint4x2 quint2x4 qscheme q_scale q_zero_point
        q_per_channel_scales q_per_channel_zero_points q_per_channel_axis int_repr
        empty_quantized choose_qparams_optimized fused_moving_avg_obs_fake_quant
        quantized_max_pool3d""".split():
    EXCLUDED["torch." + _name] = "quantized tensors (no quantized dtypes in ember)"
    EXCLUDED["Tensor." + _name] = "quantized tensors (no quantized dtypes in ember)"
for _name in "intrinsic qat quantizable quantized".split():
    EXCLUDED["torch.nn." + _name] = "quantized modules: torch.ao.nn re-exported"
# The dispatcher's own objects, the machinery of torch.ops and torch.library (excluded above),
# and the switches of the __torch_function__ protocol (torch.overrides).
for _name in "DispatchKey DispatchKeySet ExcludeDispatchKeyGuard Tag".split():
    EXCLUDED["torch." + _name] = "the dispatcher's keys, guards and operator tags"
for _name in "DisableTorchFunction DisableTorchFunctionSubclass".split():
    EXCLUDED["torch." + _name] = "the __torch_function__ protocol's switches (torch.overrides)"
del _name


def _is_excluded(qual):
    for key in EXCLUDED:
        if qual == key or key.endswith(("_", ".")) and qual.startswith(key) or \
                qual.startswith(key + "."):
            return key
    return None


def public_names(torch):
    """{namespace: sorted names} of the running PyTorch."""
    out = {}
    for ns in NAMESPACES:
        if ns == "Tensor":
            out[ns] = sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
            continue
        mod = importlib.import_module(ns)
        names = getattr(mod, "__all__", None)
        names = list(names) if names is not None else [n for n in dir(mod)
                                                       if not n.startswith("_")]
        kept = []
        for n in names:
            obj = getattr(mod, n, None)
            if isinstance(obj, types.ModuleType) and not obj.__name__.startswith(ns + "."):
                continue  # foreign module
            if getattr(obj, "__module__", None) == "typing" or \
                    type(obj).__module__ == "typing" or n == "TYPE_CHECKING":
                continue  # typing
            if str(getattr(obj, "__module__", "")).startswith(_INTERNAL_MODULES) or \
                    n == "DType" or n.startswith(("has_torch_function", "handle_torch_function")):
                continue  # typing aliases and protocol helpers
            if obj is torch.Tensor and ns != "torch":
                continue  # re-exported Tensor
            if n.endswith("_notes") and isinstance(obj, dict):
                continue  # docstring fragments
            kept.append(n)
        out[ns] = sorted(set(kept))
    return out


def dump(path):
    import torch
    with open(path, "w") as f:
        json.dump({"torch": torch.__version__, "names": public_names(torch)}, f, indent=1)


def _resolve(ember, ns, name):
    if ns == "Tensor":
        return hasattr(ember.Tensor, name)
    obj = ember
    for part in (ns.split(".")[1:] + [name]):
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 (ember's __getattr__ names what it lacks)
            return False
    return True


def measure(ember, names):
    """{namespace: {"counted": n, "resolved": n, "missing": [...], "excluded": {name: key}}}."""
    report = {}
    for ns, ns_names in names.items():
        row = {"counted": 0, "resolved": 0, "missing": [], "excluded": {}}
        for n in ns_names:
            qual = f"{ns}.{n}"
            key = _is_excluded(qual)
            if key:
                row["excluded"][n] = key
                continue
            row["counted"] += 1
            if _resolve(ember, ns, n):
                row["resolved"] += 1
            else:
                row["missing"].append(n)
        report[ns] = row
    return report


def markdown(reports, command):
    """reports: [(torch version, report)]."""
    lines = ["# PyTorch's public names in ember", "",
             "Every public name of PyTorch's user-facing namespaces (its `__all__`, else `dir()` "
             "without a leading underscore; `dir(torch.Tensor)` for Tensor), and whether ember "
             "has it under the same path. Names from PyTorch 2.6 are read in a Debian 13 root "
             "where `python3-torch` 2.6 is installed; those of 1.13 on this machine. Having a "
             "name is not doing what PyTorch does: docs/conformance.md measures that where "
             "PyTorch's OpInfo and ModuleInfo cover it.", "",
             "A names file comes from the PyTorch it names: for 2.6, a Debian 13 root made with "
             "`mmdebstrap --variant=minbase --include=python3-torch trixie ROOT` and "
             "`chroot ROOT python3 /path/to/ember/scripts/api-coverage --public --dump "
             "names.json` (its Python cannot load ember's extension, so the names are resolved "
             "here). Reproduce the tables with:", "", "```sh", command, "```", "",
             "## Summary", "",
             "| namespace | " + " | ".join(f"PyTorch {v}" for v, _ in reports) + " |",
             "| --- |" + " ---: |" * len(reports)]
    for ns in NAMESPACES:
        cells = []
        for _, r in reports:
            row = r.get(ns, {"counted": 0, "resolved": 0})
            pct = 100.0 * row["resolved"] / row["counted"] if row["counted"] else 100.0
            cells.append(f"{row['resolved']} / {row['counted']} ({pct:.1f}%)")
        lines.append(f"| `{ns}` | " + " | ".join(cells) + " |")
    totals = []
    for _, r in reports:
        c = sum(row["counted"] for row in r.values())
        s = sum(row["resolved"] for row in r.values())
        totals.append(f"{s} / {c} ({100.0 * s / c:.1f}%)" if c else "-")
    lines.append("| all | " + " | ".join(totals) + " |")
    lines += ["", "## Not counted, and why", ""]
    for key, why in NOT_API.items():
        lines.append(f"- {key}: {why}.")
    by_reason = {}
    for key, why in EXCLUDED.items():
        by_reason.setdefault(why, []).append(key)
    for why, keys in by_reason.items():
        lines.append("- " + ", ".join(f"`{k}`" for k in keys) + f": {why}.")
    for version, r in reports:
        lines += ["", f"## What ember lacks of PyTorch {version}", ""]
        for ns in NAMESPACES:
            missing = r.get(ns, {}).get("missing", [])
            if missing:
                lines.append(f"- `{ns}` ({len(missing)}): " +
                             ", ".join(f"`{n}`" for n in missing))
    return "\n".join(lines) + "\n"
