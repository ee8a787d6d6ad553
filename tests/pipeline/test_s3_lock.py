"""The store's lock on object storage is exact: it is created with a
conditional put, so of several processes racing for it exactly one wins; it
is released at the end, and a lock held elsewhere is refused in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from boardsweep.pipeline.store.lock import LOCK_NAME, StoreLock, StoreLocked

#: Each racer waits for the start file to appear, tries the lock once, prints WON or LOST and
#: holds a won lock until the end file appears (so no loser can take a released one).
RACER = """
import os, sys, time
from boardsweep.pipeline.store.lock import StoreLock, StoreLocked
url, start, end = sys.argv[1:]
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


@pytest.mark.slow
def test_of_racing_processes_exactly_one_takes_the_lock(bucket_url, tmp_path):
    start, end = tmp_path / "start", tmp_path / "end"
    racers = [subprocess.Popen([sys.executable, "-c", RACER, bucket_url, str(start), str(end)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
              for _ in range(4)]
    try:
        import time

        time.sleep(3)  # every racer has imported boardsweep and is polling for the start file
        start.touch()
        lines = [p.stdout.readline().strip() for p in racers]
        end.touch()
        for p in racers:
            p.wait(timeout=60)
    finally:
        for p in racers:
            if p.poll() is None:
                p.kill()
    assert sorted(line.split()[0] for line in lines) == ["LOST", "LOST", "LOST", "WON"], lines
    assert all("is in use by pid" in line for line in lines if line.startswith("LOST")), lines


def test_the_lock_names_its_holder_and_is_released(bucket_url, s3server):
    fs = s3server.filesystem()
    path = f"{bucket_url.removeprefix('s3://')}/{LOCK_NAME}"
    with StoreLock(bucket_url):
        record = json.loads(fs.cat(path))
        assert record["pid"] == os.getpid()
        with pytest.raises(StoreLocked, match=f"in use by pid {os.getpid()}"):
            StoreLock(bucket_url).__enter__()
    assert not fs.exists(path)
