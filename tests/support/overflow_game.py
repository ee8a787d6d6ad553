"""Test-only games whose simulator returns integer counts that the stored
int64 cannot hold at ``dice_sides=3`` (every other cell is the toy game's
own): counts above 2^63 (uint64 2^63 + 5, which int64 would wrap to
-9223372036854775803) and uint64's largest value 2^64 - 1 (wrapped: -1).
The thing under test is the pipeline's range check of every value before
it is written, not a game."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import toy_game


def _overflowing(value: int):
    def simulate(params, seed, run_shape, checkpoints):
        out = toy_game.simulate(params, seed, run_shape, checkpoints)
        if params["dice_sides"] == 3:
            out["rolls"] = out["rolls"].astype(np.uint64)
            out["rolls"][-1] = np.uint64(value)
        return out

    return simulate


ABOVE_INT64 = replace(toy_game.GAME, name="overflow_int64", simulate=_overflowing(2**63 + 5))
UINT64_MAX = replace(toy_game.GAME, name="overflow_uint64", simulate=_overflowing(2**64 - 1))
