"""Where the lock lives: ``.boardsweep/lock``, inside boardsweep's own folder
(a zarr group), so that zarr and xarray open a store without a warning while
a real run holds it, after that run was killed, and after the next run took
its stale lock over (issue 53: "one store, one set of warnings").  A lock of
the previous release (``.boardsweep.lock``, beside the root ``zarr.json``)
is still honoured: a live holder named, a stale one taken over and removed,
a folder holding only it read as before (``inspect``'s ``empty``,
:func:`lock_only_line`'s lines)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import warnings

import pytest
import xarray as xr
import zarr

from clirun import run_cli
from boardsweep.pipeline.errors import StoreLocked
from boardsweep.pipeline.store import LOCK_NAME, StoreLock, inspect, lock_only_line
from boardsweep.pipeline.store.lock import LEGACY_LOCK_NAME

TAKE_LOCK = ("import os, sys, time; from boardsweep.pipeline.store.lock import StoreLock; "
             "StoreLock(sys.argv[1]).__enter__(); print('locked', flush=True); time.sleep(60)")


def _holder(store) -> subprocess.Popen:
    """A real process that takes the store's lock and keeps it (until killed)."""
    proc = subprocess.Popen([sys.executable, "-c", TAKE_LOCK, str(store)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def _opens_quietly(store) -> None:
    """zarr's group (with and without consolidated metadata) and xarray open the store, warnings as errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for kwargs in ({"use_consolidated": False}, {}):
            members = dict(zarr.open_group(str(store), mode="r", **kwargs).members())
            assert "done" in members and ".boardsweep" in members, sorted(members)
        ds = xr.open_zarr(str(store), consolidated=False)
        assert "done" in ds and not any(name.startswith(".") for name in ds.variables)


def _dead_pid() -> int:
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)


def test_a_store_opens_without_a_warning_while_a_run_holds_it_and_after(tmp_path, write_spec, toy_spec_text,
                                                                       cluster2, capsys):
    spec, store = str(write_spec(toy_spec_text)), tmp_path / "s.zarr"
    assert run_cli("run", spec, "--store", str(store), "--scheduler", cluster2, "-q") == 0
    _opens_quietly(store)
    proc = _holder(store)
    try:
        assert json.loads((store / LOCK_NAME).read_text())["pid"] == proc.pid
        _opens_quietly(store)  # a run holds it
        assert run_cli("run", spec, "--store", str(store), "--scheduler", cluster2, "-q") == 2
        assert f"is in use by pid {proc.pid}" in capsys.readouterr().err
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert (store / LOCK_NAME).exists()
    _opens_quietly(store)  # that run was killed: its lock left
    assert run_cli("run", spec, "--store", str(store), "--scheduler", cluster2, "-q") == 0  # taken over
    assert not (store / LOCK_NAME).exists()
    _opens_quietly(store)


def test_a_stale_lock_of_the_previous_release_is_taken_over_and_removed(tmp_path, write_spec, toy_spec_text,
                                                                        cluster2):
    spec, store = str(write_spec(toy_spec_text)), tmp_path / "s.zarr"
    assert run_cli("run", spec, "--store", str(store), "--scheduler", cluster2, "-q") == 0
    stale = {"pid": _dead_pid(), "host": socket.gethostname(), "since": "2026-01-01T00:00:00+00:00"}
    (store / LEGACY_LOCK_NAME).write_text(json.dumps(stale))
    assert inspect(str(store)) == "boardsweep"
    assert run_cli("run", spec, "--store", str(store), "--scheduler", cluster2, "-q") == 0
    assert not (store / LEGACY_LOCK_NAME).exists() and not (store / LOCK_NAME).exists()
    _opens_quietly(store)


def test_a_live_lock_of_the_previous_release_is_named_and_left(tmp_path):
    store = tmp_path / "s.zarr"
    store.mkdir()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        record = json.dumps({"pid": sleeper.pid, "host": socket.gethostname(), "since": "then"})
        (store / LEGACY_LOCK_NAME).write_text(record)
        with pytest.raises(StoreLocked, match=f"is in use by pid {sleeper.pid} on host .* since then "
                                              f"\\(lock file {store / LEGACY_LOCK_NAME}\\)"):
            StoreLock(str(store)).__enter__()
        assert [p.name for p in store.iterdir()] == [LEGACY_LOCK_NAME]  # ours released, its folder too
        assert (store / LEGACY_LOCK_NAME).read_text() == record
    finally:
        sleeper.kill()
        sleeper.wait(timeout=30)


@pytest.mark.parametrize("name", [LOCK_NAME, LEGACY_LOCK_NAME])
@pytest.mark.parametrize("who", ["gone", "alive", "elsewhere"])
def test_a_folder_holding_only_a_lock_is_read_as_before(tmp_path, name, who):
    """``inspect`` says ``empty`` and :func:`lock_only_line` names the run, wherever its lock is."""
    store = tmp_path / "s.zarr"
    (store / name).parent.mkdir(parents=True)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        pid = {"gone": _dead_pid(), "alive": sleeper.pid, "elsewhere": 7}[who]
        host = "elsewhere" if who == "elsewhere" else socket.gethostname()
        (store / name).write_text(json.dumps({"pid": pid, "host": host, "since": "then"}))
        assert inspect(str(store)) == "empty"
        line = lock_only_line(str(store))
    finally:
        sleeper.kill()
        sleeper.wait(timeout=30)
    assert f"pid {pid} on host {host} since then" in line
    expected = {"gone": "a run was interrupted before it made the store (only its lock is there",
                "alive": "is making the store now, nothing to read yet",
                "elsewhere": f"if it is gone, remove {store / name} and resume"}[who]
    assert expected in line, line


@pytest.mark.parametrize("extra, kind", [("notes.txt", "folder"), (".boardsweep/notes.txt", "leftover")])
def test_a_lock_beside_other_files_is_no_lock_only_folder(tmp_path, extra, kind):
    store = tmp_path / "s.zarr"
    (store / ".boardsweep").mkdir(parents=True)
    (store / LOCK_NAME).write_text(json.dumps({"pid": _dead_pid(), "host": socket.gethostname()}))
    (store / extra).write_text("mine")
    assert lock_only_line(str(store)) is None
    assert inspect(str(store)) == kind


def test_a_killed_lock_holder_leaves_a_folder_read_as_empty(tmp_path):
    store = tmp_path / "s.zarr"
    proc = _holder(store)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert sorted(str(p.relative_to(store)) for p in store.rglob("*")) == [".boardsweep", LOCK_NAME]
    assert inspect(str(store)) == "empty"
    with StoreLock(str(store)) as lock:  # taken over
        assert lock.holder()["pid"] != proc.pid
    assert list(store.iterdir()) == []  # the folder as before any run: nothing of the lock left
