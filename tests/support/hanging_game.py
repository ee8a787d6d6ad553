"""A test-only game whose kernel never returns for one grid point.

A plugin's kernel that loops forever must not make the run wait forever: the
run ends once the task deadline (Dask's ``boardsweep.task-timeout``) has
passed, naming the task.  Only ``dice_sides=3, rule="sticky"`` hangs, only in
a full-length run (the warm-up's short runs of 4 turns return: the hang lands
in the head start or on a worker), and only while the file named by
``HANGING_WHILE`` exists (a test removes it, and its rerun completes; without
the variable the game is the toy game).  Everything else is the toy game.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace

import toy_game


def _hangs(params, run_shape) -> bool:
    if params["dice_sides"] != 3 or params["rule"] != "sticky" or run_shape["turns"] <= 4:
        return False
    flag = os.environ.get("HANGING_WHILE")
    return flag is not None and os.path.exists(flag)


def simulate(params, seed, run_shape, checkpoints):
    while _hangs(params, run_shape):  # a loop that never ends (it sleeps: the test machine's cores are shared)
        time.sleep(0.02)
    return toy_game.simulate(params, seed, run_shape, checkpoints)


GAME = replace(toy_game.GAME, name="hanging", simulate=simulate)
