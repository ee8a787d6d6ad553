"""Shut the Box (Project Euler 640) registered through :mod:`boardsweep.core.games`.

Sweep axes: ``dice_sides`` (n, cards ``1..2n``, 2..10) and ``policy``
(``optimal``, ``greedy``, ``random``).  Exact answers (and the ``optimal``
policy, which needs the solved table) exist for ``dice_sides <= 8``
(:data:`boardsweep.core.shut_the_box.solve.EXACT_MAX_SIDES`, 4**8 states); greedy and
random play can be simulated up to 10.  The score is the number of rolls ``T``
to turn every card on; ``E[T]`` for optimal play with n = 6 is the PE640
answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..games import Game, Headline, Param, ParameterError, Ratio, Variable
from . import rules, solve
from .simulate import HIST_BINS, simulate_keys, simulate_rolls

__all__ = ["GAME", "QUANTILES"]

QUANTILES = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99)
_ROLL_LABELS = tuple(str(t) for t in range(HIST_BINS - 1)) + (f">={HIST_BINS - 1}",)


def _check_params(params: dict) -> None:
    """``optimal`` play needs the exact solution, which exists for n <= 8."""
    n = params["dice_sides"]
    if params["policy"] == "optimal" and n > solve.EXACT_MAX_SIDES:
        raise ParameterError(
            f"parameter 'dice_sides': {n!r} is not allowed with policy 'optimal'; "
            f"expected an integer <= {solve.EXACT_MAX_SIDES} (exact solution limit)"
        )


def _simulate(
    params: dict, seed: Any, run_shape: dict, checkpoints: np.ndarray
) -> dict[str, np.ndarray]:
    """Cumulative rolls statistics after each checkpoint's number of games."""
    n, policy = params["dice_sides"], params["policy"]
    checkpoints = np.asarray(checkpoints, dtype=np.int64)
    if checkpoints[-1] != run_shape["games"]:
        raise ParameterError(
            f"checkpoints must end at games={run_shape['games']}, got {checkpoints[-1]}"
        )
    table = solve.solve_optimal(n).policy if policy == "optimal" else None
    return simulate_rolls(n, policy, seed, checkpoints, table)


def _simulate_batch(columns: dict, keys: np.ndarray, run_shape: dict,
                    checkpoints: np.ndarray) -> dict[str, np.ndarray]:
    """Many runs at once (:attr:`Game.simulate_batch`): run ``i`` bit for bit
    :func:`_simulate` with the seed whose key is ``keys[i]``; one compiled
    call per distinct ``(dice_sides, policy)`` (the optimal table solved
    once per ``dice_sides``)."""
    checkpoints = np.asarray(checkpoints, dtype=np.int64)
    if checkpoints.size == 0 or checkpoints[-1] != run_shape["games"]:
        raise ParameterError(
            f"checkpoints must end at games={run_shape['games']}, got {checkpoints.tolist()}"
        )
    keys = np.asarray(keys, dtype=np.uint64).reshape(-1, 2)
    (sides, side_of), (policies, policy_of) = columns["dice_sides"], columns["policy"]
    pairs, group = np.unique(np.stack([np.asarray(side_of, dtype=np.int64).reshape(-1),
                                       np.asarray(policy_of, dtype=np.int64).reshape(-1)], axis=1),
                             axis=0, return_inverse=True)
    group = group.reshape(-1)
    out: dict[str, np.ndarray] = {}
    for g, (s, p) in enumerate(pairs.tolist()):
        n, policy, rows = int(sides[s]), str(policies[p]), np.flatnonzero(group == g)
        table = solve.solve_optimal(n).policy if policy == "optimal" else None
        for name, values in simulate_keys(n, policy, keys[rows], checkpoints, table).items():
            if name not in out:
                out[name] = np.zeros((keys.shape[0], *values.shape[1:]), dtype=values.dtype)
            out[name][rows] = values
    return out


def _exact(params: dict, run_shape: dict, checkpoints: np.ndarray) -> dict[str, np.ndarray]:
    """``E[T]``, ``Var[T]`` and ``P(T = t)`` over the histogram bins (NaN if n > 8)."""
    n, policy = params["dice_sides"], params["policy"]
    if n > solve.EXACT_MAX_SIDES:
        nan = np.array(np.nan)
        return {"exact_expected_rolls": nan, "exact_variance_rolls": nan.copy(),
                "exact_pmf": np.full(HIST_BINS, np.nan)}
    mean, var = solve.moments(n, policy)
    return {
        "exact_expected_rolls": np.array(mean[0]),
        "exact_variance_rolls": np.array(var[0]),
        "exact_pmf": solve.binned_pmf(n, policy, HIST_BINS),
    }


