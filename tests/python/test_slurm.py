"""Jobs launched by a real Slurm: Debian's slurmctld and two slurmd, each node in a network
namespace of its own (a veth pair between them) with its own host name, munge for their
credentials; everything in a temporary directory, torn down after. An FSDP job across the two
nodes started by a plain `srun python -m ember.run` (one task per rank) and by `srun ember launch`
(one launcher per node) gives DDP's losses; a node's rank killed mid-job ends the job with the
cause named. Needs root (ip netns, nsenter, unshare) and the slurmctld, slurmd, slurm-client and
munge packages."""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import binary_dir
from test_fsdp import ddp_losses, held, losses

HERE = os.path.dirname(__file__)
PROGRAM = os.path.join(HERE, "fsdp_program.py")
TOOLS = ["slurmctld", "slurmd", "srun", "sbatch", "sinfo", "munged", "nsenter", "unshare", "ip"]

SLURM_CONF = """\
ClusterName=embertest
SlurmctldHost=sn0({net}.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={dir}/munge/munge.socket
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool/%n
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.%n.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
NodeName=sn0 NodeAddr={net}.1 CPUs={cpus} State=UNKNOWN
NodeName=sn1 NodeAddr={net}.2 CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes=sn0,sn1 Default=YES MaxTime=INFINITE State=UP
"""


def sh(command):
    return subprocess.run(command, shell=True, capture_output=True, text=True)


