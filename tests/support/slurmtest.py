"""A real single-node SLURM cluster in a temporary folder, for tests.

``munged`` with its own key and socket, ``slurmctld -D`` and ``slurmd -D``
with a generated ``slurm.conf`` (``proctrack/linuxproc`` and ``task/none``:
no cgroups needed; ``CommunicationParameters=NoCtldInAddrAny,NoInAddrAny``
and free loopback ports: nothing listens beyond 127.0.0.1).  Clients find it
through ``SLURM_CONF``.  Nothing in /etc is read or written; every process
started here is stopped by id when the context exits.

Two partitions: ``debug`` (the default, up) and ``closed`` (down: a job sent
there waits with squeue's reason ``PartitionDown``).

Debian's packages (slurmctld, slurmd, slurm-client, munge) are installed
when missing and running as root; otherwise :func:`missing` says what is
missing, for a skip.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

COMMANDS = {"munged": "munge", "slurmctld": "slurmctld", "slurmd": "slurmd", "sbatch": "slurm-client",
            "squeue": "slurm-client", "scancel": "slurm-client"}
SBIN = ("/usr/sbin", "/sbin")


def _which(cmd: str) -> str | None:
    return shutil.which(cmd) or next((f"{d}/{cmd}" for d in SBIN if os.access(f"{d}/{cmd}", os.X_OK)), None)


def missing() -> str:
    """What is missing to start SLURM here (installing Debian's packages as
    root first), or '' when nothing is."""
    absent = sorted({pkg for cmd, pkg in COMMANDS.items() if _which(cmd) is None})
    if absent and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True, env=env, timeout=600)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *absent],
                       capture_output=True, env=env, timeout=900)
        absent = sorted({pkg for cmd, pkg in COMMANDS.items() if _which(cmd) is None})
    if absent:
        how = "" if os.geteuid() == 0 else " (not root, so not installed by the test)"
        return f"SLURM test needs Debian's packages {' '.join(absent)}{how}"
    if os.geteuid() != 0:
        return "SLURM test starts slurmd, which must run as root; not root"
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CONF = """\
ClusterName=boardsweep
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={d}/munge.socket
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
KillWait=2
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
NodeName={host} NodeAddr=127.0.0.1 NodeHostname={host} CPUs={cpus} RealMemory=8000 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
PartitionName=closed Nodes={host} MaxTime=INFINITE State=DOWN
"""


class Slurm:
    """The running cluster: ``env`` has SLURM_CONF; ``jobs()`` lists its job ids."""

    def __init__(self, root: Path, cpus: int = 2) -> None:
        self.root, self.cpus = Path(root), cpus
        self.procs: list[subprocess.Popen] = []
        self.conf = self.root / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    def _start(self, *args: str, log: str) -> None:
        out = open(self.root / log, "w")
        try:
            self.procs.append(subprocess.Popen([_which(args[0]) or args[0], *args[1:]], env=self.env,
                                               stdout=out, stderr=subprocess.STDOUT, start_new_session=True))
        finally:
            out.close()

    def start(self) -> "Slurm":
        d = self.root
        for sub in ("state", "spool"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        key = d / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        d.chmod(0o755)
        self._start("munged", "--foreground", "--force", f"--key-file={key}", f"--socket={d}/munge.socket",
                    f"--pid-file={d}/munged.pid", f"--log-file={d}/munged.log", f"--seed-file={d}/munged.seed",
                    log="munged.out")
        self._wait(lambda: (d / "munge.socket").exists(), "munged's socket")
        host = socket.gethostname().split(".")[0]
        self.conf.write_text(CONF.format(host=host, d=d, ctld_port=_free_port(), d_port=_free_port(),
                                         cpus=self.cpus))
        self._start("slurmctld", "-D", "-i", log="slurmctld.out")
        self._start("slurmd", "-D", "-N", host, log="slurmd.out")
        self._wait(self._node_idle, "the SLURM node to be idle")
        return self

    def _wait(self, predicate, what: str, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while not predicate():
            dead = [p.args[0] for p in self.procs if p.poll() is not None]
            if dead or time.monotonic() > end:
                raise RuntimeError(f"{what}: not reached (exited: {dead})\n{self.log_text()}")
            time.sleep(0.2)

    def _node_idle(self) -> bool:
        out = subprocess.run([_which("sinfo") or "sinfo", "-h", "-p", "debug", "-o", "%T"], env=self.env,
                             capture_output=True, text=True)
        return out.returncode == 0 and out.stdout.strip().startswith("idle")

    def run(self, *args: str) -> str:
        """A SLURM client command (squeue, scancel, ...), its stdout."""
        out = subprocess.run([_which(args[0]) or args[0], *args[1:]], env=self.env, capture_output=True,
                             text=True, timeout=60)
        return out.stdout

    def jobs(self) -> list[str]:
        """Ids of the jobs SLURM still holds (pending, running or completing)."""
        return self.run("squeue", "-h", "-o", "%i").split()

    def wait_no_jobs(self, timeout: float = 60.0) -> list[str]:
        """Wait until no job is left (a cancelled job completes within seconds); the ids left."""
        end = time.monotonic() + timeout
        while self.jobs() and time.monotonic() < end:
            time.sleep(0.5)
        return self.jobs()

    def log_text(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                         for p in sorted(self.root.glob("*.log")) + sorted(self.root.glob("*.out")))

    def stop(self) -> None:
        """Cancel what is left, then stop slurmd, slurmctld and munged (by id, whole session)."""
        if any(p.poll() is None for p in self.procs):
            try:
                self.run("scancel", "--full", "--user", "root")
            except Exception:  # noqa: BLE001 - stopping anyway
                pass
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, 15)
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, 9)
                    proc.wait(timeout=15)
                except ProcessLookupError:
                    pass


@contextmanager
def slurm_cluster(root: Path, cpus: int = 2) -> Iterator[Slurm]:
    cluster = Slurm(root, cpus)
    try:
        yield cluster.start()
    finally:
        cluster.stop()
