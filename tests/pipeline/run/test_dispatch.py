"""A kernel that kills its worker process (``abort()``: SIGABRT, nothing a
``try`` catches) on the multi-process embedded cluster: the run ends with the
failed task's line naming the game and the point (each task tried once, not
once per restarted worker until Dask's KilledWorker, and never a wait
without end for a dead worker's result); the other cells are stored."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from clirun import run_cli
from specs import TOY_SPEC

_MAIN = ("import sys; from boardsweep.core import games; games.register('toy', 'toy_game'); "
         "games.register('aborting', 'aborting_game'); "
         "from boardsweep.pipeline.cli.commands import command_line; sys.argv[0] = 'boardsweep'; command_line()")


@pytest.mark.slow
def test_a_kernel_that_aborts_its_worker_process_fails_its_task(tmp_path):
    spec, store = tmp_path / "aborting.toml", tmp_path / "a.zarr"
    spec.write_text(TOY_SPEC.replace('game = "toy"', 'game = "aborting"'))
    env = {**os.environ, "DASK_BOARDSWEEP__PROCESSES": "True"}
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _MAIN, "-q", "run", str(spec), "--store", str(store),
                           "--workers", "2"], capture_output=True, text=True, env=env, timeout=150)
    took = time.monotonic() - t0
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr and "unexpected" not in lines[0], proc.stderr
    line = lines[0]
    assert line.startswith("boardsweep: error: 2 of 12 tasks failed: "), line  # the point's two tasks, no other
    assert "KilledWorker" not in line and "game 'aborting'" in line and "worker process" in line, line
    assert "(at dice_sides=3, rule='sticky' (replicates 0-1), dice_sides=3, rule='sticky' (replicates 2-3))" \
        in line or "(at dice_sides=3, rule='sticky' (replicates 2-3), dice_sides=3, rule='sticky' (replicates 0-1))" \
        in line, line  # one error, said once, at both tasks
    assert took < 60, took  # each task killed one worker, not four
    assert run_cli("-q", "status", str(store)) == 1  # the other cells stored, those of the point missing
