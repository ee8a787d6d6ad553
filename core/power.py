"""The power of a two-sided t test: what a test could have missed, and what
a planned run will be able to see (numpy and scipy.special only).

* :func:`t_power`: power of the two-sided t test against a bias (noncentral t).
* :func:`detectable_bias`: the smallest bias a two-sided t test detects with
  a given power (the "what could have been missed" beside an "agree").
* :func:`replicates_for_bias`: the reverse question, for planning: how many
  replicates a given detectable bias needs.
* :func:`estimated_detectable_bias`: the bias printed beside a verdict, from
  the s.e. the run estimated (not the true one): the power of a run like this
  one averaged over what its estimated s.e. could have been.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special as _sc  # noncentral t: scipy.stats takes ~1.5 s to import

__all__ = ["POWER", "t_power", "detectable_bias", "replicates_for_bias", "estimated_detectable_bias"]


#: Power at which a detectable bias is stated.
POWER = 0.8


def t_power(bias: np.ndarray, stderr: np.ndarray, df: np.ndarray, level: float) -> np.ndarray:
    """Power of the two-sided t test of :func:`t_test` at ``level`` against a bias.

    With the estimate off the reference by ``bias`` and a standard error
    whose true value is ``stderr`` (estimated with ``df`` degrees of
    freedom), ``(estimate - reference) / se_hat`` follows the noncentral t
    with ``df`` and noncentrality ``lambda = bias / stderr``, so the power is
    ``P(|T| > c) = 1 - F(c; df, lambda) + F(-c; df, lambda)`` with
    ``c = t(1 - level/2, df)``.

    Parameters
    ----------
    bias, stderr, df : array_like
        Broadcast together; NaN where ``df < 1`` or ``stderr`` is not positive.
    level : float
        Two-sided level of the single test (for a test in a Holm family of
        ``m`` at family-wise ``alpha``, ``alpha / m`` is a conservative choice:
        Holm rejects at least whatever Bonferroni rejects).

    Returns
    -------
    ndarray
        The probability of a rejection.
    """
    d, se, nu = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (bias, stderr, df)))
    ok = (nu >= 1) & (se > 0) & np.isfinite(d) & np.isfinite(se)
    nu1 = np.where(ok, nu, 1.0)
    lam = np.where(ok, np.abs(d) / np.where(ok, se, 1.0), 0.0)
    c = _sc.stdtrit(nu1, 1.0 - level / 2.0)
    # the far tail F(-c) (at most level/2 for lambda >= 0) comes back NaN from
    # scipy for some large c; it is then below double precision's reach: 0
    far = np.nan_to_num(_sc.nctdtr(nu1, lam, -c), nan=0.0)
    power = far + (1.0 - _sc.nctdtr(nu1, lam, c))
    return np.where(ok, np.clip(power, 0.0, 1.0), np.nan)


def detectable_bias(stderr: np.ndarray, df: np.ndarray, level: float, power: float = POWER) -> np.ndarray:
    """The smallest ``|bias|`` that the two-sided t test at ``level`` detects with probability ``power``.

    Solves :func:`t_power` ``(bias, stderr, df, level) = power`` for
    ``bias >= 0`` (bisection on the noncentrality, to a relative 1e-9): the
    answer is ``lambda(df, level, power) * stderr``, in the estimate's own
    units.  With few degrees of freedom ``lambda`` is large (4 replicates,
    ``df = 3``, at ``level = 1e-4``: about 40 standard errors), with many it
    tends to ``z(1 - level/2) + z(power)``.

    Parameters
    ----------
    stderr : array_like
        Standard error of the estimate (the observed one stands in for the true).
    df : array_like
        Degrees of freedom of the test; NaN or below 1 gives NaN.
    level : float
        Two-sided level of the test, in (0, 1).
    power : float
        Target power, in (level, 1).

    Returns
    -------
    ndarray
        The detectable bias, NaN where the s.e. or df is missing (or where
        scipy's noncentral t cannot be evaluated: df = 1 at levels near 1e-6).
    """
    se, nu = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (stderr, df)))
    ok = (nu >= 1) & np.isfinite(se) & (se >= 0)
    # the noncentrality depends on df alone: solved once per distinct df
    dfs, where = np.unique(np.where(ok, nu, 1.0), return_inverse=True)
    lam = _noncentralities(dfs, level, power)[where.reshape(nu.shape)]
    return np.where(ok & np.isfinite(lam), lam * np.where(ok, se, 0.0), np.nan)


#: :func:`_noncentrality` of each (df, level, power) solved in this process: a
#: bisection of ~40 noncentral t evaluations, asked again and again for the same
#: few (the dry run's planning lines: 18 times for 3, 80% of its time).
_SOLVED: dict[tuple[float, float, float], float] = {}
_MOST_SOLVED = 4096


def _noncentralities(nu: np.ndarray, level: float, power: float) -> np.ndarray:
    """:func:`_noncentrality` of each of the distinct ``nu``, each solved once per process."""
    missing = [v for v in nu.tolist() if (v, level, power) not in _SOLVED]
    if missing:
        if len(_SOLVED) + len(missing) > _MOST_SOLVED:
            _SOLVED.clear()
        solved = _noncentrality(np.asarray(missing, dtype=np.float64), level, power)
        _SOLVED.update(((v, level, power), float(lam)) for v, lam in zip(missing, solved))
    return np.array([_SOLVED[(v, level, power)] for v in nu.tolist()], dtype=np.float64)


def _noncentrality(nu: np.ndarray, level: float, power: float) -> np.ndarray:
    """The noncentrality at which the two-sided t test (``df = nu``) at
    ``level`` has ``power``: bisection to a relative 1e-9; NaN where scipy's
    noncentral t cannot be evaluated."""
    ones = np.ones_like(nu)
    lo = np.zeros_like(nu)
    hi = _sc.stdtrit(nu, 1.0 - level / 2.0) + 1.0
    for _ in range(200):  # grow until the upper end has the power
        short = t_power(hi, ones, nu, level) < power
        if not short.any():
            break
        hi = np.where(short, 2.0 * hi, hi)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        up = t_power(mid, ones, nu, level) >= power
        lo, hi = np.where(up, lo, mid), np.where(up, mid, hi)
        if np.all(hi - lo <= 1e-9 * hi):
            break
    # scipy's noncentral t fails (NaN) in far tails, e.g. df = 1 at level 1e-6: no answer there
    return np.where(t_power(hi, ones, nu, level) >= power - 1e-6, hi, np.nan)


def replicates_for_bias(sd: float, bias: float, level: float, power: float = POWER,
                        most: int = 100_000) -> int | None:
    """The fewest replicates ``R >= 2`` whose t test (``df = R - 1``, s.e.
    ``sd / sqrt(R)``) detects ``bias`` with probability ``power`` at ``level``.

    Parameters
    ----------
    sd : float
        Spread of one replicate's estimate (e.g. ``se * sqrt(R)`` from a pilot
        run, or ``sqrt(sigma^2 / turns)`` from an exact asymptotic variance).
    bias : float
        The bias to detect, in the estimate's units (> 0).
    level, power : float
        As in :func:`detectable_bias`.
    most : int
        Give up (None) beyond this many replicates.

    Returns
    -------
    int or None
    """
    if not (sd > 0 and bias > 0):
        raise ValueError("replicates_for_bias needs sd > 0 and bias > 0")
    found = lambda r: float(detectable_bias(sd / np.sqrt(r), r - 1, level, power)) <= bias  # noqa: E731
    if not found(most):
        return None
    lo, hi = 1, 2
    while not found(hi):
        lo, hi = hi, min(2 * hi, most)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if found(mid) else (mid, hi)
    return max(hi, 2)


#: Equal-probability nodes over which an estimated s.e.'s chi-square spread is averaged.
_NODES = 200


def _chi2_nodes(nu: float) -> np.ndarray:
    """``sqrt(V)`` at the midpoints of :data:`_NODES` equal-probability bins of
    ``V ~ chi2(nu) / nu`` (all 1 where ``nu`` is infinite)."""
    if not np.isfinite(nu):
        return np.ones(1)
    q = (np.arange(_NODES) + 0.5) / _NODES
    return np.sqrt(_sc.chdtri(nu, q) / nu)


def _predictive_power(k: float, nu: float, level: float, spread: float | None = None) -> float:
    """Power against a bias of ``k`` estimated s.e.s, averaged over that estimate:
    with ``Z ~ N(0, 1)`` and ``V, W ~ chi2(spread) / spread`` independent (the
    printing run's and the testing run's s.e. over the truth, squared;
    ``spread`` is ``nu`` unless given), the test rejects
    when ``|Z + k sqrt(V)| > c sqrt(W)``, ``c = t(1 - level/2, nu)``; the
    probability ``E[Phi(-c sqrt(W) - k sqrt(V)) + Phi(-c sqrt(W) + k sqrt(V))]``
    on a grid of equal-probability nodes."""
    root = _chi2_nodes(nu if spread is None else spread)
    c = float(_sc.stdtrit(nu, 1.0 - level / 2.0)) if np.isfinite(nu) else float(-_sc.ndtri(level / 2.0))
    shift = k * root[:, None]
    edge = c * root[None, :]
    return float(np.mean(_sc.ndtr(-edge - shift) + _sc.ndtr(-edge + shift)))


def estimated_detectable_bias(stderr: np.ndarray, df: np.ndarray, level: float, power: float = POWER,
                              spread_df: np.ndarray | None = None) -> np.ndarray:
    """The bias printed beside a verdict: ``k(df, level, power)`` times the *estimated* s.e.

    :func:`detectable_bias` takes the s.e. as the truth; an s.e. estimated
    with ``df`` degrees of freedom is ``se sqrt(V)``, ``V ~ chi2(df) / df``
    (at ``df = 3`` its median is 0.89 of the truth), so a bias of
    ``lambda se_hat`` is caught less often than ``power`` (66% at four
    replicates).  ``k`` solves ``E_V[t_power(k sqrt(V) se, se, df, level)] = power``:
    a run like this one, printing ``k se_hat``, detects the bias it prints
    with probability ``power`` averaged over its own s.e.'s sampling spread.
    ``df = inf`` (a known s.e., e.g. from an exact CLT variance) gives the
    normal test's ``lambda``.  ``spread_df`` (default ``df``, at most ``df``):
    the df of the s.e.'s own spread where it is not the test's (a pooled
    s.e. of games with excess kurtosis ``G2`` spreads as ``chi2(nu) / nu``,
    ``nu = 2 / (2 / (N - 1) + G2 / N)``:
    :func:`boardsweep.pipeline.analysis.skew.se_df`).  At ``level = 1.25e-4``: ``k`` = 4.6 at
    ``df = inf``, 51 at ``df = 3`` (``lambda`` 40), about 10^4 at ``df = 1``.

    Returns
    -------
    ndarray
        The bias, NaN where the s.e. or df is missing, df below 1, or the
        s.e. not positive.
    """
    spread = df if spread_df is None else spread_df
    se, nu, sp = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (stderr, df, spread)))
    ok = (nu >= 1) & np.isfinite(se) & (se > 0)
    sp = np.where(ok & np.isfinite(sp) & (sp >= 1) & (sp < nu), sp, np.where(ok, nu, 1.0))
    pairs, where = np.unique(np.stack([np.where(ok, nu, 1.0).ravel(), sp.ravel()]), axis=1, return_inverse=True)
    k = np.array([_predictive_factor(float(d), float(level), float(power), float(e)) for d, e in pairs.T])
    k = k[np.asarray(where).reshape(nu.shape)]
    return np.where(ok & np.isfinite(k), k * np.where(ok, se, 0.0), np.nan)


@lru_cache(maxsize=256)
def _predictive_factor(nu: float, level: float, power: float, spread: float | None = None) -> float:
    """``k`` for one ``nu`` and s.e. spread df (``nu`` unless given): bisection
    to a relative 1e-6 (NaN where no ``k`` below 1e12 has the power)."""
    lo, hi = 0.0, 1.0
    while _predictive_power(hi, nu, level, spread) < power:
        lo, hi = hi, 2.0 * hi
        if hi > 1e12:
            return float("nan")
    while hi - lo > 1e-6 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _predictive_power(mid, nu, level, spread) >= power else (mid, hi)
    return hi
