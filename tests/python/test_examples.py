"""The guides' Python programs in examples/python run as written (shortened where they train),
on the best device: virtual CPU devices stand in for GPUs where a program wants several."""
import os
import subprocess
import sys

import pytest

from conftest import source_dir

EXAMPLES = os.path.join(source_dir(), "examples", "python")
DATA = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
needs_data = pytest.mark.skipif(not os.path.exists(DATA), reason="needs Debian's dataset-fashion-mnist")


def run(name, *args, expect=(), timeout=240):
    env = dict(os.environ, EMBER_CPU_DEVICES="2")
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args], capture_output=True,
                       text=True, timeout=timeout, env=env)
    assert r.returncode == 0, f"{name} failed:\n{r.stdout}\n{r.stderr}"
    for text in expect:
        assert text in r.stdout, f"{name}: '{text}' not in\n{r.stdout}"
    return r.stdout


def test_devices():
    run("devices.py", expect=["CUDA available:", "try_all_gpus():"])


def test_move_tensors():
    run("move_tensors.py", expect=["parameters on", "mixed devices:"])


def test_choose_gpu():
    run("choose_gpu.py", expect=["visible GPUs:"])


def test_split_model():
    out = run("split_model.py", expect=["step 4:"])
    assert "second on cuda:0" in out or "second on cpu:1" in out


def test_data_parallel():
    run("data_parallel.py", expect=["chunks: [5, 4]", "step 2:"])


def test_ddp():
    run("ddp.py", "--steps", "3", expect=["2 ranks hold the same model after 3 steps"])


@needs_data
def test_hogwild():
    run("hogwild.py", "--batches", "60", expect=["test accuracy after Hogwild with 2 processes"])


@needs_data
def test_training_loop(tmp_path):
    out = run("training_loop.py", "--batches", "100", "--save", str(tmp_path / "net.safetensors"),
              expect=["epoch 1:", "test accuracy"])
    accuracy = float(out.split("test accuracy ")[1].split("%")[0])
    assert accuracy > 60, out
    assert (tmp_path / "net.safetensors").exists()


@needs_data
def test_mnist_inference():
    out = run("mnist_inference.py", expect=["temperature 0.3", "temperature 2.0"])
    confidences = [float(line.split("mean confidence ")[1]) for line in out.splitlines() if "confidence" in line]
    assert confidences == sorted(confidences, reverse=True)  # a higher temperature, less confident


def test_gpt():
    out = run("gpt.py", "--iters", "60", expect=["step 0: train loss 4.", "step 60:", "sample:"])
    val = float(out.split("step 60:")[1].split("val loss ")[1].split(",")[0])
    assert val < 3.6, "60 steps take the loss well below ln 65 = 4.17"


def test_fsdp_resumes_at_another_world_size(tmp_path):
    from conftest import binary_dir
    from test_distributed import free_port
    ember_cli = os.path.join(binary_dir(), "tools", "ember")
    if not os.path.exists(ember_cli):
        pytest.skip("needs the ember command (tools/ember) of this build")

    def launch(nproc, steps):
        r = subprocess.run([ember_cli, "launch", "--nproc-per-node", str(nproc), "--master-port",
                            str(free_port()), os.path.join(EXAMPLES, "fsdp.py"), "--steps",
                            str(steps), "--checkpoint", str(tmp_path / "ckpt")],
                           capture_output=True, text=True, timeout=240)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    out = launch(2, 3)
    assert "step 2:" in out and "rank 1 of 2 holds" in out and "resumed" not in out
    out = launch(3, 5)
    assert "resumed at step 3 on 3 ranks" in out and "step 4:" in out and "step 2:" not in out
