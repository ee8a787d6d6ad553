"""Which interval each headline row gets, and how it is computed.

* a 0/1 outcome per game (a win share, a histogram bin): the exact binomial
  (Clopper-Pearson) interval of games with the outcome / games
  (:func:`boardsweep.core.stats.proportion_interval`);
* a frequency estimated per replicate (a location's share of events): the
  t interval ``estimate -+ t(df) se`` where the label averages at least
  :data:`~boardsweep.pipeline.analysis.dataset.MIN_COUNT` counts a replicate
  and its replicates do not tie; else the count-based interval
  (:func:`boardsweep.core.stats.count_interval`: the pooled count as Poisson,
  its variance scaled by the replicates' own dispersion).  Either is clipped
  to ``[0, 1]``, and neither is a single point at a positive count.  With
  four replicates the t interval covered 90.6% of labels under one count a
  replicate (a tie gave ``[x, x]``, a small count an interval below 0); the
  count-based one covers 98-99% of them (``tests/pipeline/analysis/test_intervals.py``);
* a per-game mean whose histogram holds every game's value (Shut the Box's
  rolls, Chutes and Ladders' rounds): Hall's skewness-corrected t interval
  (:func:`boardsweep.pipeline.analysis.skew.hall_interval`);
* anything else: the t interval (:func:`boardsweep.core.stats.t_interval`).

Each estimate table names the interval its rows use in its attrs
(:func:`interval_kinds`): ``interval_kind`` (one of :data:`INTERVAL_NAMES`,
or ``"mixed"`` where a frequency's labels use both t and count intervals)
and ``interval_count_rows`` (rows whose interval is count-based), so that
a caption can name it.
"""

from __future__ import annotations

import numpy as np

from ...core import stats
from .dataset import MIN_COUNT
from .skew import COVERAGE

__all__ = ["INTERVAL_TEXT", "INTERVAL_NAMES", "frequency_interval", "interval_kinds"]

#: Each interval kind's name, for a caption (``attrs["interval_kind"]`` of an estimate table).
INTERVAL_NAMES = {
    "t": "t interval",
    "skew_t": f"skewness-corrected t interval (Hall; covers {COVERAGE})",
    "share": "exact binomial interval",
    "count": "count interval",
}

#: How each kind of interval is computed, in words (an estimate table's ``interval`` attribute).
INTERVAL_TEXT = {
    "t": "estimate -+ t(df) s.e., Student's t with the table's df",
    "skew_t": "Hall's skewness-corrected t interval: the t statistic's cubic transformation with the games' own "
              "skewness, inverted at -+ t(se_df), the s.e.'s df from the games' kurtosis (the t interval where the "
              f"games are neither skewed nor long-tailed); covers {COVERAGE}",
    "share": "exact binomial (Clopper-Pearson) interval of games with the outcome / games: coverage at least "
             "the level for every share and count, never a single point where none or every game had it",
    "frequency": f"estimate -+ t(df) s.e. where a label averages at least {MIN_COUNT} counts a replicate and its "
                 "replicates differ, else count-based (the pooled count as Poisson, its variance scaled by the "
                 "replicates' dispersion); both inside [0, 1], never a single point at a positive count",
}


def frequency_interval(estimate: np.ndarray, se: np.ndarray, df: np.ndarray, total: np.ndarray,
                       units: np.ndarray, mean_count: np.ndarray, level: float, which: bool = False) -> tuple:
    """The ``level`` interval of a frequency estimated per replicate (the rule of the module docstring).

    Returns ``(low, high)``, and with ``which`` a third array: True where
    the row's interval is count-based, False where it is t.

    ``total``: the pooled count ``K``; ``units``: the pooled events ``N``;
    ``mean_count``: ``K / R``.  The dispersion passed to the count-based
    interval is the replicates' variance over Poisson's, ``se^2 N^2 / K``.
    """
    est, se, df, k, n, mean = np.broadcast_arrays(
        *(np.asarray(a, dtype=np.float64) for a in (estimate, se, df, total, units, mean_count)))
    low, high = stats.t_interval(est, se, df, level)
    with np.errstate(invalid="ignore", divide="ignore"):
        dispersion = np.where(k > 0, se * se * n * n / np.where(k > 0, k, 1.0), np.nan)
        c_low, c_high = stats.count_interval(k, n, dispersion, level)
        counted = ~((mean >= MIN_COUNT) & (se > 0))
    low, high = np.where(counted, c_low, low), np.where(counted, c_high, high)
    with np.errstate(invalid="ignore"):
        low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    return (low, high, counted) if which else (low, high)


def interval_kinds(kind: str, counted: np.ndarray | None, finite: np.ndarray) -> dict:
    """``interval_kind`` and ``interval_count_rows`` of an estimate table
    whose interval is ``kind`` ("t", "skew_t", "share", or "frequency": per
    row "count" where ``counted``, else "t"), over its ``finite`` rows."""
    if kind != "frequency":
        return {"interval_kind": kind, "interval_count_rows": 0}
    count = int(np.sum(counted & finite))
    t = int(np.sum(finite)) - count
    return {"interval_kind": "mixed" if count and t else "count" if count else "t", "interval_count_rows": count}
