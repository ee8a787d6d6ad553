"""A tiny game for pipeline tests: two dice move a token round a ring.

It follows the same contract as the real games (``boardsweep.core.games.Game``) but runs
in microseconds with plain numpy, so the pipeline tests stay fast and do not
depend on any real game being installed.
"""

from __future__ import annotations

import os
import time

import numpy as np

from boardsweep.core.games import Game, Param, ParameterError, Variable


def _labels(params: dict) -> dict[str, tuple[str, ...]]:
    return {"location": tuple(f"S{i}" for i in range(params["size"]))}


def _delay() -> float:
    """``TOY_DELAY_S`` seconds per replicate; with ``TOY_DELAY_WHILE`` (a file), only while
    that file exists: a test that has made its fault removes it, and the run ends at full speed."""
    flag = os.environ.get("TOY_DELAY_WHILE")
    if flag and not os.path.exists(flag):
        return 0.0
    return float(os.environ.get("TOY_DELAY_S", "0"))


def simulate(params, seed, run_shape, checkpoints):
    time.sleep(_delay())  # lets tests interrupt a run
    rng = np.random.default_rng(seed)
    n, size = params["dice_sides"], params["size"]
    games, turns = run_shape["games"], run_shape["turns"]
    steps = rng.integers(1, n + 1, (games, turns)) + rng.integers(1, n + 1, (games, turns))
    if params["rule"] == "sticky":
        steps = np.where(rng.random((games, turns)) < 0.25, 0, steps)
    pos = np.cumsum(steps, axis=1) % size
    counts = np.zeros((len(checkpoints), size), np.int64)
    for i, c in enumerate(checkpoints):
        counts[i] = np.bincount(pos[:, :c].ravel(), minlength=size)
    events = np.asarray(checkpoints, np.int64) * games
    return {"counts": counts, "events": events, "rolls": events.copy()}


def exact(params, run_shape, checkpoints):
    size = params["size"]
    freq = np.full(size, 1.0 / size)
    if params["rule"] == "sticky":
        freq[:] = np.nan
    return {"exact_frequency": freq}


def summarize(params, sim, run_shape):
    return {"counts": sim["counts"][-1]}


def _check(full: dict) -> None:
    if full["rule"] == "forbidden":
        raise ParameterError("parameter 'rule': 'forbidden' is never allowed")


GAME = Game(
    name="toy",
    description="A token on a ring, moved by two dice (test game).",
    params=(
        Param("dice_sides", 6, "sides per die", minimum=2),
        Param("rule", "plain", "movement rule", choices=("plain", "sticky", "forbidden")),
        Param("size", 8, "squares on the ring", minimum=3),
    ),
    run_shape={"games": 2, "turns": 50},
    checkpoint_of="turns",
    coords={"location": tuple(f"S{i}" for i in range(8))},
    variables={
        "counts": Variable(("checkpoint", "location"), "int64", "cumulative landings"),
        "events": Variable(("checkpoint",), "int64", "counted landings"),
        "rolls": Variable(("checkpoint",), "int64", "dice rolls"),
    },
    exact_variables={"exact_frequency": Variable(("location",), "float64", "uniform")},
    simulate=simulate,
    exact=exact,
    summarize=summarize,
    check_params=_check,
    coords_fn=_labels,
)
