"""Monte Carlo simulation of hk_monopoly games (numba).

:func:`simulate_games` owns the seed: it derives the run's key with
:func:`boardsweep.core.rng.seed_key`, and game ``g`` (0-based) of the run plays from
``boardsweep.core.rng.game_state(key, g, state)``, so a game's outcome does not depend on
how many games the run holds.  The private kernel :func:`_kernel` plays the
games with the rule code of :mod:`boardsweep.core.hk_monopoly.rules` and writes
cumulative totals into explicit output arrays at each checkpoint (a count of
games played).

Outputs (first axis ``checkpoint``; ``seat`` has the fixed size
:data:`~boardsweep.core.hk_monopoly.rules.MAX_SEATS` = 6 whatever the number of players,
unused seats stay zero, so a store's shape never depends on ``players``):

========== ======================= ==========================================
name       dims                    meaning (cumulative over the games so far)
========== ======================= ==========================================
wins       checkpoint, seat        games the seat won alone
ties       checkpoint, seat        games the seat shared the win with others
money      checkpoint, seat        sum of final money (a retired seat's money
                                   is its (negative) money at retirement)
retired    checkpoint, seat        games in which the seat retired
properties checkpoint, seat        properties owned at the end of the game
landings   checkpoint, location    turns ending on each location (21: the 20
                                   squares, Just Visiting on the jail square,
                                   then IN_JAIL)
turns      checkpoint              turns played (the sum of ``landings``)
rounds     checkpoint              rounds played
games      checkpoint              games played (= the checkpoints)
========== ======================= ==========================================

Note: numba's ``cache=True`` does not notice edits to functions imported from
other modules; after changing :mod:`boardsweep.core.hk_monopoly.rules`, delete
``core/hk_monopoly/__pycache__`` so that the cached kernel is rebuilt.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .rules import ALIVE, C_PLAYERS, MAX_SEATS, MONEY, play_game, reset_state, winners
from ..rng import game_state, seed_key

__all__ = ["OUTPUTS", "simulate_games", "simulate_runs"]

#: Output names, in the kernel's argument order.
OUTPUTS = ("wins", "ties", "money", "retired", "properties", "landings", "turns", "rounds", "games")


@njit(cache=True, nogil=True)
def _settle(cfg, state, owner, won, wins, ties, money, retired, properties):
    """Add one finished game's outcome to the per-seat accumulators."""
    n_winners = winners(cfg, state, won)
    for p in range(cfg[C_PLAYERS]):
        if won[p] == 1:
            if n_winners == 1:
                wins[p] += 1
            else:
                ties[p] += 1
        money[p] += state[MONEY, p]
        retired[p] += 1 - state[ALIVE, p]
    for sq in range(owner.shape[0]):
        if owner[sq] >= 0:
            properties[owner[sq]] += 1


@njit(cache=True, nogil=True)
def _kernel(key, board, cfg, seats, chance_table, checkpoints,
            wins_out, ties_out, money_out, retired_out, properties_out, landings_out,
            turns_out, rounds_out, games_out):
    """Play ``checkpoints[-1]`` games; write cumulative totals at each checkpoint."""
    n = board.shape[0]
    state = np.zeros((4, MAX_SEATS), dtype=np.int64)
    owner = np.empty(n, dtype=np.int64)
    rng = np.empty(4, dtype=np.uint64)
    won = np.zeros(MAX_SEATS, dtype=np.int64)
    wins = np.zeros(MAX_SEATS, dtype=np.int64)
    ties = np.zeros(MAX_SEATS, dtype=np.int64)
    money = np.zeros(MAX_SEATS, dtype=np.int64)
    retired = np.zeros(MAX_SEATS, dtype=np.int64)
    properties = np.zeros(MAX_SEATS, dtype=np.int64)
    landings = np.zeros(n + 1, dtype=np.int64)
    no_script = np.zeros(0, dtype=np.int64)
    cursor = np.zeros(2, dtype=np.int64)
    rounds = 0
    c = 0
    for g in range(checkpoints[-1]):
        game_state(key, g, rng)
        reset_state(cfg, state, owner)
        rounds += play_game(board, cfg, seats, chance_table, state, owner, landings, rng, False,
                            no_script, no_script, cursor)
        _settle(cfg, state, owner, won, wins, ties, money, retired, properties)
        if g + 1 == checkpoints[c]:
            wins_out[c, :] = wins
            ties_out[c, :] = ties
            money_out[c, :] = money
            retired_out[c, :] = retired
            properties_out[c, :] = properties
            landings_out[c, :] = landings
            turns_out[c] = landings.sum()
            rounds_out[c] = rounds
            games_out[c] = g + 1
            c += 1


