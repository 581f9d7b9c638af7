"""`pip install .` (pyproject.toml and python/ember_build_backend.py): pip builds a wheel with
Debian's pip and no package index, the wheel installs into a fresh virtual environment made with
--system-site-packages, `import ember` there works from another directory and finds the venv's
copy, and `pip uninstall ember` removes it. The backend packs this test's build tree
(EMBER_WHEEL_BUILD_DIR), so the test builds nothing new."""
import os
import subprocess
import sys

import pytest

from conftest import binary_dir, source_dir


def call(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def test_pip_builds_a_wheel_that_installs_imports_and_uninstalls(tmp_path):
    if subprocess.run([sys.executable, "-m", "venv", "--help"], capture_output=True).returncode:
        pytest.skip("needs python3-venv")
    env = dict(os.environ, EMBER_WHEEL_BUILD_DIR=binary_dir())
    env.pop("PYTHONPATH", None)  # the venv must find its own ember, not the build tree's
    wheels = tmp_path / "wheels"
    call([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index", "-w", str(wheels),
          source_dir()], env=env)
    [wheel] = list(wheels.glob("ember-*.whl"))
    assert wheel.name.endswith("-linux_x86_64.whl") and "-cp3" in wheel.name, wheel.name

    venv = tmp_path / "venv"
    call([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    python = str(venv / "bin" / "python")
    call([python, "-m", "pip", "install", "--no-index", "--no-deps", str(wheel)], env=env)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = call([python, "-c", "import ember; print(ember.__file__); "
                "print((ember.arange(4.0) * 2).sum().item())"], env=env, cwd=elsewhere)
    where, total = out.split()
    assert where.startswith(str(venv)), f"imported {where}, not the venv's copy"
    assert float(total) == 12.0

    call([python, "-m", "pip", "uninstall", "-y", "ember"], env=env)
    site = call([python, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"], env=env)
    assert not os.path.exists(os.path.join(site.strip(), "ember")), "pip uninstall left ember"
