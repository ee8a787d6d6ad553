"""Monte Carlo: several players take turns spinning; the first to reach the
last square wins.  A numba kernel, one xoshiro256** stream per game
(:mod:`boardsweep.core.rng`), so results do not depend on how games are split
into runs or checkpoints.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boardsweep.core.rng import game_state, randint, seed_key

__all__ = ["HIST_BINS", "MAX_ROUNDS", "MAX_SEATS", "simulate_games"]

#: Game-length histogram bins: bin r holds games of r rounds, the last >= HIST_BINS - 1.
HIST_BINS = 512
#: Guard against boards a token can never finish: a game stops after this many rounds.
MAX_ROUNDS = 1 << 22
#: Size of the fixed ``seat`` dimension.
MAX_SEATS = 8


@njit(cache=True, nogil=True)
def _play_one(table, players, state, pos):
    """Play one game; return (rounds, winning seat or -1 if stopped by the guard)."""
    goal = table.shape[0] - 1
    sides = table.shape[1]
    pos[:] = 0
    for r in range(1, MAX_ROUNDS + 1):
        for seat in range(players):
            pos[seat] = table[pos[seat], randint(state, sides)]
            if pos[seat] == goal:
                return r, seat
    return MAX_ROUNDS, -1


@njit(cache=True, nogil=True)
def _kernel(table, players, key, checkpoints, rounds_sum, rounds_sq_sum, hist, wins, capped):
    state = np.empty(4, np.uint64)
    pos = np.zeros(players, np.int64)
    acc_sum = np.int64(0)
    acc_sq = np.int64(0)
    acc_cap = np.int64(0)
    acc_hist = np.zeros(hist.shape[1], np.int64)
    acc_wins = np.zeros(wins.shape[1], np.int64)
    last = hist.shape[1] - 1
    c = 0
    for g in range(checkpoints[-1]):
        game_state(key, g, state)
        rounds, winner = _play_one(table, players, state, pos)
        acc_sum += rounds
        acc_sq += np.int64(rounds) * rounds
        acc_hist[min(rounds, last)] += 1
        if winner < 0:
            acc_cap += 1
        else:
            acc_wins[winner] += 1
        if g + 1 == checkpoints[c]:
            rounds_sum[c] = acc_sum
            rounds_sq_sum[c] = acc_sq
            hist[c, :] = acc_hist
            wins[c, :] = acc_wins
            capped[c] = acc_cap
            c += 1


def simulate_games(
    table: np.ndarray, players: int, seed: int | np.random.SeedSequence, checkpoints: np.ndarray
) -> dict[str, np.ndarray]:
    """Play ``checkpoints[-1]`` games with the move table ``table`` (squares x spins).

    Returns cumulative int64 arrays at each checkpoint: ``rounds_sum``,
    ``rounds_sq_sum``, ``capped`` (C,), ``hist`` (C, HIST_BINS) game lengths in
    rounds, ``wins`` (C, MAX_SEATS) games won per seat.
    """
    checkpoints = np.ascontiguousarray(checkpoints, dtype=np.int64)
    if checkpoints.ndim != 1 or checkpoints.size == 0 or checkpoints[0] < 1 or np.any(np.diff(checkpoints) <= 0):
        raise ValueError("checkpoints must be a strictly increasing 1-d array of positive game counts")
    if not 1 <= players <= MAX_SEATS:
        raise ValueError(f"players must be in 1..{MAX_SEATS}")
    C = checkpoints.shape[0]
    out = {
        "hist": np.zeros((C, HIST_BINS), np.int64),
        "wins": np.zeros((C, MAX_SEATS), np.int64),
        "rounds_sum": np.zeros(C, np.int64),
        "rounds_sq_sum": np.zeros(C, np.int64),
        "capped": np.zeros(C, np.int64),
    }
    _kernel(np.ascontiguousarray(table, np.int64), players, seed_key(seed), checkpoints,
            out["rounds_sum"], out["rounds_sq_sum"], out["hist"], out["wins"], out["capped"])
    return out
