"""The docker/compose.yaml topology as real local processes, for tests.

A ``dask scheduler`` and ``dask worker`` processes (each in its own session,
with its nanny, one thread) started with the installed ``dask`` CLI on
127.0.0.1, and ``boardsweep run`` clients started as subprocesses.  Everything
started here is killed by id (its process group) when the context exits.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import zarr

from boardsweep.pipeline.run.verify import values_match

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
DASK = str(BIN / "dask")
BOARDSWEEP = str(BIN / "boardsweep")

#: The ``boardsweep`` CLI with the test games registered (toy, failing).
RUNNER = f"""\
import sys
sys.path.insert(0, {str(HERE)!r})
from boardsweep.core import games
games.register("toy", "toy_game")
games.register("failing", "failing_game")
from boardsweep.pipeline.cli.commands import command_line
if __name__ == "__main__":
    command_line()  # the console script's exit, as users get it
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout: float = 60.0, what: str = "condition") -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise TimeoutError(f"{what} not reached within {timeout} s")
        time.sleep(0.1)


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL the process group of ``proc`` (started with start_new_session)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass


def toy_delay(folder: Path, seconds: float) -> tuple[dict[str, str], Path]:
    """The environment that makes the toy game sleep ``seconds`` per replicate while the
    returned flag file exists (so that a fault lands mid-sweep), and that file: unlinked
    once the fault is made, the rest of the sweep runs at full speed."""
    flag = Path(folder) / "toy-delay"
    flag.touch()
    return {"TOY_DELAY_S": str(seconds), "TOY_DELAY_WHILE": str(flag)}, flag


def done_count(url) -> int:
    try:
        return int(zarr.open_array(str(url), path="done", mode="r")[...].sum())
    except Exception:  # noqa: BLE001 - the store may not exist yet
        return 0


class LocalDask:
    """A scheduler and workers as processes; ``address`` is the scheduler's."""

    def __init__(self, logs: Path, workers: int = 2, env: dict | None = None, tls: dict | None = None):
        self.logs, self.n, self.tls = Path(logs), workers, tls or {}
        self.env = {**os.environ, **(env or {})}
        self.port = free_port()
        self.protocol = "tls" if tls else "tcp"
        self.address = f"{self.protocol}://127.0.0.1:{self.port}"
        self.scheduler: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self.logs.mkdir(parents=True, exist_ok=True)

    def _tls_args(self) -> list[str]:
        return [a for k in ("ca", "cert", "key") if k in self.tls
                for a in (f"--tls-{'ca-file' if k == 'ca' else k}", str(self.tls[k]))]

    def _popen(self, args: list[str], log: str) -> subprocess.Popen:
        out = open(self.logs / log, "w")
        try:
            return subprocess.Popen(args, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        finally:
            out.close()

    def start(self) -> "LocalDask":
        self.scheduler = self._popen(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(self.port),
             "--protocol", self.protocol, "--dashboard-address", "127.0.0.1:0", *self._tls_args()],
            f"scheduler-{self.port}.log",
        )
        for i in range(self.n):
            self.add_worker(i)
        self.wait_for_workers(self.n)
        return self

    def add_worker(self, i: int) -> subprocess.Popen:
        proc = self._popen(
            [DASK, "worker", self.address, "--nthreads", "1", "--host", "127.0.0.1",
             "--dashboard-address", "127.0.0.1:0", "--death-timeout", "60",
             "--name", f"w{i}-{self.port}", *self._tls_args()],
            f"worker{i}-{self.port}.log",
        )
        self.workers.append(proc)
        return proc

    def client(self):
        from distributed import Client

        security = None
        if self.tls:
            from distributed.security import Security

            security = Security(tls_ca_file=str(self.tls["ca"]), tls_client_cert=str(self.tls["cert"]),
                                tls_client_key=str(self.tls["key"]), require_encryption=True)
        return Client(self.address, timeout="30s", security=security)

    def wait_for_workers(self, n: int, timeout: float = 90.0) -> None:
        with self.client() as c:
            c.wait_for_workers(n, timeout=timeout)

    def log_text(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(self.logs.glob("*.log")))

    def stop(self) -> None:
        for proc in [*self.workers, *( [self.scheduler] if self.scheduler else [])]:
            kill(proc)


@contextmanager
def local_dask(logs: Path, **kwargs) -> Iterator[LocalDask]:
    cluster = LocalDask(logs, **kwargs)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def start_client(tmp_path: Path, *args: str, env: dict | None = None, real: bool = False) -> subprocess.Popen:
    """``boardsweep ARGS`` as a subprocess (the console script when ``real``,
    else the runner that also knows the test games)."""
    if real:
        cmd = [BOARDSWEEP, *args]
    else:
        script = tmp_path / "runner.py"
        script.write_text(RUNNER)
        cmd = [sys.executable, str(script), *args]
    return subprocess.Popen(cmd, env={**os.environ, **(env or {})}, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen, timeout: float = 180.0) -> tuple[int, str, str]:
    """Wait for a client; (returncode, stdout, stderr).  Killed if it overruns."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        out, err = proc.communicate()
        raise AssertionError(f"client did not finish within {timeout} s:\n{out}\n{err}") from None
    return proc.returncode, out, err


def raw_arrays(url) -> dict[str, np.ndarray]:
    """Every array of the store, raw (no decoding), by name."""
    group = zarr.open_group(str(url), mode="r")
    return {name: np.asarray(group[name][...]) for name in sorted(group.array_keys())}


#: The toy and Monopoly stores' simulated, exact and done arrays: what the store tests compare.
COMPARED = ["counts", "events", "rolls", "done", "exact_frequency", "exact_done"]


def assert_bitwise_equal(a, b, names=None) -> None:
    """Every data variable (default: every array) of stores a and b: integers bit
    for bit, floats within verify's tolerance (solvers round differently per CPU)."""
    x, y = raw_arrays(a), raw_arrays(b)
    names = names or sorted(set(x) | set(y))
    for name in names:
        assert name in x and name in y, name
        u, v = x[name], y[name]
        assert u.dtype == v.dtype and u.shape == v.shape, name
        if u.dtype.kind == "O" or u.dtype.kind in "UST":
            assert list(u.ravel()) == list(v.ravel()), name
        elif u.dtype.kind == "f":  # solver output: within the stated tolerance
            assert values_match(u, v).all(), name
        else:
            assert u.tobytes() == v.tobytes(), name
