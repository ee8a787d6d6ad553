"""The store's lock on object storage is exact: it is created with a
conditional put, so of several processes racing for it exactly one wins; a
stale lock is taken over with a put conditional on its ETag, so of several
processes taking it over exactly one wins; it is released at the end (only
if it is still the run's own), and a lock held elsewhere is refused in one
line.  The lock is ``.boardsweep/lock`` in the store (at a bucket's root
too); an earlier release's ``.boardsweep.lock`` is honoured: named while
its run lives, removed exactly (conditional on its ETag) once it is gone."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from boardsweep.pipeline.store import LOCK_NAME, StoreLock
from boardsweep.pipeline.store.lock import LEGACY_LOCK_NAME
from boardsweep.pipeline.errors import StoreLocked
from lockrace import race as _race

@pytest.mark.slow
def test_of_racing_processes_exactly_one_takes_the_lock(bucket_url, tmp_path):
    lines = _race(bucket_url, tmp_path)
    assert sorted(line.split()[0] for line in lines) == ["LOST", "LOST", "LOST", "WON"], lines
    assert all("is in use by pid" in line for line in lines if line.startswith("LOST")), lines


@pytest.mark.slow
@pytest.mark.parametrize("name", [LOCK_NAME, LEGACY_LOCK_NAME])
def test_of_racing_processes_taking_over_a_stale_lock_exactly_one_wins(bucket_url, s3server, tmp_path, name):
    fs = s3server.filesystem()
    path = f"{bucket_url.removeprefix('s3://')}/{name}"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = {"pid": int(gone.stdout), "host": socket.gethostname(), "since": "2026-01-01T00:00:00+00:00"}
    for waits in (None, [1.0, 1.5, 2.0, 2.5]):  # racing as they come, then each after the one before
        fs.pipe(path, json.dumps(stale).encode())  # a run of this host that has exited left its lock
        folder = tmp_path / f"round{bool(waits)}"
        folder.mkdir()
        lines = _race(bucket_url, folder, 4, waits)
        assert sorted(line.split()[0] for line in lines) == ["LOST", "LOST", "LOST", "WON"], lines
        assert all("is in use by pid" in line and f"pid {stale['pid']} " not in line
                   for line in lines if line.startswith("LOST")), lines  # the winner's lock, not the stale one
        assert not fs.exists(path)  # the winner released it
        assert not fs.exists(f"{bucket_url.removeprefix('s3://')}/{LOCK_NAME}")


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


def test_a_live_lock_of_an_earlier_release_is_named_and_ours_released(bucket_url, s3server):
    fs = s3server.filesystem()
    root = bucket_url.removeprefix("s3://")
    other = json.dumps({"pid": 1, "host": "elsewhere", "since": "2026-01-01T00:00:00+00:00"}).encode()
    fs.pipe(f"{root}/{LEGACY_LOCK_NAME}", other)  # a run of the previous release, alive on another host
    with pytest.raises(StoreLocked, match=f"in use by pid 1 on host elsewhere .*lock file {root}/{LEGACY_LOCK_NAME}"):
        StoreLock(bucket_url).__enter__()
    assert fs.cat(f"{root}/{LEGACY_LOCK_NAME}") == other and not fs.exists(f"{root}/{LOCK_NAME}")
    fs.rm(f"{root}/{LEGACY_LOCK_NAME}")


def test_a_store_at_a_buckets_root_is_locked_inside_it(s3server):
    fs = s3server.filesystem()
    bucket = s3server.bucket(f"boardsweep-lock-root-{os.getpid()}")
    with StoreLock(f"s3://{bucket}"):
        assert json.loads(fs.cat(f"{bucket}/{LOCK_NAME}"))["pid"] == os.getpid()
        with pytest.raises(StoreLocked, match=f"in use by pid {os.getpid()}"):
            StoreLock(f"s3://{bucket}").__enter__()
    assert not fs.exists(f"{bucket}/{LOCK_NAME}")
