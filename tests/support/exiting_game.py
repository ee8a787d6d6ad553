"""A test-only game whose kernel leaves by a BaseException for one parameter value.

The pipeline must end the run in one line when a plugin's kernel calls
``sys.exit``, raises ``KeyboardInterrupt`` or another ``BaseException``
subclass (such exceptions pass by ``except Exception`` and used to leave the
run waiting forever).  ``EXITING_HOW`` picks the way out: ``exit`` (the
default, ``sys.exit(3)``), ``interrupt`` or ``base``.  Everything else is the
toy game, and only ``dice_sides=3, rule="sticky"`` leaves.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace

import toy_game


class KernelGaveUp(BaseException):
    """A BaseException subclass of a plugin's own (not an Exception)."""


def simulate(params, seed, run_shape, checkpoints):
    if params["dice_sides"] == 3 and params["rule"] == "sticky":
        how = os.environ.get("EXITING_HOW", "exit")
        if how == "interrupt":
            raise KeyboardInterrupt
        if how == "base":
            raise KernelGaveUp("the kernel gave up (test)")
        sys.exit(3)
    return toy_game.simulate(params, seed, run_shape, checkpoints)


GAME = replace(toy_game.GAME, name="exiting", simulate=simulate)
