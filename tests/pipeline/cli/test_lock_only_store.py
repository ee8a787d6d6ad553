"""A store folder holding only a run's lock (a real run process killed after
taking its lock, before it made the store): ``status``, ``query``,
``report`` and ``digest`` say a run was interrupted before the store was made and how to
resume, exit 1 (not "no sweep store there", exit 2: it is not bad input); a
run making the store now is named as such; the resume it names works."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from clirun import run_cli

TAKE_LOCK = ("import os, sys, time; from boardsweep.pipeline.store.lock import StoreLock; "
             "StoreLock(sys.argv[1]).__enter__(); print('locked', flush=True); "
             "os.kill(os.getpid(), int(sys.argv[2])); time.sleep(60)")


def _lock_holder(store, sig: int) -> subprocess.Popen:
    """A real process that takes the store's lock and then gets ``sig``."""
    proc = subprocess.Popen([sys.executable, "-c", TAKE_LOCK, str(store), str(sig)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def _files(store) -> list[str]:
    """Everything in ``store``, as paths inside it."""
    return sorted(str(p.relative_to(store)) for p in store.rglob("*"))


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("boardsweep: error: "), err
    return err[0]


@pytest.mark.parametrize("command", ["status", "query", "report", "digest"])
def test_an_interrupted_run_is_named_with_its_resume(tmp_path, command, capsys):
    store = tmp_path / "s.zarr"
    proc = _lock_holder(store, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL
    assert run_cli(command, str(store)) == 1
    line = _one_line(capsys)
    assert f"a run was interrupted before it made the store (only its lock is there, pid {proc.pid}" in line
    assert f"resume with `boardsweep run SPEC --store {store}`" in line and "no sweep store there" not in line
    assert _files(store) == [".boardsweep", ".boardsweep/lock"]  # nothing changed


def test_the_resume_it_names_makes_the_store(tmp_path, write_spec, toy_spec_text, cluster2, capsys):
    store = tmp_path / "s.zarr"
    _lock_holder(store, signal.SIGKILL).wait(timeout=30)
    assert run_cli("run", str(write_spec(toy_spec_text)), "--store", str(store), "--scheduler", cluster2,
                   "-q") == 0
    assert run_cli("status", str(store)) == 0


def test_a_run_making_the_store_now_is_not_called_interrupted(tmp_path, capsys):
    store = tmp_path / "s.zarr"
    proc = _lock_holder(store, signal.SIGSTOP)  # alive, holding the lock, its store not made yet
    try:
        assert run_cli("status", str(store)) == 1
        line = _one_line(capsys)
        assert f"a run (pid {proc.pid} on host" in line and "is making the store now" in line
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_an_empty_folder_is_still_no_store(tmp_path, capsys):
    (tmp_path / "s.zarr").mkdir()
    assert run_cli("status", str(tmp_path / "s.zarr")) == 2
    assert "no sweep store there" in _one_line(capsys)


def test_verify_against_an_interrupted_run_names_it(tmp_path, write_spec, toy_spec_text, capsys):
    store = tmp_path / "s.zarr"
    proc = _lock_holder(store, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL
    assert run_cli("verify", str(write_spec(toy_spec_text)), "--against", str(store)) == 1
    line = _one_line(capsys)
    assert f"a run was interrupted before it made the store (only its lock is there, pid {proc.pid}" in line
    assert f"resume with `boardsweep run SPEC --store {store}`" in line
    assert _files(store) == [".boardsweep", ".boardsweep/lock"]  # nothing changed, nothing re-run
