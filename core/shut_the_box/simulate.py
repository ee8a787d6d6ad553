"""Monte Carlo Shut the Box: play ``games`` games under a policy.

Game ``g`` draws from its own xoshiro256** stream, ``boardsweep.core.rng.game_state(key,
g)``: each roll takes two draws (``x`` then ``y``) and the random policy one
more (uniform over the distinct admissible cards).  Results are cumulative
over the first ``k`` games at each checkpoint ``k``:

* ``rolls_sum`` (int64): sum of rolls per game.
* ``rolls_sq_sum`` (int64): sum of squared rolls.  Integers rather than
  float64 so that sums are exact and associative (merging runs or checkpoints
  gives identical bits whatever the order).  One game's square is at most
  ``MAX_ROLLS**2 = 2**52``; the kernel raises OverflowError rather than wrap.
* ``hist`` (int64, :data:`HIST_BINS` = 1024 bins): bin ``t`` counts games of
  exactly ``t`` rolls for ``t < 1023``; bin 1023 counts games of >= 1023
  rolls (overflow).  Fixed, so its shape never depends on the parameters.
  (Optimal and greedy play rarely overflow for n <= 8; the random policy needs
  ~``4**n`` rolls and mostly lands in the overflow bin for n >= 5, where the
  sums still give the exact moments.)
* ``capped`` (int64): games stopped at :data:`MAX_ROLLS` rolls, counted with
  ``MAX_ROLLS`` rolls.  Every policy here ends with probability 1 and the
  cap (67 million rolls, far beyond the ~1.4 million mean of random play at
  n = 10) is only a guard against a game that never ends.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..rng import game_state, randint, seed_key
from . import rules

__all__ = ["HIST_BINS", "MAX_ROLLS", "POLICY_CODES", "simulate_rolls", "simulate_keys"]

HIST_BINS = 1024
MAX_ROLLS = 1 << 26
POLICY_CODES = {"optimal": 0, "greedy": 1, "random": 2}
_INT64_MAX = np.iinfo(np.int64).max


@njit(cache=True, nogil=True)
def _play_one(n, code, table, s_rng):
    """Rolls of one game from the empty box (at most MAX_ROLLS)."""
    goal = (1 << (2 * n)) - 1
    s = 0
    rolls = 0
    while s != goal and rolls < MAX_ROLLS:
        x = randint(s_rng, n) + 1
        y = randint(s_rng, n) + 1
        if code == 0:
            card = np.int64(table[s, (x - 1) * n + (y - 1)])
        elif code == 1:
            card = rules.greedy_card(s, x, y)
        else:
            k = randint(s_rng, 2 if x == y else 3)
            card = x + y if k == 0 else (max(x, y) if k == 1 else min(x, y))
        s ^= 1 << (card - 1)
        rolls += 1
    return rolls


@njit(cache=True, nogil=True)
def _simulate_kernel(n, code, table, key, checkpoints, rolls_sum, rolls_sq_sum, hist, capped):
    """Play ``checkpoints[-1]`` games; write cumulative totals into the ``out`` arrays."""
    state = np.empty(4, np.uint64)
    acc_sum = np.int64(0)
    acc_sq = np.int64(0)
    acc_cap = np.int64(0)
    acc_hist = np.zeros(hist.shape[1], np.int64)
    last = hist.shape[1] - 1
    c = 0
    for g in range(checkpoints[-1]):
        game_state(key, g, state)
        rolls = np.int64(_play_one(n, code, table, state))
        sq = rolls * rolls
        if acc_sq > _INT64_MAX - sq:
            raise OverflowError("rolls_sq_sum would overflow int64")
        acc_sum += rolls
        acc_sq += sq
        acc_hist[min(rolls, last)] += 1
        if rolls >= MAX_ROLLS:
            acc_cap += 1
        if g + 1 == checkpoints[c]:
            rolls_sum[c] = acc_sum
            rolls_sq_sum[c] = acc_sq
            hist[c, :] = acc_hist
            capped[c] = acc_cap
            c += 1


@njit(cache=True, nogil=True)
def _simulate_runs(n, code, table, keys, checkpoints, rolls_sum, rolls_sq_sum, hist, capped):
    """:func:`_simulate_kernel` for each run ``i`` (key ``keys[i]``) into row
    ``i`` of each output, in one compiled call, the lock released."""
    for i in range(keys.shape[0]):
        _simulate_kernel(n, code, table, keys[i], checkpoints, rolls_sum[i], rolls_sq_sum[i], hist[i], capped[i])


def _checked(checkpoints: np.ndarray) -> np.ndarray:
    """``checkpoints`` as int64, or ValueError where they are not strictly increasing game counts >= 1."""
    checkpoints = np.ascontiguousarray(checkpoints, dtype=np.int64)
    if checkpoints.ndim != 1 or checkpoints.size == 0 or checkpoints[0] < 1:
        raise ValueError("checkpoints must be a non-empty 1-d array of positive game counts")
    if np.any(np.diff(checkpoints) <= 0):
        raise ValueError("checkpoints must be strictly increasing")
    return checkpoints


def _policy_table(n: int, policy: str, table: np.ndarray | None) -> np.ndarray:
    """The kernel's table argument: ``table`` (checked) for ``optimal``, else a placeholder."""
    if POLICY_CODES[policy] == 0:
        if table is None or table.shape != (rules.n_states(n), n * n):
            raise ValueError("the optimal policy needs its table of shape (4**n, n**2)")
        return table
    return np.zeros((1, 1), np.int8)


