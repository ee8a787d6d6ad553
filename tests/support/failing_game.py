"""A test-only game whose kernel raises for one parameter value.

The thing under test is the pipeline's handling of a task that raises (the run
names the grid point and the error, the other cells finish and stay valid, the
exit code is non-zero), not a game: no shipped game has a parameter value that
passes validation and then fails in its kernel, so this module wraps the toy
game and raises for ``dice_sides=3`` with ``rule="sticky"``.  Everything else
is the toy game itself, so the other cells equal the toy sweep's bit for bit
(seeds depend on the root seed and parameter values, not on the game's name).
"""

from __future__ import annotations

from dataclasses import replace

import toy_game


class KernelFailure(RuntimeError):
    """What the kernel raises for the poisoned parameter value."""


def simulate(params, seed, run_shape, checkpoints):
    if params["dice_sides"] == 3 and params["rule"] == "sticky":
        raise KernelFailure("the sticky ring cannot use 3-sided dice (test failure)")
    return toy_game.simulate(params, seed, run_shape, checkpoints)


GAME = replace(toy_game.GAME, name="failing", simulate=simulate)
