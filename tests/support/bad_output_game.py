"""Test-only games whose simulator returns an output that breaks the toy
game's declaration at ``dice_sides=3`` (every other cell is the toy game's
own): NaN in an integer output, fractional counts, a wrong shape, a missing
output.  The thing under test is the pipeline's check of every output
against its declaration, not a game."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import toy_game


def _spoil(how):
    def simulate(params, seed, run_shape, checkpoints):
        out = toy_game.simulate(params, seed, run_shape, checkpoints)
        if params["dice_sides"] == 3:
            how(out)
        return out

    return simulate


def _nan(out):
    out["events"] = out["events"].astype(float)
    out["events"][-1] = np.nan


def _fraction(out):
    out["rolls"] = out["rolls"] + 0.5


def _shape(out):
    out["counts"] = out["counts"][:, :-1]


def _missing(out):
    del out["rolls"]


NAN = replace(toy_game.GAME, name="bad_nan", simulate=_spoil(_nan))
FRACTION = replace(toy_game.GAME, name="bad_fraction", simulate=_spoil(_fraction))
SHAPE = replace(toy_game.GAME, name="bad_shape", simulate=_spoil(_shape))
MISSING = replace(toy_game.GAME, name="bad_missing", simulate=_spoil(_missing))


def _flat(params, seed, run_shape, checkpoints):
    out = toy_game.simulate(params, seed, run_shape, checkpoints)
    return {"events": out["events"], "rolls": out["rolls"]}


#: A game with no estimate a standard error exists for: no ratios, no distribution output.
FLAT = replace(toy_game.GAME, name="flat", simulate=_flat,
               variables={k: v for k, v in toy_game.GAME.variables.items() if k != "counts"})
