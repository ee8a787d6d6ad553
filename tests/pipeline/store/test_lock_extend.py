"""``--extend`` against a store another process's run is writing: refused by the lock, every time.

The first process runs a sweep slowly on a multi-process embedded cluster
(``DASK_BOARDSWEEP__PROCESSES=True``) and holds the store's lock; the second
asks to grow the store with ``--extend`` at different moments of that run:
as it grows the store itself (the first run is an ``--extend`` too), while
its tasks write, and as it ends.  Every answer must be the lock's one line
naming the holder, and the store must end as the first run made it.
Before, the second run decided on what it read before taking the lock: a
store caught mid-growth was refused as "being grown to another spec
(interrupted)", and its decisions were not made again once the lock was
held.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from specs import spec_toml

from boardsweep.pipeline.store import LOCK_NAME
from boardsweep.pipeline.store.open import load_sweep

_TOY_MAIN = ("import sys; from boardsweep.core import games; games.register('toy', 'toy_game'); "
             "from boardsweep.pipeline.cli.commands import command_line; sys.argv[0] = 'boardsweep'; command_line()")


def _spec(sides: list[int]) -> str:
    return spec_toml("toy", params={"size": 8}, grid={"dice_sides": sides, "rule": ["plain", "sticky"]},
                     run={"replicates": 4, "games": 2, "turns": 60}, checkpoints={"count": 5},
                     tasks={"replicates_per_task": 1})


def _cli(*args: str, env: dict | None = None, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _TOY_MAIN, "-q", *args], env={**os.environ, **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _wait_for_lock(store: Path, proc: subprocess.Popen, timeout: float = 60) -> None:
    lock = store / LOCK_NAME
    end = time.monotonic() + timeout
    while not (lock.exists() and lock.stat().st_size):
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < end, "the first run never took the lock"
        time.sleep(0.01)


@pytest.mark.slow
@pytest.mark.parametrize("moment", [0.0, 0.5, 2.0])
@pytest.mark.parametrize("asked", [[2, 3, 5], [2, 3, 4, 6, 7, 8, 9]], ids=["growth-of-the-old", "growth-of-the-new"])
def test_extend_is_refused_while_another_process_writes(tmp_path, moment, asked):
    small, grown, other = tmp_path / "small.toml", tmp_path / "grown.toml", tmp_path / "other.toml"
    small.write_text(_spec([2, 3]))
    grown.write_text(_spec([2, 3, 4, 6, 7, 8]))
    other.write_text(_spec(asked))  # a growth of the small store only, or of the grown one too
    store = tmp_path / "s.zarr"
    made = _cli("run", str(small), "--store", str(store), "--workers", "1")
    assert made.wait(timeout=120) == 0, made.communicate()[1][-2000:]
    first = _cli("run", str(grown), "--store", str(store), "--extend", "--workers", "2",
                 env={"DASK_BOARDSWEEP__PROCESSES": "True", "TOY_DELAY_S": "0.2"})
    try:
        _wait_for_lock(store, first)
        time.sleep(moment)
        assert first.poll() is None, "the first run ended before the second asked"
        second = _cli("run", str(other), "--store", str(store), "--extend", "--workers", "1")
        _, err = second.communicate(timeout=120)
        assert first.poll() is None, "the first run ended before the second was answered"
    finally:
        _, first_err = first.communicate(timeout=120)
    lines = err.strip().splitlines()
    assert second.returncode == 2, err[-2000:]
    assert len(lines) == 1 and "is in use by pid" in lines[0] and str(first.pid) in lines[0], lines
    assert first.returncode == 0, first_err[-2000:]
    final = load_sweep(str(store))
    assert list(final["dice_sides"].values) == [2, 3, 4, 6, 7, 8] and bool(final["done"].all())
