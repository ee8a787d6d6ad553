"""Chutes and Ladders registered with boardsweep (entry point ``chutes_ladders``).

Parameters
----------
sides : int, 2..50 (default 6)
    The spinner shows 1..sides, each equally likely.
overshoot : str (default ``stay``)
    A spin past the last square: ``stay`` (the token is not moved; exact
    landing), ``bounce`` (it counts back from the last square) or ``any``
    (it finishes).
players : int, 1..8 (default 1)
    Players taking turns in seats P1..Pn (P1 spins first); the first to reach
    the last square wins.
board : str (default ``milton_bradley``)
    The shipped Milton Bradley board or the path of a TOML board file with
    the same keys (see ``milton_bradley.toml``).

Run shape: ``games`` (default 10000); checkpoints count games.  Outputs: the
histogram of game length in rounds (``hist``), games won per seat (``wins``)
and sums of rounds; exact: the pmf of rounds, win shares, ``E[rounds]`` and
the one-player expected number of spins.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boardsweep.core.games import Game, Headline, Param, Ratio, Variable
from boardsweep.core.shut_the_box.solve import quantiles
from chutes_ladders import exact
from chutes_ladders.board import DEFAULT, OVERSHOOT, load_board, move_table
from chutes_ladders.simulate import HIST_BINS, MAX_SEATS, simulate_games

__all__ = ["GAME", "QUANTILES"]

QUANTILES = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99)
SEATS = tuple(f"P{i + 1}" for i in range(MAX_SEATS))
ROUNDS = tuple(str(r) for r in range(HIST_BINS - 1)) + (f">={HIST_BINS - 1}",)
#: The pmf that ``boardsweep exact`` prints stops where P(rounds > r) < PMF_TAIL.
PMF_TAIL = 1e-9


def _check_board(value: str) -> str:
    load_board(value)
    return value


def _key(params: dict) -> tuple[str, int, str]:
    return params["board"], params["sides"], params["overshoot"]


def _simulate(params: dict, seed: Any, run_shape: dict, checkpoints: np.ndarray) -> dict[str, np.ndarray]:
    table = move_table(load_board(params["board"]), params["sides"], params["overshoot"])
    return simulate_games(table, params["players"], seed, checkpoints)


def _binned_pmf(params: dict) -> np.ndarray:
    pmf = exact.rounds_pmf(*_key(params), params["players"])
    out = np.zeros(HIST_BINS)
    head = pmf[: HIST_BINS - 1]
    out[: head.shape[0]] = head
    out[-1] = max(1.0 - head.sum(), 0.0)
    return out


def _exact(params: dict, run_shape: dict | None = None, checkpoints: Any = None) -> dict[str, np.ndarray]:
    players = params["players"]
    shares = np.zeros(MAX_SEATS)
    shares[:players] = exact.win_shares(*_key(params), players)
    return {
        "exact_length_pmf": _binned_pmf(params),
        "exact_win_share": shares,
        "exact_expected_rounds": np.array(exact.expected_rounds(*_key(params), players)),
        "exact_expected_spins": np.array(exact.expected_spins(*_key(params))),
    }


def _summarize(params: dict, sim: dict[str, np.ndarray], run_shape: dict) -> dict[str, Any]:
    games, players = int(run_shape["games"]), params["players"]
    total, sq = int(sim["rounds_sum"][-1]), int(sim["rounds_sq_sum"][-1])
    mean = total / games
    var = (sq - total * total / games) / (games - 1) if games > 1 else float("nan")
    cdf = np.cumsum(sim["hist"][-1])
    return {
        "game": "chutes_ladders",
        **params,
        "games": games,
        "mean_rounds": mean,
        "std_error": float(np.sqrt(var / games)) if games > 1 else float("nan"),
        "median_rounds": int(np.searchsorted(cdf, (games + 1) // 2)),
        "win_share": {SEATS[i]: int(sim["wins"][-1][i]) / games for i in range(players)},
        "capped_games": int(sim["capped"][-1]),
    }


def _summarize_exact(params: dict) -> dict[str, Any]:
    players = params["players"]
    pmf = exact.rounds_pmf(*_key(params), players)
    tail = 1.0 - np.cumsum(pmf)
    shown = pmf[: int(np.argmax(tail < PMF_TAIL)) + 1]
    return {
        "game": "chutes_ladders",
        **params,
        "expected_spins_one_player": exact.expected_spins(*_key(params)),
        "expected_rounds": exact.expected_rounds(*_key(params), players),
        "quantiles": {f"{q:g}": int(v) for q, v in zip(QUANTILES, quantiles(pmf, np.array(QUANTILES)))},
        "win_share": dict(zip(SEATS, exact.win_shares(*_key(params), players).tolist())),
        "pmf": {str(r): float(p) for r, p in enumerate(shown) if r > 0},
        "pmf_tail": PMF_TAIL,
    }


_C = ("checkpoint",)
GAME = Game(
    name="chutes_ladders",
    description="Chutes and Ladders (Milton Bradley board or your own): rounds to finish, win share per seat",
    params=(
        Param("sides", 6, "the spinner shows 1..sides", minimum=2, maximum=50),
        Param("overshoot", "stay", "a spin past the last square: stay | bounce | any", choices=OVERSHOOT),
        Param("players", 1, "players taking turns (seats P1..Pn)", minimum=1, maximum=MAX_SEATS),
        Param("board", DEFAULT, f"board file (TOML) or {DEFAULT!r}", check=_check_board),
    ),
    run_shape={"games": 10000},
    checkpoint_of="games",
    coords={"rounds": ROUNDS, "seat": SEATS},
    variables={
        "hist": Variable(("checkpoint", "rounds"), "int64", f"games by length in rounds (last bin >= {HIST_BINS - 1})"),
        "wins": Variable(("checkpoint", "seat"), "int64", "games won by the seat"),
        "rounds_sum": Variable(_C, "int64", "sum over games of rounds played"),
        "rounds_sq_sum": Variable(_C, "int64", "sum over games of squared rounds"),
        "capped": Variable(_C, "int64", "games stopped by the round guard (no winner)"),
    },
    exact_variables={
        "exact_length_pmf": Variable(("rounds",), "float64", "P(rounds = r) per histogram bin"),
        "exact_win_share": Variable(("seat",), "float64", "P(the seat wins)"),
        "exact_expected_rounds": Variable((), "float64", "E[rounds]"),
        "exact_expected_spins": Variable((), "float64", "E[spins] of one player alone"),
    },
    simulate=_simulate,
    summarize=_summarize,
    exact=_exact,
    summarize_exact=_summarize_exact,
    ratios={
        "win_share": Ratio("wins", "checkpoint", exact="exact_win_share"),
        "mean_rounds": Ratio("rounds_sum", "checkpoint", kind="mean", exact="exact_expected_rounds"),
    },
    headlines=(
        Headline("mean_rounds", "mean rounds to finish (one player: the expected number of spins)", "rounds_sum", "checkpoint", "rounds_sq_sum", "exact_expected_rounds"),
        Headline("win_share", "share of games the seat wins", "wins", "checkpoint", "wins", "exact_win_share"),
        Headline("length_distribution", "distribution of the game length in rounds", "hist", "checkpoint",
                 "hist", "exact_length_pmf", "distribution"),
    ),
)