class Cluster:
    """Two Slurm nodes, sn0 (also the controller) and sn1."""

    def __init__(self, root):
        self.dir = str(root)
        tag = os.getpid() % 10000
        self.netns = [f"esl{tag}a", f"esl{tag}b"]
        self.net = f"10.{231 + tag % 20}.{tag % 250}"
        self.env = {**os.environ, "SLURM_CONF": os.path.join(self.dir, "slurm.conf")}
        self.daemons = []

    def node(self, i, command):
        """argv running command (a shell string) on node i: its network, its host name, its
        /etc/hosts naming both nodes."""
        inner = (f"mount --bind {self.dir}/hosts /etc/hosts && hostname sn{i} && exec {command}")
        return ["nsenter", f"--net=/run/netns/{self.netns[i]}", "unshare", "--mount", "--uts",
                "sh", "-c", inner]

    def run(self, i, command, timeout=180):
        return subprocess.run(self.node(i, command), capture_output=True, text=True,
                              timeout=timeout, env=self.env)

    def start(self):
        d, (a, b), net = self.dir, self.netns, self.net
        for cmd in (f"ip netns add {a}", f"ip netns add {b}",
                    f"ip link add {a}v netns {a} type veth peer name {b}v netns {b}",
                    f"ip -n {a} addr add {net}.1/24 dev {a}v",
                    f"ip -n {b} addr add {net}.2/24 dev {b}v",
                    f"ip -n {a} link set {a}v up", f"ip -n {b} link set {b}v up",
                    f"ip -n {a} link set lo up", f"ip -n {b} link set lo up"):
            r = sh(cmd)
            assert r.returncode == 0, (cmd, r.stderr)
        with open(os.path.join(d, "hosts"), "w") as f:
            f.write(f"127.0.0.1 localhost\n{net}.1 sn0\n{net}.2 sn1\n")
        with open(os.path.join(d, "slurm.conf"), "w") as f:
            f.write(SLURM_CONF.format(dir=d, net=net, cpus=os.cpu_count()))
        for sub in ("state", "spool", "munge"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        os.chmod(os.path.join(d, "munge"), 0o711)
        with open(os.path.join(d, "munge", "munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(os.path.join(d, "munge", "munge.key"), 0o400)
        m = f"{d}/munge/"
        r = sh(f"munged --force --socket={m}munge.socket --key-file={m}munge.key "
               f"--pid-file={m}munged.pid --log-file={m}munged.log --seed-file={m}seed")
        assert r.returncode == 0, r.stderr
        for i, command in ((0, "slurmctld -D -i"), (0, "slurmd -D -N sn0"),
                           (1, "slurmd -D -N sn1")):
            log = open(os.path.join(d, f"daemon{len(self.daemons)}.out"), "w")
            self.daemons.append(subprocess.Popen(self.node(i, command), stdout=log,
                                                 stderr=subprocess.STDOUT, env=self.env,
                                                 start_new_session=True))
            time.sleep(0.5 if i == 0 and "ctld" in command else 0)
        deadline = time.monotonic() + 60
        while True:
            r = self.run(0, "sinfo -h -o '%T %D'", timeout=30)
            if r.stdout.split() == ["idle", "2"]:
                return
            assert time.monotonic() < deadline, (r.stdout, r.stderr, self.logs())
            time.sleep(0.5)

    def logs(self):
        out = []
        for name in sorted(os.listdir(self.dir)):
            if name.endswith((".log", ".out")):
                with open(os.path.join(self.dir, name), errors="replace") as f:
                    out.append(f"== {name}\n" + "".join(f.readlines()[-15:]))
        return "\n".join(out)

    def stop(self):
        for p in self.daemons:
            if p.poll() is None:
                p.terminate()
        for p in self.daemons:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        sh(f"munged --stop --socket={self.dir}/munge/munge.socket")
        for ns in self.netns:
            sh(f"ip netns delete {ns}")


def why_not():
    if os.geteuid() != 0:
        return "needs root (network namespaces, Slurm's daemons)"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return (f"needs {', '.join(missing)} (scripts/install-deps installs slurmctld slurmd "
                "slurm-client munge)")
    # Making a namespace is not enough: in a chroot (scripts/fresh-machine-check) `ip -n` cannot
    # enter one (it remounts / as a slave, and / is no mount point there). The probe does what the
    # cluster does.
    probe = f"eslprobe{os.getpid() % 10000}"
    if sh(f"ip netns add {probe}").returncode != 0:
        return "cannot make a network namespace here (ip netns add failed)"
    try:
        for step in (f"ip -n {probe} link set lo up",
                     f"nsenter --net=/run/netns/{probe} unshare --mount --uts true"):
            r = sh(step)
            if r.returncode != 0:
                return f"cannot enter a network namespace here ({step}: {r.stderr.strip()})"
    finally:
        sh(f"ip netns delete {probe}")
    return None


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    reason = why_not()
    if reason:
        pytest.skip(reason)
    c = Cluster(tmp_path_factory.mktemp("slurm"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


def srun(cluster, args, timeout=240):
    python = f"{sys.executable} -m ember.run {PROGRAM}"
    return cluster.run(0, f"srun {args}".replace("PROGRAM", python), timeout=timeout)


def test_srun_starts_an_fsdp_job_with_no_launcher(cluster):
    r = srun(cluster, "-N2 -n2 -l PROGRAM full_shard")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out + cluster.logs()
    assert losses(out) == pytest.approx(ddp_losses(2, "float32"), rel=1e-5), out
    assert all(mine <= total * 0.55 for mine, total in held(out).values()), out
    assert len(held(out)) == 2


def test_srun_ember_launch_one_launcher_per_node(cluster):
    ember_cli = os.path.join(binary_dir(), "tools", "ember")
    if not os.path.exists(ember_cli):
        pytest.skip("needs the ember command (tools/ember) of this build")
    r = cluster.run(0, f"srun -N2 --ntasks-per-node=1 {ember_cli} launch --nproc-per-node 2 "
                       f"{PROGRAM} full_shard --dtype float64", timeout=240)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out + cluster.logs()
    assert losses(out) == pytest.approx(ddp_losses(4, "float64"), rel=1e-10), out
    assert sorted(held(out)) == [0, 1, 2, 3], out


def test_a_lost_node_ends_the_job_naming_the_cause(cluster):
    start = time.monotonic()
    r = srun(cluster, "-N2 -n2 PROGRAM full_shard --steps 50 --die-after 1")
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert re.search(r"sn1: task 1: Killed", out), out  # srun names the node and the task
    assert re.search(r"rank 1 (exited or died|.*died)", out), out  # rank 0 names its peer
    assert time.monotonic() - start < 60, out


def test_the_sbatch_example_runs(cluster, tmp_path):
    # examples/slurm/fsdp.sbatch as a user submits it (its batch step on the first node, srun
    # inside), shrunk to one task per node for these 2-CPU nodes.
    from conftest import source_dir
    out = tmp_path / "job.out"
    r = cluster.run(0, f"sbatch --wait --ntasks-per-node=1 --chdir={source_dir()} "
                       f"--output={out} --export=ALL,PYTHON={sys.executable},"
                       f"CHECKPOINT={tmp_path / 'ckpt'} "
                       f"{source_dir()}/examples/slurm/fsdp.sbatch", timeout=240)
    text = out.read_text() if out.exists() else ""
    assert r.returncode == 0, r.stdout + r.stderr + text + cluster.logs()
    assert "rank 1 of 2 holds" in text and "step 5:" in text, text
