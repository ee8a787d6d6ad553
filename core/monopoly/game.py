"""Monopoly registered through the game interface (:mod:`boardsweep.core.games`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..games import Deferred, Game, Headline, ParameterError, Variable

from .board import LOCATIONS, US_NAMES, modal_string
from .rules import PARAMS, Rules

__all__ = ["GAME"]

# The kernels (numba), the exact solver and the variance theory (scipy.sparse) are imported
# at a function's first call (:class:`~boardsweep.core.games.Deferred`): a command that reads
# a store asks this module for the labels only.
simulate = Deferred(f"{__package__}.simulate", "simulate")
simulate_batch = Deferred(f"{__package__}.simulate", "simulate_batch")  # many runs, one compiled call per variant
replay = Deferred(f"{__package__}.replay", "replay")
compiled_code = Deferred(f"{__package__}.kernel", "compiled_code")
compile_code = Deferred(f"{__package__}.kernel", "compile_code")
asymptotic_variance_params = Deferred(f"{__package__}.variance", "asymptotic_variance_params")


def exact(params: dict, run_shape: dict, checkpoints: np.ndarray) -> dict[str, np.ndarray]:
    """Exact long-run frequency and expected cumulative counts of a run.

    With independent draws tokens are independent, so a run's expected counts
    are ``games * players`` times one token's.  With shuffled_cycle the answer
    depends on the shuffle (and tokens share the decks): NaN.
    """
    from .exact import expected_counts, long_run_frequency

    rules = Rules.from_params(params)
    cp = np.asarray(checkpoints, dtype=np.int64)
    if rules.shuffled:
        return {
            "exact_frequency": np.full(len(LOCATIONS), np.nan),
            "exact_counts": np.full((cp.size, len(LOCATIONS)), np.nan),
        }
    tokens = run_shape["games"] * run_shape["players"]
    return {
        "exact_frequency": long_run_frequency(rules),
        "exact_counts": tokens * expected_counts(rules, cp)["counts"],
    }


def summarize(params: dict, sim: dict[str, np.ndarray], run_shape: dict) -> dict[str, Any]:
    """What ``boardsweep simulate monopoly`` prints (the last checkpoint)."""
    counts = sim["counts"][-1]
    events = int(sim["events"][-1])
    frequency = counts / max(events, 1)
    return {
        "counts": dict(zip(LOCATIONS, counts.tolist())),
        "frequency": dict(zip(LOCATIONS, frequency.tolist())),
        "events": events,
        "rolls": int(sim["rolls"][-1]),
        "modal": modal_string(frequency),
        "run_shape": dict(run_shape),
    }


def summarize_exact(params: dict) -> dict[str, Any]:
    """What ``boardsweep exact monopoly`` prints."""
    from .exact import long_run_frequency

    rules = Rules.from_params(params)
    if rules.shuffled:
        raise ParameterError(
            "parameter 'deck_policy': 'shuffled_cycle' has no single exact answer (it depends "
            "on the shuffle); expected 'independent'"
        )
    frequency = long_run_frequency(rules)
    return {"frequency": dict(zip(LOCATIONS, frequency.tolist())), "modal": modal_string(frequency)}


MAX_REPLICATE_GAMES = 8


def no_exact_reason(params: dict) -> str | None:
    """Why ``params`` have no single exact answer (None: they have one)."""
    if Rules.from_params(params).shuffled:
        return ("deck_policy=shuffled_cycle: the long-run frequencies depend on the order each "
                "game's decks were shuffled in, which differs from game to game; the exact answer "
                "of the deck orders a replicate played exists (fixed-order chain, about a second "
                f"per game, for runs of at most {MAX_REPLICATE_GAMES} games per replicate)")
    return None


def replicate_exact(params: dict, seed, run_shape: dict) -> dict[str, np.ndarray]:
    """Exact long-run frequency for the decks one replicate actually played.

    With ``shuffled_cycle`` each game of a run plays its own shuffle; this is
    the mean over the run's games of the fixed-order chain's answer (about a
    second per game, so runs of at most MAX_REPLICATE_GAMES games), with
    ``deck_frequency`` (games, 41) the answer of each game's deck order.
    With independent draws it is the ordinary exact answer.
    """
    from .exact import long_run_frequency
    from .simulate import deck_orders

    rules = Rules.from_params(params)
    if not rules.shuffled:
        return {"exact_frequency": long_run_frequency(rules)}
    games = run_shape["games"]
    if games > MAX_REPLICATE_GAMES:
        raise ValueError(
            f"replicate_exact solves one chain per game; {games} games exceed "
            f"{MAX_REPLICATE_GAMES}"
        )
    freqs = [long_run_frequency(rules, deck_orders(rules, seed, g)) for g in range(games)]
    return {"exact_frequency": np.mean(freqs, axis=0), "deck_frequency": np.array(freqs)}


GAME = Game(
    name="monopoly",
    description="Token movement on the 40-square Monopoly board (PE84, Stats 102A)",
    params=PARAMS,
    run_shape={"games": 1, "players": 1, "turns": 100_000},
    checkpoint_of="turns",
    coords={"location": LOCATIONS},
    variables={
        "counts": Variable(
            ("checkpoint", "location"), "int64",
            "counted events per location (what one event is: see tally; "
            "relative frequency = counts / events)",
        ),
        "events": Variable(
            ("checkpoint",), "int64",
            "counted events, all locations (tally=per_roll: dice rolls; per_landing: squares "
            "come to rest on, card squares and their destinations both; per_turn: whole turns)",
        ),
        "rolls": Variable(("checkpoint",), "int64", "dice rolls made (all tallies)"),
    },
    exact_variables={
        "exact_frequency": Variable(
            ("location",), "float64", "exact long-run relative frequency (stationary Markov chain)"
        ),
        "exact_counts": Variable(
            ("checkpoint", "location"), "float64",
            "exact expected cumulative counts of the whole run (all games and tokens)",
        ),
    },
    simulate=simulate,
    simulate_batch=simulate_batch,
    exact=exact,
    summarize=summarize,
    summarize_exact=summarize_exact,
    extras={
        "replay": replay,
        "modal": modal_string,
        "replicate_exact": replicate_exact,
        "asymptotic_variance": asymptotic_variance_params,
        "no_exact_reason": no_exact_reason,
        "compiled_code": compiled_code,
        "compile_code": compile_code,
    },
    label_names={"location": US_NAMES + ("In Jail (held in jail, not just visiting)",)},
    headlines=(
        Headline("frequency", "relative frequency of each location (PE84's long-run question; "
                 "the exact answer at the run's horizon)", "counts", "events",
                 exact="exact_counts", kind="distribution",
                 question="How often, in the long run, does a token end a move on each square of the board?"),
    ),
)
