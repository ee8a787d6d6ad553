"""Batches from cumulative checkpoints: the increments between consecutive
checkpoints of one replicate are disjoint stretches of its run, so every
(replicate, increment) pair is one batch.  Where a checkpoint counts
independent games the batches are independent; where it counts turns of one
long game they are consecutive stretches of one chain.

Pure numpy: no dask, xarray or zarr.
"""

from __future__ import annotations

import numpy as np


def _special():
    """scipy.special, loaded when first used: the run's import path (the
    precision planner imports this module) loads no scipy, whose thread pool
    can hang under a limited address space (``ulimit -v``)."""
    from scipy import special

    return special


__all__ = ["increments", "effective_df", "slope_interval", "long_batches", "heterogeneity_test",
           "variance_interval", "share_interval", "anova_share", "equal_ends", "with_series"]


def increments(cumulative: np.ndarray, axis: int = 1) -> np.ndarray:
    """The batches of cumulative results: ``x_k - x_{k-1}`` along ``axis``
    (``x_{-1} = 0``), so that summing them along ``axis`` gives the last
    checkpoint again.

    Parameters
    ----------
    cumulative : ndarray
        Cumulative results, checkpoints along ``axis``.
    axis : int
        The checkpoint axis.

    Returns
    -------
    ndarray
        The same shape and dtype: the increment of each checkpoint.
    """
    c = np.asarray(cumulative)
    first = np.take(c, [0], axis=axis)
    return np.concatenate([first, np.diff(c, axis=axis)], axis=axis)