def simulate_keys(n: int, policy: str, keys: np.ndarray, checkpoints: np.ndarray,
                  table: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """:func:`simulate_rolls` for many runs of one ``(n, policy)`` in one
    compiled call: run ``i`` plays from ``keys[i]`` (uint64 (runs, 2),
    :func:`boardsweep.core.rng.seed_key` of its seed), bit for bit as
    ``simulate_rolls`` with that seed.

    Returns
    -------
    dict
        The arrays of :func:`simulate_rolls`, the runs first.
    """
    checkpoints = _checked(checkpoints)
    keys = np.ascontiguousarray(keys, dtype=np.uint64).reshape(-1, 2)
    runs, C = keys.shape[0], checkpoints.shape[0]
    out = {
        "rolls_sum": np.zeros((runs, C), np.int64),
        "rolls_sq_sum": np.zeros((runs, C), np.int64),
        "hist": np.zeros((runs, C, HIST_BINS), np.int64),
        "capped": np.zeros((runs, C), np.int64),
    }
    _simulate_runs(n, POLICY_CODES[policy], _policy_table(n, policy, table), keys, checkpoints,
                   out["rolls_sum"], out["rolls_sq_sum"], out["hist"], out["capped"])
    return out


def simulate_rolls(
    n: int,
    policy: str,
    seed: int | np.random.SeedSequence,
    checkpoints: np.ndarray,
    table: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Play ``checkpoints[-1]`` games of Shut the Box with ``n``-sided dice.

    Parameters
    ----------
    n : int
        Dice sides (cards ``1..2n``).
    policy : {"optimal", "greedy", "random"}
        ``optimal`` needs ``table`` (state x outcome -> card, from
        :func:`boardsweep.core.shut_the_box.solve.solve_optimal`).
    seed : int or SeedSequence
        Run seed; ``boardsweep.core.rng.seed_key(seed)`` keys the per-game streams.
    checkpoints : array of int
        Strictly increasing game counts; the last is the number of games.

    Returns
    -------
    dict
        ``rolls_sum``, ``rolls_sq_sum``, ``capped`` (shape ``(C,)``) and
        ``hist`` (``(C, HIST_BINS)``), all int64 and cumulative.
    """
    checkpoints = _checked(checkpoints)
    code = POLICY_CODES[policy]
    table = _policy_table(n, policy, table)
    C = checkpoints.shape[0]
    out = {
        "rolls_sum": np.zeros(C, np.int64),
        "rolls_sq_sum": np.zeros(C, np.int64),
        "hist": np.zeros((C, HIST_BINS), np.int64),
        "capped": np.zeros(C, np.int64),
    }
    _simulate_kernel(
        n, code, table, seed_key(seed), checkpoints,
        out["rolls_sum"], out["rolls_sq_sum"], out["hist"], out["capped"],
    )
    return out
