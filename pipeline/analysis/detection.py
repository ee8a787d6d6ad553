"""What the verdict could have missed: per headline, the bias its weakest test
detects with 80% power, from the s.e.s the run estimated.

Each t test of the family of ``m`` is taken at Bonferroni's level
``alpha / m`` (Holm's least; Holm rejects at least as much), two-sided, with
its own df and estimated s.e.; the bias is
:func:`boardsweep.core.power.estimated_detectable_bias`: the power of a run
like this one, averaged over what its estimated s.e. could have been (the
observed s.e. taken as the truth caught the printed bias in 66% of Monopoly
sweeps at four replicates).  A headline's line states its **weakest** test
(the largest such bias) and names it, with the smallest beside it: a median
over labels and points hid the half that see less (a Shut the Box point
needed 50.2 where 7.58 was printed).  Where the weakest bias of a frequency
or share is over 1, no bias can be seen; the line says so and what would see
one: the replicates (or, where turns shrink the error, the turns) at which
the weakest test sees a bias of :data:`SEEN_BIAS`.  A goodness of fit
(chi-square) has no single bias in one unit and is left out; a test with a
zero or missing s.e. too (a share tested exactly where every game or none
had it).  Hall's test of a skewed mean (``skew_t``) has its own power,
:func:`boardsweep.pipeline.analysis.skew.hall_detectable_bias`: the bias it
sees 80% of the time on either side, the weak one (above a right-skewed
mean, whose high estimates come with high s.e.s) setting it; the line states
each side's own bias too ("X above the mean, Y below").

Where a headline's labels are tested by several kinds of test (Monopoly at
R = 2: most z-tested on the exact CLT s.e., a few t-tested with 1 df) the
line has one part per kind (:data:`KIND_WORDS`), so a t test with 1 df does
not say "no bias can be seen" for the z-tested labels.  A t test whose true
s.e. the game knows (``known_se``, the CLT s.e. at a label counting too few
for the z test) states its exact power, :func:`boardsweep.core.power.detectable_bias`
of the true s.e.: the largest of many noisy estimated s.e.s printed 2.0
times the 80% bias at Monopoly's 4 replicates of 1,000 turns.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pandas as pd

from ...core import power as tpower
from ..words import count
from . import skew

__all__ = ["SEEN_BIAS", "SE_TESTS", "KIND_WORDS", "power", "detectable"]

#: The tests (``headlines.tests``' ``test``) whose power is stated, from their s.e.: the t test, the CLT z
#: test, Hall's, and the exact binomial test of a share (its power read as the t test's on its s.e.).
SE_TESTS = ("t", "z", "skew_t", "binomial")

#: How a power line names the labels of one test kind, where a headline's labels are tested by several.
KIND_WORDS = {"t": "t-tested labels", "z": "z-tested labels", "skew_t": "Hall-tested points",
              "binomial": "binomial-tested labels"}

#: The bias (in a frequency's or share's units) that "what would see one" plans for.
SEEN_BIAS = 0.01


def power(table: pd.DataFrame, alpha: float, target: float = tpower.POWER, bounded: frozenset = frozenset(),
          where: Callable[[int], str] | None = None) -> dict[str, Any]:
    """Per headline, the bias its weakest t test detects with probability ``target``.

    Parameters
    ----------
    table : DataFrame
        The verdict's tests (``point``, ``headline``, ``label``, ``test``,
        ``df``, ``se``, optionally ``skew_a``: Hall's ``a`` of a skewed mean's
        test, whose bias is that of its weak side,
        :func:`boardsweep.pipeline.analysis.skew.hall_detectable_bias`, and ``se_df``: the df of the
        s.e.'s own spread, from the games' kurtosis,
        :func:`boardsweep.pipeline.analysis.skew.se_df`); the column ``detectable`` (each test's
        bias, NaN for a chi-square or a zero s.e.) is added to it.
    alpha : float
        Family-wise level; each test is taken at ``alpha / len(table)``.
    bounded : frozenset
        Headlines whose values lie in [0, 1] (frequencies, shares).
    where : callable, optional
        Point index -> words naming it (the weakest test's point).

    Returns
    -------
    dict
        ``power``, ``level``, ``tests``; ``headlines``: name -> ``largest``
        (the weakest test's bias), ``smallest``, ``median``, ``df_min``,
        ``weakest`` (point and label), ``t_tests``, ``visible`` (False where
        ``largest`` is over 1 for a bounded headline) and ``would`` (words:
        what would see a bias); ``few_replicates`` (fewest replicates behind
        a t test where 4 or fewer, else None); ``text``: one line.
    """
    m = len(table)
    out: dict[str, Any] = {"power": target, "level": alpha / m if m else None, "tests": m,
                           "headlines": {}, "few_replicates": None, "text": ""}
    if not m:
        return out
    t_rows = table["test"].isin(SE_TESTS).to_numpy()
    table["detectable"] = detectable(table, alpha / m, target)
    for (name, kind), rows in table[t_rows].groupby(["headline", "test"], sort=False):
        d = rows["detectable"].to_numpy(float)
        if np.isfinite(d).any():  # one line per headline and test kind where its kinds differ
            several = table.loc[t_rows & (table["headline"] == name).to_numpy(), "test"].nunique() > 1
            key = f"{name}, {KIND_WORDS[kind]}" if several else name
            out["headlines"][key] = _headline(rows, d, name in bounded, alpha / m, target, where)
    if not out["headlines"]:
        return out
    few = table.loc[(table["test"] == "t").to_numpy() & (table["df"] <= 3).to_numpy(), "df"]
    out["few_replicates"] = int(few.min()) + 1 if len(few) else None
    out["text"] = _text(out, alpha, target)
    return out


def _headline(rows: pd.DataFrame, d: np.ndarray, bounded: bool, level: float, target: float,
              where: Callable[[int], str] | None) -> dict[str, Any]:
    """One headline's weakest and strongest t test, and what would see a bias where none can be."""
    i = int(np.nanargmax(d))
    weak = rows.iloc[i]
    label = f"{weak['label']} at " if str(weak["label"]) else ""
    found = {"largest": float(d[i]), "smallest": float(np.nanmin(d)), "median": float(np.nanmedian(d)),
             "df_min": float(rows["df"].min()), "t_tests": int(np.isfinite(d).sum()),
             "weakest": label + (where(int(weak["point"])) if where else f"point {int(weak['point'])}"),
             "test": str(weak["test"]),
             "visible": not (bounded and d[i] > 1.0), "would": ""}
    if not found["visible"]:
        found["would"] = _would(float(weak["se"]), float(weak["df"]), level, target)
    if found["test"] == "skew_t":  # Hall's: each side's own 80% bias, the weak side's is the largest
        a = float(weak["skew_a"]) if "skew_a" in rows else 0.0
        found["sides"] = {side: float(skew.hall_detectable_bias(float(weak["se"]), float(weak["df"]), a, level,
                                                                target, side=side))
                          for side in ("above", "below")}
    return found


def _would(se: float, df: float, level: float, target: float) -> str:
    """The replicates at which a test with this s.e. and df sees a bias of :data:`SEEN_BIAS`."""
    if not math.isfinite(df) or df > 10_000:  # a known or pooled per-game s.e.: more of the units help
        times = math.ceil((tpower.estimated_detectable_bias(se, math.inf, level, target) / SEEN_BIAS) ** 2)
        return f"{times}x the {'rolls' if not math.isfinite(df) else 'games'} would see {SEEN_BIAS:g}"
    reps = tpower.replicates_for_bias(se * math.sqrt(df + 1), SEEN_BIAS, level, target)
    return (f"{reps} replicates would see {SEEN_BIAS:g}" if reps else
            f"no number of replicates under 100,000 sees {SEEN_BIAS:g}")


def _text(out: dict[str, Any], alpha: float, target: float) -> str:
    """``power: 80% to see a bias of X in h (weakest: ...)``, then each headline no bias can be seen in."""
    seen, unseen = [], []
    for name, h in out["headlines"].items():
        if h["visible"]:
            spread = f", strongest {h['smallest']:.2g}" if h["t_tests"] > 1 else ""
            side = (f", {h['sides']['above']:.2g} above the mean, {h['sides']['below']:.2g} below"
                    if "sides" in h else "")  # Hall's test: each side's own
            seen.append(f"{h['largest']:.2g} in {name} (weakest: {h['weakest']}{spread}{side})")
        else:
            unseen.append(f"no bias in {name} can be seen at this size ({target:.0%} power needs "
                          f"{h['largest']:.2g}, over 1; {h['would']})")
    parts = ([f"{target:.0%} to see a bias of " + "; ".join(seen)] if seen else []) + unseen
    text = "power: " + "; ".join(parts) + f" (Holm's {alpha:.0%}/{out['tests']}, over the estimated s.e.'s spread)"
    if out["few_replicates"] is not None:
        text += f"; weak: {count(out['few_replicates'], 'replicate')}"
    return text


def detectable(table: pd.DataFrame, level: float, target: float) -> np.ndarray:
    """Per test of ``table`` (:func:`headlines.tests` with ``spread``): the bias
    its t test (or Hall's test) detects with probability ``target`` at
    ``level`` (each test's own level, ``alpha / tests``); NaN for the others.
    A t test whose true s.e. is known (``known_se``: the game's exact CLT
    variance, at a label counting too few for the z test) gets its exact
    power, :func:`boardsweep.core.power.detectable_bias` of the true s.e.: the
    largest of many noisy estimated s.e.s printed 2.0 times the bias with
    80% power (Monopoly, 4 replicates of 1,000 turns)."""
    detect = np.full(len(table), np.nan)
    hall = (table["test"] == "skew_t").to_numpy()
    plain = table["test"].isin(SE_TESTS).to_numpy() & ~hall
    known = np.zeros(len(table), dtype=bool)
    if "known_se" in table:  # a t test whose true s.e. the game knows (exact CLT): its power is exact
        with np.errstate(invalid="ignore"):
            known = plain & (table["test"] == "t").to_numpy() & (table["known_se"].to_numpy(float) > 0)
        detect[known] = tpower.detectable_bias(table.loc[known, "known_se"].to_numpy(float),
                                               table.loc[known, "df"].to_numpy(float), level, target)
        plain = plain & ~known
    if plain.any():
        spread = table.loc[plain, "se_df"].to_numpy(float) if "se_df" in table else None
        detect[plain] = tpower.estimated_detectable_bias(table.loc[plain, "se"].to_numpy(float),
                                                         table.loc[plain, "df"].to_numpy(float), level, target,
                                                         spread)
    if hall.any():  # Hall's test: its own power, the weak side of the skewed mean
        a = table.loc[hall, "skew_a"].to_numpy(float) if "skew_a" in table else np.zeros(int(hall.sum()))
        detect[hall] = skew.hall_detectable_bias(table.loc[hall, "se"].to_numpy(float),
                                                 table.loc[hall, "df"].to_numpy(float), a, level, target)
    return detect
