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
  and where the label's test is the z test on the exact CLT s.e.
  (:mod:`boardsweep.pipeline.analysis.clt`), that test's own interval,
  ``estimate -+ z(1 - a/2) se_CLT``, in place of either: one procedure per
  row, so "the exact answer lies in the interval" and "p >= 1 - level" never
  contradict (the t interval beside the z test did on 6.6% of Monopoly's
  labels at R = 4);
* a per-game mean whose histogram holds every game's value (Shut the Box's
  rolls, Chutes and Ladders' rounds): Hall's skewness-corrected t interval
  (:func:`boardsweep.pipeline.analysis.skew.hall_interval`);
* anything else: the t interval (:func:`boardsweep.core.stats.t_interval`).

Each estimate table names the interval its rows use in its attrs
(:func:`interval_kinds`): ``interval_kind`` (one of :data:`INTERVAL_NAMES`,
``"mixed"`` where a frequency's labels use both t and count intervals, or
``"mixed_z"`` where some use the z interval beside others), ``interval_count_rows``
(rows whose interval is count-based) and ``interval_z_rows`` (rows whose interval
is the z test's), so that a caption can name it.
"""

from __future__ import annotations

import numpy as np

from ...core import stats
from .dataset import MIN_COUNT
from .skew import COVERAGE, se_df

__all__ = ["INTERVAL_TEXT", "INTERVAL_NAMES", "frequency_interval", "z_rows", "interval_kinds", "test_spread"]

#: Each interval kind's name, for a caption (``attrs["interval_kind"]`` of an estimate table).
INTERVAL_NAMES = {
    "t": "t interval",
    "skew_t": f"skewness-corrected t interval (Hall; covers {COVERAGE})",
    "share": "exact binomial interval",
    "count": "count interval",
    "z": "z interval on the exact CLT s.e. (the z test's own)",
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
                 "replicates' dispersion); both inside [0, 1], never a single point at a positive count; "
                 "where the label is tested by the z test on the exact CLT s.e., that test's own interval, "
                 "estimate -+ z s.e. (CLT), inside [0, 1]",
}


def frequency_interval(estimate: np.ndarray, se: np.ndarray, df: np.ndarray, total: np.ndarray,
                       units: np.ndarray, mean_count: np.ndarray, level: float, which: bool = False,
                       known: np.ndarray | None = None) -> tuple:
    """The ``level`` interval of a frequency estimated per replicate (the rule of the module docstring).

    Returns ``(low, high)``, and with ``which`` a third array: True where
    the row's interval is count-based, False where it is t or z.
    ``known``: the exact CLT s.e. where the label's test is the z test
    (finite and positive there, :func:`boardsweep.pipeline.analysis.clt.clt_stderr`),
    whose own interval ``estimate -+ z(1 - (1 - level)/2) known`` the row gets
    (:func:`z_rows` says which rows).

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
    z = z_rows(known, est.shape)
    if z.any():  # the z test's own interval: t(inf) is the normal quantile
        z_low, z_high = stats.t_interval(est, np.where(z, known, np.nan), np.inf, level)
        low, high, counted = np.where(z, z_low, low), np.where(z, z_high, high), counted & ~z
    with np.errstate(invalid="ignore"):
        low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    return (low, high, counted) if which else (low, high)


def z_rows(known: np.ndarray | None, shape: tuple) -> np.ndarray:
    """Where a frequency's row is tested by the z test on the exact CLT s.e.
    (``known`` finite and positive), as a boolean array of ``shape``."""
    if known is None:
        return np.zeros(shape, dtype=bool)
    k = np.broadcast_to(np.asarray(known, dtype=np.float64), shape)
    with np.errstate(invalid="ignore"):
        return np.isfinite(k) & (k > 0)


def interval_kinds(kind: str, counted: np.ndarray | None, finite: np.ndarray, z: np.ndarray | None = None) -> dict:
    """``interval_kind``, ``interval_count_rows`` and ``interval_z_rows`` of an
    estimate table whose interval is ``kind`` ("t", "skew_t", "share", or
    "frequency": per row "z" where ``z``, "count" where ``counted``, else
    "t"), over its ``finite`` rows."""
    if kind != "frequency":
        return {"interval_kind": kind, "interval_count_rows": 0, "interval_z_rows": 0}
    zs = np.zeros(np.shape(finite), dtype=bool) if z is None else np.asarray(z, dtype=bool)
    count = int(np.sum(counted & finite & ~zs))
    normal = int(np.sum(zs & finite))
    t = int(np.sum(finite)) - count - normal
    kinds = [k for k, n in (("z", normal), ("count", count), ("t", t)) if n]
    name = kinds[0] if len(kinds) == 1 else "mixed_z" if normal else "mixed" if kinds else "t"
    return {"interval_kind": name, "interval_count_rows": count, "interval_z_rows": normal}


def test_spread(out, share: bool, per_replicate: bool, k, n, mean_count, level: float,
                moments=None, known=None) -> None:
    """What the tests read of an estimate table's interval, without the interval (the verdict's
    estimates, :func:`boardsweep.pipeline.analysis.headlines.estimates` with ``intervals=False``):
    ``se_df`` (the table's df, or Hall's :math:`\\nu` from the games' kurtosis where ``moments``,
    as the skewness-corrected interval computes it) and ``attrs["interval"]`` (its words).
    The other arguments are the interval's, unused here."""
    df = out["df"].broadcast_like(out["estimate"]).values
    if moments is not None and not share and not per_replicate:
        m = {c: moments[c].broadcast_like(out["estimate"]).values for c in ("n", "m2", "m4")}
        df = se_df(df, m["n"], m["m2"], m["m4"])
    out["se_df"] = out["estimate"].copy(data=df)
    kind = "share" if share else "frequency" if per_replicate else "skew_t" if moments is not None else "t"
    out.attrs["interval"] = INTERVAL_TEXT[kind]
