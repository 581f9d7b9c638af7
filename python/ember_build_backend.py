"""The PEP 517 build backend of `pip install .` (pyproject.toml): it runs the project's own CMake
build and packs the Python package it makes (build tree's python/ember: the extension _C and the
Python files) into a wheel. Standard library only and no build requirements, so pip needs no
package index: Debian's pip, cmake, ninja and the packages of scripts/install-deps' `run` group
are all it takes.

Where it builds: EMBER_WHEEL_BUILD_DIR if set (an already configured build tree is reused, so a
test can pack the tree it tests), else build/wheel in the source tree. EMBER_WHEEL_CMAKE_ARGS adds
configure arguments (space-separated). The build is for this machine (-march=native, as every
ember build from source), so a wheel made here is for machines with this CPU."""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

_SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SUMMARY = "ember: PyTorch's API over a C++ core that makes GPUs easy and fast"


def _version():
    with open(os.path.join(_SOURCE, "CMakeLists.txt")) as f:
        found = re.search(r"project\(ember VERSION ([0-9.]+)", f.read())
    if not found:
        raise RuntimeError("ember_build_backend: no 'project(ember VERSION x.y.z)' in CMakeLists.txt")
    return found.group(1)


def _tag():
    """The wheel's tag: this interpreter's ABI on this platform (the extension is built for it)."""
    impl = "cp%d%d" % sys.version_info[:2]
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}-{platform}"


def _run(cmd):
    print("ember_build_backend:", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=sys.stderr)  # pip shows a build's stderr on failure


def _build_package():
    """Configures (unless configured) and builds the extension; returns the package directory."""
    build = os.environ.get("EMBER_WHEEL_BUILD_DIR") or os.path.join(_SOURCE, "build", "wheel")
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        if shutil.which("cmake") is None:
            raise RuntimeError("ember_build_backend: cmake not found; run "
                               "`scripts/install-deps run` (Debian packages) first")
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(["cmake", "-S", _SOURCE, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release",
              "-DEMBER_TESTS=OFF", "-DEMBER_BENCH=OFF", "-DEMBER_TOOLS=OFF", "-DEMBER_PYTHON=ON",
              f"-DPython_EXECUTABLE={sys.executable}",
              *os.environ.get("EMBER_WHEEL_CMAKE_ARGS", "").split()])
    _run(["cmake", "--build", build, "--target", "ember_python", "-j", str(os.cpu_count() or 1)])
    package = os.path.join(build, "python", "ember")
    if not any(n.startswith("_C.") for n in os.listdir(package)):
        raise RuntimeError(f"ember_build_backend: the build made no extension in {package}")
    return package


def _metadata():
    return (f"Metadata-Version: 2.1\nName: ember\nVersion: {_version()}\nSummary: {_SUMMARY}\n"
            "License: see the repository\nRequires-Python: >=3.8\nRequires-Dist: numpy\n")


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


# --- PEP 517 hooks -------------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = f"ember-{_version()}.dist-info"
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w") as f:
        f.write(_metadata())
    return info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    package = _build_package()
    version, tag = _version(), _tag()
    info = f"ember-{version}.dist-info"
    name = f"ember-{version}-{tag}.whl"
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as whl:
        def add(arcname, data):
            whl.writestr(arcname, data)
            records.append(_record_line(arcname, data))

        for root, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for f in sorted(files):
                if f.endswith((".py", ".so")):
                    path = os.path.join(root, f)
                    with open(path, "rb") as src:
                        add(os.path.join("ember", os.path.relpath(path, package)), src.read())
        add(f"{info}/METADATA", _metadata().encode())
        add(f"{info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: ember_build_backend\n"
                              f"Root-Is-Purelib: false\nTag: {tag}\n").encode())
        record = "\n".join(records + [f"{info}/RECORD,,"]) + "\n"
        whl.writestr(f"{info}/RECORD", record)
    return name