def _summarize(params: dict, sim: dict[str, np.ndarray], run_shape: dict) -> dict:
    """Mean rolls with its standard error (from the sample variance) at the last checkpoint."""
    games = int(run_shape["games"])
    total = int(sim["rolls_sum"][-1])
    sq = int(sim["rolls_sq_sum"][-1])
    mean = total / games
    var = (sq - total * total / games) / (games - 1) if games > 1 else float("nan")
    hist = sim["hist"][-1]
    cdf = np.cumsum(hist)
    median_bin = int(np.searchsorted(cdf, (games + 1) // 2))
    return {
        "game": "shut_the_box",
        "dice_sides": params["dice_sides"],
        "policy": params["policy"],
        "games": games,
        "mean_rolls": mean,
        "std_error": float(np.sqrt(var / games)) if games > 1 else float("nan"),
        "std_rolls": float(np.sqrt(var)) if games > 1 else float("nan"),
        "median_rolls": None if median_bin >= HIST_BINS - 1 else median_bin,
        "min_rolls": int(np.argmax(hist > 0)),
        "games_over_histogram": int(hist[-1]),
        "capped_games": int(sim["capped"][-1]),
    }


def _pmf_horizon(n: int, policy: str) -> int:
    """Most rolls to propagate: about 2e9 sparse multiply-adds (seconds), at most 200,000.

    Random play needs ~``4**n`` rolls, so for large n the pmf stops before its
    tail falls below 1e-12; the quantiles it cannot reach are reported as null.
    """
    nnz = solve.policy_chain(n, policy).Q.nnz
    return int(min(200_000, max(4096, 2_000_000_000 // max(nnz, 1))))


def _summarize_exact(params: dict) -> dict:
    """Exact ``E[T]``, ``Var[T]`` and quantiles of the rolls under the policy."""
    n, policy = params["dice_sides"], params["policy"]
    if n > solve.EXACT_MAX_SIDES:
        raise ParameterError(
            f"parameter 'dice_sides': {n!r} has no exact solution; "
            f"expected an integer <= {solve.EXACT_MAX_SIDES}"
        )
    mean, var = solve.moments(n, policy)
    pmf, tail = solve.rolls_pmf(n, policy, max_rolls=_pmf_horizon(n, policy))
    qs = solve.quantiles(pmf, np.array(QUANTILES))
    out = {
        "game": "shut_the_box",
        "dice_sides": n,
        "policy": policy,
        "cards": rules.n_cards(n),
        "states": rules.n_states(n),
        "expected_rolls": float(mean[0]),
        "variance": float(var[0]),
        "std_rolls": float(np.sqrt(var[0])),
        "quantiles": {f"{q:g}": (None if np.isnan(v) else int(v)) for q, v in zip(QUANTILES, qs)},
        "pmf_horizon": int(pmf.shape[0]),
        "pmf_tail_mass": tail,
    }
    if policy == "optimal":
        out["policy_iterations"] = solve.solve_optimal(n).iterations
    return out


GAME = Game(
    name="shut_the_box",
    description="Shut the Box (PE640): rolls of two n-sided dice to turn cards 1..2n on",
    params=(
        Param("dice_sides", 6, "sides of each die; cards 1..2n", minimum=2, maximum=rules.MAX_SIDES),
        Param("policy", "optimal", "which card to toggle", choices=solve.POLICIES),
    ),
    run_shape={"games": 10000},
    checkpoint_of="games",
    coords={"rolls": _ROLL_LABELS},
    variables={
        "rolls_sum": Variable(("checkpoint",), "int64", "sum over games of rolls to finish"),
        "rolls_sq_sum": Variable(("checkpoint",), "int64", "sum over games of squared rolls"),
        "hist": Variable(
            ("checkpoint", "rolls"), "int64",
            "games by rolls to finish (bin t = t rolls; last bin >= 1023)",
        ),
        "capped": Variable(("checkpoint",), "int64", "games stopped at the 2**26-roll guard"),
    },
    exact_variables={
        "exact_expected_rolls": Variable((), "float64", "E[T], rolls to finish"),
        "exact_variance_rolls": Variable((), "float64", "Var[T], rolls to finish"),
        "exact_pmf": Variable(("rolls",), "float64", "P(T = t) per histogram bin"),
    },
    simulate=_simulate,
    simulate_batch=_simulate_batch,
    summarize=_summarize,
    exact=_exact,
    summarize_exact=_summarize_exact,
    check_params=_check_params,
    checked_params=("dice_sides", "policy"),  # what _check_params reads
    extras={"no_exact_reason": lambda params: None if params["dice_sides"] <= solve.EXACT_MAX_SIDES else (
        f"dice_sides={params['dice_sides']}: the exact solver covers dice_sides <= "
        f"{solve.EXACT_MAX_SIDES} (4**n states)")},
    ratios={"mean_rolls": Ratio("rolls_sum", "checkpoint", kind="mean", exact="exact_expected_rolls")},
    headlines=(
        Headline("mean_rolls", "mean number of rolls to turn every card on (PE640: n = 6, optimal play)",
                 "rolls_sum", "checkpoint", "rolls_sq_sum", "exact_expected_rolls",
                 question="How many rolls does it take, on average, to turn every card on?"),
        Headline("rolls_distribution", "distribution of the number of rolls", "hist", "checkpoint",
                 "hist", "exact_pmf", "distribution",
                 question="How likely is each number of rolls to turn every card on?"),
    ),
)
