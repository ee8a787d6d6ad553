"""The verdict's family: which grid points, headlines and labels are tested.

Holm's adjustment runs over every test of the family, so its size ``m`` sets
the level each test is taken at (``alpha / m`` at the least).  One rule,
:func:`in_family`, decides whether a headline's label at a grid point is tested:
the verdict applies it to what a store measured
(:mod:`boardsweep.pipeline.analysis.headlines`), the planner to what a spec
will measure, before it runs (:func:`spec_family`), so ``run --dry-run``
states the ``m`` that the run's verdict then uses.

A label is tested when its exact answer is known (finite; not where the
headline's ``exact_unless`` happened) and

* a t test: its standard error is above 0 with ``df >= 1``;
* a 0/1 share per game: always (where its s.e. is 0, every game or none had
  the outcome, and the exact binomial tail tests it);
* a distribution estimated per replicate: also its mean count per replicate
  is at least :data:`MIN_COUNT` (below it the counts are too discrete for a
  normal standard error);
* a distribution over independent games: one chi-square per grid point,
  not one test per label.

From a spec, the exact answer is the game's ``exact`` at the run's last
checkpoint; a distribution's mean count per replicate is that exact answer
where it is in counts (Monopoly's expected counts), else its frequency times
the run shape's units (games x players x turns); its standard error is above
0 where the game's exact CLT variance is, or, without one, where the
frequency is strictly between 0 and 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...core.games import Headline, headlines_of
from .dataset import MIN_COUNT

__all__ = ["in_family", "untestable", "label_tests", "UNTESTABLE_TEXT", "spec_family", "picked_points"]

#: Why a label with an exact answer and a zero spread is not tested, and what would test it.
UNTESTABLE_TEXT = ("not testable at this size: every replicate (or game) had the same value, so there is no "
                   "spread to test the difference with; more replicates or turns would test it")


def in_family(exact: np.ndarray, se: np.ndarray, df: np.ndarray, share: bool = False,
           mean_count: np.ndarray | None = None) -> np.ndarray:
    """Which labels a headline's tests cover (the rule of the module docstring).

    ``share``: a 0/1 outcome per game (tested wherever its exact answer is
    known); ``mean_count``: the mean count per replicate of a distribution
    estimated per replicate (tested only where at least :data:`MIN_COUNT`).
    """
    exact, se, df = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (exact, se, df)))
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(exact)
        if not share:
            ok = ok & (se > 0) & (df >= 1)
        if mean_count is not None:
            ok = ok & (np.asarray(mean_count, dtype=np.float64) >= MIN_COUNT)
    return ok


def untestable(estimate: np.ndarray, exact: np.ndarray, se: np.ndarray, df: np.ndarray, share: bool = False,
               mean_count: np.ndarray | None = None) -> np.ndarray:
    """Labels the family would test but cannot at this size: an exact answer,
    ``df >= 1`` and enough counts, but a spread of exactly 0 (replicates or
    games all equal: ties, decided by :data:`boardsweep.core.stats.ROUNDOFF`)
    and an estimate that is not the exact answer.  ``t = d / 0`` is no
    evidence (with discrete counts ties have positive probability under a
    correct simulator: a tie read as infinite z was a false alarm), so such a
    label is left out of the family and counted in the verdict's words
    (:data:`UNTESTABLE_TEXT`).  A 0/1 share is never untestable (its exact
    binomial test needs no spread); an estimate equal to its exact answer
    (e.g. a location a tally never counts, 0 of 0) has nothing to test.
    """
    if share:
        return np.zeros(np.broadcast(np.asarray(estimate), np.asarray(exact)).shape, dtype=bool)
    from ...core.stats import same_value

    est, exact, se, df = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (estimate, exact, se, df)))
    with np.errstate(invalid="ignore"):
        out = np.isfinite(exact) & np.isfinite(est) & (se == 0) & (df >= 1) & ~same_value(est, exact)
        if mean_count is not None:
            out = out & (np.asarray(mean_count, dtype=np.float64) >= MIN_COUNT)
    return out


def label_tests(estimate: np.ndarray, se: np.ndarray, df: np.ndarray, exact: np.ndarray, share: bool = False,
                successes: np.ndarray | None = None, units: np.ndarray | None = None,
                mean_count: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Every label's test against its exact answer, as the verdict makes it.

    A 0/1 share (``share``, with its ``successes`` of ``units``): the exact
    binomial test (:func:`boardsweep.core.stats.proportion_test`); anything
    else: ``t = (estimate - exact) / se`` with ``df``
    (:func:`boardsweep.core.stats.t_test`).  Returns ``z`` and ``p`` (NaN
    where :func:`in_family` leaves the label out), ``tested`` and
    ``untestable`` (:func:`untestable`), all broadcast together.
    """
    from ...core import stats

    est, se, df, exact = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (estimate, se, df, exact)))
    z, p = stats.proportion_test(successes, units, se, df, exact) if share else stats.t_test(est, se, df, exact)
    keep = in_family(exact, se, df, share, mean_count)
    return {"z": np.where(keep, z, np.nan), "p": np.where(keep, p, np.nan), "tested": keep,
            "untestable": untestable(est, exact, se, df, share, mean_count)}