def equal_ends(total: int, batches: int) -> np.ndarray:
    """The ends of ``batches`` equal batches of a run of ``total`` units:
    ``e_k = floor(k total / B)``, ``k = 1..B`` (widths differ by at most one
    unit; strictly increasing for ``1 <= B <= total``).  Integer arithmetic.

    Returns
    -------
    ndarray of int64
    """
    total, batches = int(total), int(batches)
    if not 1 <= batches <= total:
        raise ValueError(f"batches must be in [1, {total}], got {batches}")
    return np.asarray([k * total // batches for k in range(1, batches + 1)], dtype=np.int64)


def with_series(checkpoints: np.ndarray, batches: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The checkpoints a run simulates to give both its (log-spaced)
    ``checkpoints`` and the ends of ``batches`` equal batches
    (:func:`equal_ends` of the last checkpoint): their sorted union ``u``,
    and the indices into ``u`` of each, so ``u[at] = checkpoints`` and
    ``u[ends] = equal_ends``.  A game's counts at a checkpoint do not depend
    on the other checkpoints asked for, so the union's are the same integers.

    Returns
    -------
    union, at, ends : ndarray of int64
    """
    c = np.asarray(checkpoints, dtype=np.int64)
    e = equal_ends(int(c[-1]), batches)
    union = np.union1d(c, e)
    return union, np.searchsorted(union, c), np.searchsorted(union, e)


def effective_df(sizes: np.ndarray) -> int:
    """Degrees of freedom of a variance pooled over batches of unequal
    ``sizes`` ``m_b`` (Satterthwaite, each batch's squared deviation weighing
    ``m_b``): ``floor((sum m)^2 / sum m^2) - 1``, at least 1; ``B - 1`` for
    ``B`` equal batches.  Integer arithmetic: the same on every CPU.

    Parameters
    ----------
    sizes : ndarray
        The batch sizes (units per batch, integers >= 0).

    Returns
    -------
    int
    """
    m = [int(v) for v in np.ravel(sizes) if int(v) > 0]
    if len(m) < 2:
        return 1
    return max(1, sum(m) ** 2 // sum(v * v for v in m) - 1)


def slope_interval(x: np.ndarray, y: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float, float]:
    """Least-squares slope of ``log y`` on ``log x`` with its s.e., degrees
    of freedom (points - 2) and ``level`` interval ``slope -+ t(df) se``.

    The s.e. is the ordinary one (:func:`boardsweep.core.stats.loglog_slope`):
    it holds where the points' errors are independent, as for batches
    (increments), not for nested cumulative checkpoints.  All NaN with
    fewer than 3 usable points.

    Returns
    -------
    slope, stderr, df, low, high : float
    """
    from .stats import loglog_slope  # scipy-free at import, as the run's import path needs

    slope, se = loglog_slope(x, y)
    ok = np.isfinite(np.asarray(x, float)) & np.isfinite(np.asarray(y, float))
    ok &= (np.asarray(x, float) > 0) & (np.asarray(y, float) > 0)
    df = float(ok.sum() - 2)
    if not (np.isfinite(slope) and np.isfinite(se)) or df < 1:
        return slope, se, np.nan, np.nan, np.nan
    half = float(_special().stdtrit(df, 0.5 + level / 2)) * se
    return slope, se, df, slope - half, slope + half


def long_batches(checkpoints: np.ndarray) -> np.ndarray:
    """Indices of the checkpoints that end the batches long enough to be
    independent stretches of a chain: those in the upper half of the log
    range of ``checkpoints`` (the first batch runs from the start to the
    first of them, so no data are dropped; a chain's short early
    increments, dominated by the start and by neighbours, are merged).

    Returns
    -------
    ndarray of int
        Increasing indices into ``checkpoints``, the last one included.
    """
    c = np.log(np.asarray(checkpoints, dtype=float))
    return np.flatnonzero(c >= (c[0] + c[-1]) / 2)


def heterogeneity_test(a: np.ndarray, m: np.ndarray) -> dict[str, np.ndarray]:
    """Do replicates estimate one ratio?  A one-way analysis of variance of
    batch ratios ``f_rb = a_rb / m_rb`` weighted by their sizes:

        F = [sum_r M_r (R_r - R)^2 / (n - 1)] / [sum_rb m_rb (f_rb - R_r)^2 / sum_r (B_r - 1)],

    ``R_r = A_r / M_r`` replicate ``r``'s ratio, ``R`` the pooled one; with
    independent batches whose ratio has variance ``sigma^2 / m`` both parts
    estimate ``sigma^2`` and ``F ~ F(n - 1, sum (B_r - 1))`` when replicates
    agree.  ``a``: (replicates, batches, labels), ``m``: (replicates,
    batches); a replicate with a missing (NaN) or empty batch is left out.

    Returns
    -------
    dict
        ``F``, ``df_between``, ``df_within``, ``p`` (upper tail), per label;
        NaN where fewer than 2 replicates or no within variance.
    """
    a = np.asarray(a, dtype=float)
    m = np.asarray(m, dtype=float)
    keep = np.isfinite(m).all(axis=1) & (m > 0).all(axis=1) & np.isfinite(a).all(axis=(1, 2))
    a, m = a[keep], m[keep]
    n, b = m.shape[0], m.shape[1] if m.ndim == 2 else 0
    nan = np.full(a.shape[-1], np.nan)
    if n < 2 or b < 2:
        return {"F": nan, "df_between": nan, "df_within": nan, "p": nan}
    big_m, big_a = m.sum(axis=1), a.sum(axis=1)  # (n,), (n, L)
    r_rep = big_a / big_m[:, None]
    r_all = big_a.sum(axis=0) / big_m.sum()
    ssb = (big_m[:, None] * (r_rep - r_all) ** 2).sum(axis=0)
    ssw = ((a - r_rep[:, None, :] * m[..., None]) ** 2 / m[..., None]).sum(axis=(0, 1))
    df1, df2 = n - 1.0, float(n * (b - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(ssw > 0, (ssb / df1) / (ssw / df2), np.nan)
    return {"F": f, "df_between": np.full_like(f, df1), "df_within": np.full_like(f, df2),
            "p": _special().fdtrc(df1, df2, f)}


def variance_interval(estimate: np.ndarray, df: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` interval of a variance (or a variance over a known one)
    estimated with ``df`` degrees of freedom, from its chi-square law:
    ``[v df / chi2_{(1+level)/2}(df), v df / chi2_{(1-level)/2}(df)]``.

    Returns
    -------
    low, high : ndarray
    """
    v, d = np.asarray(estimate, dtype=float), np.asarray(df, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(d >= 1, d, np.nan)
        low = v * d / _special().chdtri(d, (1 - level) / 2)
        high = v * d / _special().chdtri(d, (1 + level) / 2)
    return low, high


def share_interval(between: np.ndarray, sampling: np.ndarray, n: np.ndarray,
                   level: float = 0.95, df_between: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` interval of a between share ``s = B / (B + S)`` from
    ``n`` replicates: ``B`` the sample variance of the exact answers
    (``df_between`` df: ``n - 1`` for one answer a replicate, ``n G - 1``
    for ``G`` deck orders a replicate), ``S`` the mean squared difference
    of estimate and exact answer (``n`` df), so ``(B / S) / rho ~
    F(df_between, n)`` with ``rho`` the true ratio of the parts (normal
    parts); the interval of ``rho`` mapped by ``rho / (1 + rho)``.

    Returns
    -------
    low, high : ndarray
    """
    b, w = np.asarray(between, dtype=float), np.asarray(sampling, dtype=float)
    n = np.asarray(n, dtype=float)
    d1 = n - 1 if df_between is None else np.asarray(df_between, dtype=float)
    d1 = np.where((n >= 2) & (d1 >= 1), d1, np.nan)
    d2 = np.where(n >= 2, n, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = b / w
        lo = ratio / _special().fdtri(d1, d2, (1 + level) / 2)
        hi = ratio / _special().fdtri(d1, d2, (1 - level) / 2)
    return lo / (1 + lo), hi / (1 + hi)


def anova_share(a: np.ndarray, m: np.ndarray, level: float = 0.95) -> dict[str, np.ndarray]:
    """The between share by a one-way analysis of variance on equal batches,
    with no exact answers: groups are replicates (deck orders), ``K`` batches
    each, batch ratios ``y_rk = a_rk / m_rk``:

        F = MS_b / MS_w,  MS_b = K sum_r (y_r. - y..)^2 / (R - 1),
        MS_w = sum_rk (y_rk - y_r.)^2 / (R (K - 1)),

    ``between = (MS_b - MS_w) / K`` (the variance of the groups' own answers),
    ``sampling = MS_w / K`` (that of a group's mean about its answer),
    ``share = between / (between + sampling) = 1 - 1 / F``; with independent
    normal batches ``F / (1 + K theta) ~ F(R - 1, R (K - 1))``, ``theta`` the
    ratio of the variance components, so the share's ``level`` interval is
    ``[1 - F_hi / F, 1 - F_lo / F]``.  Estimates and ends clipped to [0, 1].
    ``a``: (replicates, batches, labels), ``m``: (replicates, batches), the
    batches of equal length (the caller's promise: equally spaced checkpoints).

    Returns
    -------
    dict
        ``between``, ``sampling``, ``share``, ``share_low``, ``share_high``,
        ``F``, ``df_between``, ``df_within``, per label; NaN with fewer than
        2 replicates or 2 batches, or no within variance.
    """
    a, m = np.asarray(a, dtype=float), np.asarray(m, dtype=float)
    keep = np.isfinite(m).all(axis=1) & (m > 0).all(axis=1) & np.isfinite(a).all(axis=(1, 2))
    y = a[keep] / m[keep][..., None]  # (R, K, L)
    r, k = y.shape[0], y.shape[1]
    nan = np.full(a.shape[-1], np.nan)
    if r < 2 or k < 2:
        return {key: nan for key in ("between", "sampling", "share", "share_low", "share_high", "F",
                                     "df_between", "df_within")}
    d1, d2 = r - 1.0, r * (k - 1.0)
    means = y.mean(axis=1)
    ms_b = k * ((means - means.mean(axis=0)) ** 2).sum(axis=0) / d1
    ms_w = ((y - means[:, None, :]) ** 2).sum(axis=(0, 1)) / d2
    sp = _special()
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(ms_w > 0, ms_b / ms_w, np.nan)
        share = np.clip(1.0 - 1.0 / f, 0.0, 1.0)
        low = np.clip(1.0 - sp.fdtri(d1, d2, (1 + level) / 2) / f, 0.0, 1.0)
        high = np.clip(1.0 - sp.fdtri(d1, d2, (1 - level) / 2) / f, 0.0, 1.0)
    return {"between": np.maximum(ms_b - ms_w, 0.0) / k, "sampling": ms_w / k, "share": share,
            "share_low": low, "share_high": high, "F": f,
            "df_between": np.full_like(f, d1), "df_within": np.full_like(f, d2)}
