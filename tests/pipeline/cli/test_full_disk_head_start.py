"""A disk that fills after the workers' tasks are stored, while the head start
(tasks the warm-up thread simulated in the ``boardsweep`` process, written
last) is written: one line saying the store's disk is full and the run stopped
(as a worker's full disk reads), not "1 of 8 tasks failed: ... Errno 28"."""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import replace

import pytest

from diskfill import fill_disk  # tests/support is on sys.path

import toy_game
from clirun import run_cli
from specs import TOY_SPEC

from boardsweep.core import games

_LAST = [0.0]  # when a worker last simulated




def simulate(params, seed, run_shape, checkpoints):
    """The toy game; in the head start, once the workers have been idle a
    second (their tasks stored), it fills the disk ``FILL_DISK`` names first."""
    path = os.environ.get("FILL_DISK")
    if path and sys._getframe(1).f_code.co_name == "_ahead":  # the warm-up thread's early replicates (issue 44):
        raise RuntimeError("none simulated early")  # left to the head start's tasks, which fill the disk
    if path and run_shape["turns"] > 4:
        if threading.current_thread().name != "boardsweep-warm":
            _LAST[0] = time.monotonic()
        elif not os.path.exists(path):
            t0 = time.monotonic()
            while (not _LAST[0] or time.monotonic() - _LAST[0] < 1.0) and time.monotonic() - t0 < 60:
                time.sleep(0.05)
            try:
                fill_disk(path)
            except OSError:  # the file's own close on the full disk: full, as wanted
                pass
    return toy_game.simulate(params, seed, run_shape, checkpoints)


GAME = replace(toy_game.GAME, name="headfill", simulate=simulate)


@pytest.fixture
def headfill():
    _LAST[0] = 0.0
    games.register("headfill", f"{__name__}:GAME")  # workers are threads of this process: found by name
    yield
    games.GAME_MODULES.pop("headfill", None)


def test_a_full_disk_in_the_head_start_says_the_disk_is_full(tmpfs, monkeypatch, capsys, headfill):
    disk = tmpfs("disk", "4m")
    store = disk / "s.zarr"
    spec = disk.parent / "headfill.toml"
    spec.write_text(TOY_SPEC.replace('game = "toy"', 'game = "headfill"'))
    filler = disk / "filler"
    monkeypatch.setenv("FILL_DISK", str(filler))
    code = run_cli("-q", "run", str(spec), "--store", str(store), "--workers", "2")
    assert filler.exists(), "the head start took no task (the cluster started before the warm-up thread)"
    assert code == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "unexpected" not in err[0] and "tasks failed" not in err[0], err
    assert "the store's disk is full" in err[0] and "No space left on device" in err[0], err
    assert "the run stopped there" in err[0] and "rerun the same command" in err[0], err
    filler.unlink()
    monkeypatch.delenv("FILL_DISK")
    assert run_cli("-q", "run", str(spec), "--store", str(store), "--workers", "2") == 0
    assert run_cli("-q", "status", str(store)) == 0
