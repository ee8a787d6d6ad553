"""A test-only game whose kernel calls ``abort()`` at one grid point.

``os.abort()`` kills the worker process running it by SIGABRT (no Python
exception, nothing a ``try`` catches), as a plugin's C or numba code that
calls ``abort()`` or fails an assertion does.  The run on worker processes
must end with a failed task naming the game and the point, not wait for a
worker its nanny restarts again and again.  Everything else is the toy game,
and only ``dice_sides=3, rule="sticky"`` aborts.
"""

from __future__ import annotations

import os
from dataclasses import replace

import toy_game


def simulate(params, seed, run_shape, checkpoints):
    if params["dice_sides"] == 3 and params["rule"] == "sticky":
        os.abort()
    return toy_game.simulate(params, seed, run_shape, checkpoints)


GAME = replace(toy_game.GAME, name="aborting", simulate=simulate)
