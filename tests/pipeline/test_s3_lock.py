"""The store's lock on object storage is exact: it is created with a
conditional put, so of several processes racing for it exactly one wins; a
stale lock is taken over with a put conditional on its ETag, so of several
processes taking it over exactly one wins; it is released at the end (only
if it is still the run's own), and a lock held elsewhere is refused in one
line."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from boardsweep.pipeline.store.lock import LOCK_NAME, StoreLock, StoreLocked

#: Each racer waits for the start file to appear, tries the lock once, prints WON or LOST and
#: holds a won lock until the end file appears (so no loser can take a released one).  With a
#: fourth argument, a racer that finds the lock stale waits that many seconds before taking it
#: over: every racer has then read the stale lock before any takes it (the widest race).
RACER = """
import os, sys, time
from boardsweep.pipeline.store.lock import StoreLock, StoreLocked
url, start, end = sys.argv[1:4]
if len(sys.argv) > 4:
    stale = StoreLock._stale
    def slow(self, holder):
        found = stale(self, holder)
        if found:
            time.sleep(float(sys.argv[4]))
        return found
    StoreLock._stale = slow
while not os.path.exists(start):
    time.sleep(0.005)
try:
    with StoreLock(url):
        print("WON", flush=True)
        while not os.path.exists(end):
            time.sleep(0.01)
except StoreLocked as exc:
    print("LOST", exc, flush=True)
"""


def _race(url: str, folder, racers: int = 4, *wait: str) -> list[str]:
    """Start ``racers`` processes that try the lock of ``url`` at the same instant: their lines."""
    start, end = folder / "start", folder / "end"
    procs = [subprocess.Popen([sys.executable, "-c", RACER, url, str(start), str(end), *wait],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
             for _ in range(racers)]
    try:
        time.sleep(3)  # every racer has imported boardsweep and is polling for the start file
        start.touch()
        lines = [p.stdout.readline().strip() for p in procs]
        end.touch()
        for p in procs:
            p.wait(timeout=60)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return lines


@pytest.mark.slow
def test_of_racing_processes_exactly_one_takes_the_lock(bucket_url, tmp_path):
    lines = _race(bucket_url, tmp_path)
    assert sorted(line.split()[0] for line in lines) == ["LOST", "LOST", "LOST", "WON"], lines
    assert all("is in use by pid" in line for line in lines if line.startswith("LOST")), lines


@pytest.mark.slow
def test_of_racing_processes_taking_over_a_stale_lock_exactly_one_wins(bucket_url, s3server, tmp_path):
    fs = s3server.filesystem()
    path = f"{bucket_url.removeprefix('s3://')}/{LOCK_NAME}"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = {"pid": int(gone.stdout), "host": socket.gethostname(), "since": "2026-01-01T00:00:00+00:00"}
    for wait in ((), ("1.5",)):  # racing as they come, then all having read the stale lock first
        fs.pipe(path, json.dumps(stale).encode())  # a run of this host that has exited left its lock
        folder = tmp_path / f"round{len(wait)}"
        folder.mkdir()
        lines = _race(bucket_url, folder, 4, *wait)
        assert sorted(line.split()[0] for line in lines) == ["LOST", "LOST", "LOST", "WON"], lines
        assert all("is in use by pid" in line and f"pid {stale['pid']} " not in line
                   for line in lines if line.startswith("LOST")), lines  # the winner's lock, not the stale one
        assert not fs.exists(path)  # the winner released it


def test_a_run_never_removes_a_lock_another_run_took_over(bucket_url, s3server):
    fs = s3server.filesystem()
    path = f"{bucket_url.removeprefix('s3://')}/{LOCK_NAME}"
    other = json.dumps({"pid": 1, "host": "elsewhere", "since": "2026-01-01T00:00:00+00:00"}).encode()
    with StoreLock(bucket_url):
        fs.pipe(path, other)  # as a run that (wrongly) found this one stale would
    assert fs.cat(path) == other
    fs.rm(path)


def test_the_lock_names_its_holder_and_is_released(bucket_url, s3server):
    fs = s3server.filesystem()
    path = f"{bucket_url.removeprefix('s3://')}/{LOCK_NAME}"
    with StoreLock(bucket_url):
        record = json.loads(fs.cat(path))
        assert record["pid"] == os.getpid()
        with pytest.raises(StoreLocked, match=f"in use by pid {os.getpid()}"):
            StoreLock(bucket_url).__enter__()
    assert not fs.exists(path)
