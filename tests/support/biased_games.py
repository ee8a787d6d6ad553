"""Real games whose simulators are biased by a small, stated amount.

Each is the real game (same parameters, outputs and exact answers) with its
``simulate`` changed, so the verdict's power is tested on the real kernels:

* ``biased_monopoly``: 1% more counts on JAIL (events raised to match), so
  JAIL's frequency is 1% x (1 - f) too high and every other location's
  ~0.06% too low;
* ``biased_hk_monopoly``: the same, 1% more turns ending on square 6
  ("In Jail/Just Visiting");
* ``biased_shut_the_box``: a fraction q = 0.5% x E[T] of the games of every
  length t is counted as t + 1 rolls (histogram, sums and sums of squares
  consistently), so the mean number of rolls is 0.5% too high;
* ``biased_chutes_ladders``: the simulator plays a board whose ladder
  71 -> 91 ends a square short (``short_ladder_board.toml``), so a game is
  0.6% longer, while the exact answers remain those of the real board.

Tests register them with ``games.register(name, "biased_games:ATTR")``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from boardsweep.core.games import get_game

SHORT_LADDER_BOARD = str(Path(__file__).with_name("short_ladder_board.toml"))
MEAN_BIAS = 0.005
SQUARE_BIAS = 0.01


def _more_on(out: dict, counts: str, total: str, square: int) -> dict:
    c = out[counts].copy()
    extra = np.rint(SQUARE_BIAS * c[:, square]).astype(c.dtype)
    c[:, square] += extra
    return {**out, counts: c, total: out[total] + extra}


def monopoly_simulate(params, seed, run_shape, checkpoints):
    out = get_game("monopoly").simulate(params, seed, run_shape, checkpoints)
    return _more_on(out, "counts", "events", 10)


def hk_simulate(params, seed, run_shape, checkpoints):
    out = get_game("hk_monopoly").simulate(params, seed, run_shape, checkpoints)
    return _more_on(out, "landings", "turns", 5)


def shut_the_box_simulate(params, seed, run_shape, checkpoints):
    real = get_game("shut_the_box")
    out = real.simulate(params, seed, run_shape, checkpoints)
    mean = float(real.exact(params, run_shape, checkpoints)["exact_expected_rolls"])
    q = MEAN_BIAS * mean  # one more roll for a share q of the games: mean + q
    hist = out["hist"]
    moved = np.floor(q * hist[:, :-1]).astype(np.int64)  # the overflow bin stays
    t = np.arange(hist.shape[1] - 1)
    shifted = hist.copy()
    shifted[:, :-1] -= moved
    shifted[:, 1:] += moved
    return {**out, "hist": shifted,
            "rolls_sum": out["rolls_sum"] + moved.sum(1),
            "rolls_sq_sum": out["rolls_sq_sum"] + (moved * (2 * t + 1)).sum(1)}


def chutes_simulate(params, seed, run_shape, checkpoints):
    return get_game("chutes_ladders").simulate({**params, "board": SHORT_LADDER_BOARD}, seed, run_shape,
                                               checkpoints)


MONOPOLY = replace(get_game("monopoly"), name="biased_monopoly", simulate=monopoly_simulate,
                   simulate_batch=None)  # the batch entry point is the unbiased game's
HK_MONOPOLY = replace(get_game("hk_monopoly"), name="biased_hk_monopoly", simulate=hk_simulate,
                      simulate_batch=None)  # the batch entry point is the unbiased game's
SHUT_THE_BOX = replace(get_game("shut_the_box"), name="biased_shut_the_box", simulate=shut_the_box_simulate,
                       simulate_batch=None)
CHUTES_LADDERS = replace(get_game("chutes_ladders"), name="biased_chutes_ladders", simulate=chutes_simulate)
