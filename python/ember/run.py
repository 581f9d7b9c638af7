"""Runs a PyTorch program on ember, unchanged: `python -m ember.run PROGRAM [ARGS...]`.

`import torch` then gives `ember`, `import torch.X.Y` gives `ember.X.Y`, and `import torchvision`
gives `ember.vision`, for the program and every process it starts (multiprocessing's spawn,
`ember launch`): the environment's PYTHONPATH leads their `import torch` to a shim that patches
them the same way. In a notebook, `ember.patch_torch()` does it for the running interpreter.

A submodule ember lacks (`torch.onnx`, say) still imports, so a program that imports it and never
uses it runs; using a name ember lacks fails there, with an error naming the torch name.
"""
import importlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys
import types

_SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_shim")
_ROOTS = {"torch": "ember", "torchvision": "ember.vision"}


def _ember_name(torch_name):
    """The ember module a torch or torchvision module name stands for."""
    root, _, rest = torch_name.partition(".")
    base = _ROOTS[root]
    return base + "." + rest if rest else base


def torch_name(ember_name):
    """The torch name of an ember module or attribute name (ember.vision.x -> torchvision.x)."""
    if ember_name == "ember.vision" or ember_name.startswith("ember.vision."):
        return "torchvision" + ember_name[len("ember.vision"):]
    if ember_name == "ember" or ember_name.startswith("ember."):
        return "torch" + ember_name[len("ember"):]
    return ember_name


class _MissingModule(types.ModuleType):
    """Stands for a torch submodule ember does not have: importing it works, using it does not."""

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"{self.__name__}.{name}: ember does not have {self.__name__} yet "
                             "(python -m ember.run resolves torch to ember)")


class _Alias(importlib.abc.Loader):
    """Loads a torch name as the ember module it stands for (or a _MissingModule)."""

    def __init__(self, module):
        self.module = module
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # The import machinery set __spec__ to the torch alias's spec; ember's own module keeps its
        # own (pickle, reload and multiprocessing read it).
        if self.spec is not None:
            module.__spec__ = self.spec


class _TorchFinder(importlib.abc.MetaPathFinder):
    """Finds torch.* and torchvision.* as ember's modules."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] not in _ROOTS:
            return None
        target_name = _ember_name(fullname)
        try:
            module = importlib.import_module(target_name)
        except ModuleNotFoundError as e:
            if e.name is None or not target_name.startswith(e.name):
                raise  # a module ember's own code imports is missing: a real error
            module = _MissingModule(fullname)
            module.__path__ = []  # a package, so that its submodules import too
        return importlib.machinery.ModuleSpec(fullname, _Alias(module),
                                              is_package=hasattr(module, "__path__"))


def patch_torch():
    """Makes `import torch` (and torchvision, and their submodules) give ember in this process."""
    import ember
    if not any(isinstance(f, _TorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchFinder())
    for name in [n for n in sys.modules if n.partition(".")[0] in _ROOTS]:
        if not sys.modules[name].__name__.startswith("ember"):
            del sys.modules[name]  # a real torch imported earlier, or the shim itself
    sys.modules["torch"] = ember
    # Processes this one starts import the shim first, which patches them too: through the
    # environment (a fresh interpreter) and sys.path (multiprocessing's spawn hands the child the
    # parent's sys.path, replacing the one the environment gave it).
    if _SHIM not in sys.path:
        sys.path.insert(0, _SHIM)
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if _SHIM not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([_SHIM] + [p for p in paths if p])
    return ember


def _explain(exc):
    """A hint for an error about a name ember lacks, in torch's terms; None for any other error."""
    msg = str(exc)
    if isinstance(exc, ImportError) and "from 'ember" in msg:
        return "ember does not have this torch name yet: " + msg.replace("'ember", "'torch")
    if isinstance(exc, AttributeError) and "ember does not have" in msg:
        return msg
    return None


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m ember.run PROGRAM [ARGS...]\n"
              "       python -m ember.run -m MODULE [ARGS...]\n"
              "Runs a PyTorch program with torch and torchvision resolved to ember.")
        return 0 if argv else 2
    patch_torch()
    # Under srun (one task per rank), the variables torchrun would set, from Slurm's.
    import ember
    for name, value in ember._C._distributed._slurm_environment():
        os.environ.setdefault(name, value)
    try:
        if argv[0] == "-m":
            if len(argv) < 2:
                print("ember.run: -m needs a module name", file=sys.stderr)
                return 2
            sys.argv = argv[1:]
            module = argv[1]
            if module.partition(".")[0] in _ROOTS:  # python -m torch.distributed.run ...
                module = _ember_name(module)
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            sys.argv = argv
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except (ImportError, AttributeError) as e:
        hint = _explain(e)
        if hint:
            print(f"ember.run: {hint}", file=sys.stderr)
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
