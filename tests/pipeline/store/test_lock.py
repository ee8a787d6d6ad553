"""A lock file that is not a lock record (JSON of the wrong shape, a pid that
is not an integer, bytes that are not JSON, an empty file) never causes a
traceback: an old one (left by a process killed while writing it) is taken
over, a fresh one (perhaps being written now) is refused in one line.  A
stale lock (its process gone) is taken over by exactly one of several
processes racing for it.  The same for a lock of an earlier release
(``.boardsweep.lock``, beside the store's ``zarr.json``): its stale or
malformed file is removed once this run holds its own lock
(``.boardsweep/lock``), and a fresh malformed one refuses the run, whose
own lock is then released."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from clirun import run_cli
from lockrace import race
from boardsweep.pipeline.store import LOCK_NAME, MALFORMED_GRACE_S, StoreLock
from boardsweep.pipeline.store.lock import LEGACY_LOCK_NAME
from boardsweep.pipeline.errors import StoreLocked

MALFORMED = {
    "a list": b'["pid", 1]',
    "a string pid": b'{"pid": "12x", "host": "here", "since": "now"}',
    "a float pid": b'{"pid": 1.5, "host": "here"}',
    "no host": b'{"pid": 1}',
    "not JSON": b"\xff\xfe garbage",
    "empty": b"",
}


@pytest.mark.parametrize("name", [LOCK_NAME, LEGACY_LOCK_NAME])
@pytest.mark.parametrize("case", list(MALFORMED))
def test_an_old_malformed_lock_is_taken_over(case, name, tmp_path):
    lock = tmp_path / name
    lock.parent.mkdir(exist_ok=True)
    lock.write_bytes(MALFORMED[case])
    old = time.time() - 2 * MALFORMED_GRACE_S
    os.utime(lock, (old, old))
    with StoreLock(str(tmp_path)) as held:
        assert held.holder()["pid"] == os.getpid()
        assert not (tmp_path / LEGACY_LOCK_NAME).exists()
    assert not lock.exists() and list(tmp_path.iterdir()) == []  # its folder too, which only the lock made


@pytest.mark.parametrize("name", [LOCK_NAME, LEGACY_LOCK_NAME])
@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_fresh_malformed_lock_is_refused_in_one_line(case, name, tmp_path, write_spec, toy_spec_text, capsys):
    store = tmp_path / "store.zarr"
    lock = store / name
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_bytes(MALFORMED[case])
    with pytest.raises(StoreLocked, match=f"the lock file {lock} is not a boardsweep lock record"):
        StoreLock(str(store)).__enter__()
    spec = write_spec(toy_spec_text)
    assert run_cli("run", str(spec), "--store", str(store)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lock" in err[0], err
    assert lock.read_bytes() == MALFORMED[case]
    left = sorted(str(p.relative_to(store)) for p in store.rglob("*"))  # nothing else: the run's own lock released
    assert left == sorted({name, str(lock.parent.relative_to(store))} - {"."})


@pytest.mark.slow
@pytest.mark.parametrize("name", [LOCK_NAME, LEGACY_LOCK_NAME])
def test_of_racing_processes_taking_over_a_stale_lock_exactly_one_wins(tmp_path, name):
    store = tmp_path / "store.zarr"
    store.mkdir()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = {"pid": int(gone.stdout), "host": socket.gethostname(), "since": "2026-01-01T00:00:00+00:00"}
    for waits in (None, [1.0, 1.5, 2.0, 2.5]):  # racing as they come, then each after the one before
        (store / name).parent.mkdir(exist_ok=True)
        (store / name).write_text(json.dumps(stale))  # a run of this host that has exited left its lock
        folder = tmp_path / f"round{bool(waits)}"
        folder.mkdir()
        lines = race(str(store), folder, 4, waits)
        assert sorted(line.split()[0] for line in lines) == ["LOST", "LOST", "LOST", "WON"], lines
        assert all("is in use by pid" in line and f"pid {stale['pid']} " not in line
                   for line in lines if line.startswith("LOST")), lines  # the winner's lock, not the stale one
        assert not (store / LOCK_NAME).exists() and not (store / name).exists()  # the winner released it


@pytest.mark.parametrize("case", ["not JSON", "empty"])
def test_a_malformed_lock_holds_the_store_while_fresh_and_not_once_old(case, tmp_path):
    """The one rule (:func:`~boardsweep.pipeline.store.lock.run_holds`, as :meth:`StoreLock.is_stale`)
    that a read and the store's kind both ask: a fresh malformed record is a run writing it, starting;
    an old one was left by a process killed while writing it.  The store's kind (:func:`inspect`)
    asked it beside its own rule before, which called an old malformed record a live run forever."""
    from boardsweep.pipeline.store.identity import inspect
    from boardsweep.pipeline.store.lock import run_holds

    store = tmp_path / "store.zarr"
    lock = store / LOCK_NAME
    lock.parent.mkdir(parents=True)
    (lock.parent / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group", "attributes": {}}')
    (store / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group", "attributes": {}}')
    lock.write_bytes(MALFORMED[case])
    assert run_holds(str(store)) and inspect(str(store)) == "creating"  # a run at work: its root in flux
    old = time.time() - 2 * MALFORMED_GRACE_S
    os.utime(lock, (old, old))
    assert not run_holds(str(store)) and inspect(str(store)) == "zarr-group"
    lock.unlink()
    assert not run_holds(str(store))
    lock.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
    assert run_holds(str(store))