@njit(cache=True, nogil=True)
def _kernel_runs(keys, board, cfgs, seats, chance_table, checkpoints,
                 wins_out, ties_out, money_out, retired_out, properties_out, landings_out,
                 turns_out, rounds_out, games_out):
    """:func:`_kernel` for each run ``i`` (key ``keys[i]``, rules ``cfgs[i]``,
    strategies ``seats[i]``) into row ``i`` of each output, the lock released."""
    for i in range(keys.shape[0]):
        _kernel(keys[i], board, cfgs[i], seats[i], chance_table, checkpoints,
                wins_out[i], ties_out[i], money_out[i], retired_out[i], properties_out[i], landings_out[i],
                turns_out[i], rounds_out[i], games_out[i])


def _check_checkpoints(checkpoints: np.ndarray) -> np.ndarray:
    checkpoints = np.asarray(checkpoints, dtype=np.int64).reshape(-1)
    if checkpoints.size == 0 or checkpoints[0] < 1 or np.any(np.diff(checkpoints) <= 0):
        raise ValueError("checkpoints must be a non-empty strictly increasing array of game counts >= 1")
    return checkpoints


def simulate_games(
    board: np.ndarray,
    cfg: np.ndarray,
    seats: np.ndarray,
    chance_table: np.ndarray,
    seed: int | np.random.SeedSequence,
    checkpoints: np.ndarray,
) -> dict[str, np.ndarray]:
    """Play ``checkpoints[-1]`` games and return cumulative totals at each checkpoint.

    Parameters
    ----------
    board : ndarray
        int64 (squares, 3) board table (kind, price, rent), see :mod:`.board`.
    cfg : ndarray
        Rule configuration from :func:`boardsweep.core.hk_monopoly.rules.make_cfg`.
    seats : ndarray
        int64 (6, 2): buy reserve (-1 never) and jail strategy (0 short, 1 long).
    chance_table : ndarray
        int64 Chance amounts, each drawn with equal probability.
    seed : int or numpy.random.SeedSequence
        The run's seed; the same seed gives the same arrays, bit for bit.
    checkpoints : ndarray
        Strictly increasing game counts; the last is the number of games.

    Returns
    -------
    dict of ndarray
        The arrays listed in the module docstring (:data:`OUTPUTS`).
    """
    checkpoints = _check_checkpoints(checkpoints)
    k = checkpoints.size
    n_loc = board.shape[0] + 1
    out = {
        "wins": np.zeros((k, MAX_SEATS), np.int64),
        "ties": np.zeros((k, MAX_SEATS), np.int64),
        "money": np.zeros((k, MAX_SEATS), np.int64),
        "retired": np.zeros((k, MAX_SEATS), np.int64),
        "properties": np.zeros((k, MAX_SEATS), np.int64),
        "landings": np.zeros((k, n_loc), np.int64),
        "turns": np.zeros(k, np.int64),
        "rounds": np.zeros(k, np.int64),
        "games": np.zeros(k, np.int64),
    }
    _kernel(
        seed_key(seed),
        np.ascontiguousarray(board, dtype=np.int64),
        np.ascontiguousarray(cfg, dtype=np.int64),
        np.ascontiguousarray(seats, dtype=np.int64),
        np.ascontiguousarray(chance_table, dtype=np.int64),
        checkpoints,
        *(out[name] for name in OUTPUTS),
    )
    return out


def simulate_runs(board: np.ndarray, cfgs: np.ndarray, seats: np.ndarray, chance_table: np.ndarray,
                  keys: np.ndarray, checkpoints: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`simulate_games` for many runs on one board and Chance table in
    one compiled call: run ``i`` plays with ``cfgs[i]`` (runs, C_SIZE),
    ``seats[i]`` (runs, 6, 2) and the key ``keys[i]`` (uint64 (runs, 2),
    :func:`boardsweep.core.rng.seed_key` of its seed), bit for bit as
    ``simulate_games`` with that seed.

    Returns
    -------
    dict of ndarray
        The arrays of :data:`OUTPUTS`, the runs first.
    """
    checkpoints = _check_checkpoints(checkpoints)
    n, k, n_loc = keys.shape[0], checkpoints.size, board.shape[0] + 1
    out = {name: np.zeros((n, k, MAX_SEATS), np.int64) for name in OUTPUTS[:5]}
    out["landings"] = np.zeros((n, k, n_loc), np.int64)
    out.update({name: np.zeros((n, k), np.int64) for name in OUTPUTS[6:]})
    _kernel_runs(np.ascontiguousarray(keys, dtype=np.uint64), np.ascontiguousarray(board, dtype=np.int64),
                 np.ascontiguousarray(cfgs, dtype=np.int64), np.ascontiguousarray(seats, dtype=np.int64),
                 np.ascontiguousarray(chance_table, dtype=np.int64), checkpoints,
                 *(out[name] for name in OUTPUTS))
    return out