def picked_points(n: int, most: int | None) -> list[int]:
    """At most ``most`` of ``n`` grid points, evenly spread (first and last included; all where None)."""
    if most is None or n <= most:
        return list(range(n))
    return sorted({int(round(i)) for i in np.linspace(0, n - 1, most)})


def _units(spec) -> int:
    """The run shape's units per replicate: games x players x turns (the product of its counts)."""
    return int(np.prod([int(v) for v in spec.run_shape.values()]))


def _headline_tests(spec, h: Headline, params: dict[str, Any], exact: dict[str, np.ndarray],
                    variance: np.ndarray | None) -> int:
    """How many tests headline ``h`` makes at the grid point with ``params``."""
    if h.exact is None or h.exact not in exact:
        return 0
    ex = np.asarray(exact[h.exact], dtype=np.float64)
    if spec.game.exact_variables[h.exact].dims[:1] == ("checkpoint",):
        ex = ex[-1]
    reps = spec.replicates
    df = reps - 1 if h.basis == "replicates" else reps * _units(spec) - 1
    if h.kind != "distribution":
        if "seat" in spec.game.exact_variables[h.exact].dims and "players" in params:
            ex = ex[: int(params["players"])]  # the seats that play
        return int(in_family(ex, 1.0, df, share=h.squares == h.numerator).sum())
    if h.basis == "units":  # a distribution over games: one chi-square
        return int(bool(ex.size) and bool(np.isfinite(ex).all()))
    total = float(np.nansum(ex))
    ref = ex / total if total > 0 else ex
    count = ref * (total if total > 1 else _units(spec))  # counts, or a frequency times the units
    if variance is not None and variance.shape == ref.shape:
        se = np.sqrt(variance)
    else:
        se = np.where((ref > 0) & (ref < 1), 1.0, 0.0)
    return int(in_family(ref, se, df, mean_count=count).sum())


def _point_tests(spec, params: dict[str, Any]) -> dict[str, int]:
    """Per headline, the tests at one grid point (none where it has no exact answer)."""
    game = spec.game
    reason = game.extras.get("no_exact_reason")
    if game.exact is None or (reason is not None and reason(params)):
        return {}
    checkpoints = np.asarray(spec.checkpoints, dtype=np.int64)[-1:]
    exact = game.exact(params, dict(spec.run_shape), checkpoints)
    hook = game.extras.get("asymptotic_variance")
    variance = None
    if hook is not None:
        try:
            variance = np.asarray(hook(params)["variance"], dtype=np.float64)
        except Exception:  # noqa: BLE001 - no theory here: the frequency decides
            variance = None
    return {h.name: _headline_tests(spec, h, params, exact, variance) for h in headlines_of(game)}


def spec_family(spec, most: int | None = None) -> dict[str, Any]:
    """The verdict's family for a spec's run, decided from the spec alone.

    Parameters
    ----------
    spec : Spec
        The sweep spec.
    most : int, optional
        Grid points whose exact answer is solved, evenly spread; the family
        of the others is taken as theirs on average (all points where None).

    Returns
    -------
    dict
        ``tests``: ``m``, the number of tests the run's verdict makes
        (scaled from the points solved where ``most`` leaves some out, and
        at least 1); ``points``: the grid points; ``solved``: how many were
        solved; ``tested_points``: how many of those are tested;
        ``headlines``: name -> its tests over the points solved.
    """
    points = spec.resolved_points()
    picked = picked_points(len(points), most)
    per_headline: dict[str, int] = {}
    tested_points = 0
    for i in picked:
        found = _point_tests(spec, points[i][1])
        tested_points += any(found.values())
        for name, n in found.items():
            per_headline[name] = per_headline.get(name, 0) + n
    solved = sum(per_headline.values())
    m = solved if len(picked) == len(points) else math.ceil(solved * len(points) / max(len(picked), 1))
    return {"tests": max(1, m), "points": len(points), "solved": len(picked), "tested_points": tested_points,
            "headlines": per_headline}
