"""The head start (tasks the warm-up thread simulated in the ``boardsweep``
process) is written while the workers run their tasks; it stops at its first task that
cannot write for a full disk, as a worker's task does: the run ends with the
disk-full line there, and no later head task is written, even where space
came back meanwhile (the failure callback frees it here)."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace

import pytest

from diskfill import fill_disk  # tests/support is on sys.path

import toy_game
from specs import TOY_SPEC

from boardsweep.core import games
from boardsweep.pipeline.errors import StoreFull
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.run.startup import WarmUp
from boardsweep.pipeline.spec.parse import load_spec
from boardsweep.pipeline.store import read_done

_STATE = {"last": 0.0, "head": 0}  # when a worker last simulated; replicates the head start simulated




def simulate(params, seed, run_shape, checkpoints):
    """The toy game; the head start's second task (its third replicate: a
    task is 2) waits until the workers have been idle a second (their tasks
    stored), then fills the disk that ``FILL_DISK`` names."""
    if run_shape["turns"] > 4:
        if threading.current_thread().name != "boardsweep-warm":
            _STATE["last"] = time.monotonic()
        else:
            _STATE["head"] += 1
            if _STATE["head"] == 3:
                t0 = time.monotonic()
                while (not _STATE["last"] or time.monotonic() - _STATE["last"] < 1.0) and time.monotonic() - t0 < 60:
                    time.sleep(0.05)
                fill_disk(os.environ["FILL_DISK"])
    return toy_game.simulate(params, seed, run_shape, checkpoints)


GAME = replace(toy_game.GAME, name="headfill2", simulate=simulate)


@pytest.fixture
def headfill2(monkeypatch, tmpfs):
    disk = tmpfs("disk", "4m")
    monkeypatch.setenv("FILL_DISK", str(disk / "filler"))
    _STATE.update(last=0.0, head=0)
    games.register("headfill2", f"{__name__}:GAME")  # workers are threads of this process: found by name
    yield disk
    games.GAME_MODULES.pop("headfill2", None)


def test_the_head_start_stops_at_its_first_full_disk_write(headfill2, tmp_path):
    spec_path = tmp_path / "headfill2.toml"
    spec_path.write_text(TOY_SPEC.replace('game = "toy"', 'game = "headfill2"'))
    spec, store, told = load_spec(spec_path), str(headfill2 / "s.zarr"), []

    def on_failure(line: str) -> None:  # space comes back: a head start that goes on would write its next task
        told.append(line)
        (headfill2 / "filler").unlink(missing_ok=True)

    with pytest.raises(StoreFull) as raised:
        run_sweep(spec, store, workers=2, warming=WarmUp(spec), on_failure=on_failure)
    assert _STATE["head"] == 4, "the head start took one task (the cluster started before its second)"
    line = str(raised.value)
    assert "No space left on device" in line and "the run stopped there" in line, line
    assert "dice_sides=3, rule='sticky'" in line, line  # the last task, the first the head start took
    assert not any("the run goes on" in t for t in told), told
    done = read_done(store)
    assert done.sum() == done.size - 2 * 2  # the workers' 6 tasks of 2 replicates; neither head task


_WRITTEN = threading.Event()  # the head start's first task written
_SEEN: list[bool] = []  # whether the workers' first replicate found it written (waiting at most 10 s)
_HEAD: list[int] = []  # replicates the head start simulated


def simulate_slow_head(params, seed, run_shape, checkpoints):
    """The toy game; the head start's replicates take 0.2 s each (it takes a
    few tasks while the cluster starts, not all), and the workers' first one
    waits for the head start's first task to be written."""
    if run_shape["turns"] > 4:
        if threading.current_thread().name == "boardsweep-warm":
            _HEAD.append(1)
            time.sleep(0.2)
        elif not _SEEN:
            _SEEN.append(_WRITTEN.wait(10))
    return toy_game.simulate(params, seed, run_shape, checkpoints)


SLOW_HEAD = replace(toy_game.GAME, name="slowhead", simulate=simulate_slow_head)


def test_the_head_start_is_written_while_the_workers_run_their_tasks(tmp_path, monkeypatch):
    """The head start's tasks were written after the workers' last: on the
    run's critical path, while this process had nothing else to do."""
    from boardsweep.pipeline.run import head

    store_task = head.store_task

    def written(*args, **kwargs):
        record = store_task(*args, **kwargs)
        _WRITTEN.set()
        return record

    monkeypatch.setattr(head, "store_task", written)
    _WRITTEN.clear(), _SEEN.clear(), _HEAD.clear()
    games.register("slowhead", f"{__name__}:SLOW_HEAD")
    try:
        spec_path = tmp_path / "slowhead.toml"
        spec_path.write_text(TOY_SPEC.replace('game = "toy"', 'game = "slowhead"'))
        spec = load_spec(spec_path)
        report = run_sweep(spec, str(tmp_path / "s.zarr"), workers=2, warming=WarmUp(spec))
    finally:
        games.GAME_MODULES.pop("slowhead", None)
    assert 0 < report.head_start < report.tasks_total and _HEAD, (report.head_start, report.tasks_total)
    assert _SEEN == [True] or _SEEN == [True, True], _SEEN
    assert report.complete and read_done(str(tmp_path / "s.zarr")).all()
