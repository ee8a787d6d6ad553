"""Per-game means of skewed games: their third and fourth moments, a
skewness-corrected interval, and the s.e.'s own degrees of freedom.

A game's lengths are skewed (Shut the Box's rolls: skewness 2.1, excess
kurtosis 7), and with few games the t interval misses on one side: at 16
games it covered 91% (Shut the Box) and 92% (Chutes and Ladders), nearly
all of the misses with the truth above the interval.  Where the store's
histogram of the per-game value holds every game (its labels are the
values, and ``sum label x count`` and ``sum label^2 x count`` equal the
mean's stored sums exactly, in integers) the pooled games' central moments
are known:

* :func:`hall_interval`: Hall's (1992) cubic transformation of the t
  statistic ``T = (mean - mu) / se``,
  ``g(T) = T + a T^2 + a^2 T^3 / 3 + b``, ``a = G1 / (3 sqrt n)``,
  ``b = G1 / (6 sqrt n)`` (``G1`` the adjusted sample skewness), monotone,
  inverted in closed form: ``mu`` in ``mean - se g^-1(+-t(df))``;
* :func:`se_df`: the degrees of freedom of the s.e.'s own spread,
  ``2 / Var(s^2 / sigma^2) = 2 / (2 / (n - 1) + G2 / n)`` (``G2`` the
  adjusted excess kurtosis, at least 0): ``n - 1`` for normal games, 35 for
  160 games of Shut the Box, whose s.e. is that much noisier than
  chi-square with 159 df says (the power statement reads it).

Elsewhere (no such histogram, or a point whose sums differ from it) the
interval stays t and ``se_df`` is ``df``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...core import stats
from ...core.games import Headline

__all__ = ["moments_of", "hist_moments", "hall_interval", "se_df"]


def _histogram(ds: xr.Dataset, h: Headline, others) -> Headline | None:
    """The distribution headline over games whose labels are ``h``'s per-game values."""
    for g in others:
        if (g.kind == "distribution" and g.squares == g.numerator and g.denominator == h.denominator
                and g.numerator in ds and h.squares in ds):
            dim = ds[g.numerator].dims[-1]
            if np.issubdtype(ds[dim].dtype, np.integer):
                return g
    return None


def moments_of(ds: xr.Dataset, h: Headline, others, cp: int, done: xr.DataArray) -> xr.Dataset | None:
    """The pooled games' ``n``, ``mean`` and central moments ``m2, m3, m4``
    (divided by ``n``) per grid point, from the histogram that holds every
    game's value, pooled over the finished replicates; NaN at a point where
    ``sum label x count`` or ``sum label^2 x count`` differ from the stored
    sums (an overflow bin: its interval stays t); None where the game has no
    such histogram or no point has one."""
    g = _histogram(ds, h, others)
    if g is None or h.squares is None:
        return None
    hist = ds[g.numerator].isel(checkpoint=cp)
    dim = hist.dims[-1]
    # pooled over the finished replicates first: a block of a large grid holds no R x bins temporaries
    pooled = hist.where(done).sum("replicate").transpose(..., dim)  # integers: exact in float64 below 2^53
    x = ds[dim].astype(np.float64)
    whole = True
    for name, power in ((h.numerator, 1), (h.squares, 2)):
        stored = ds[name].isel(checkpoint=cp).where(done).sum("replicate")
        whole = whole & ((pooled * x ** power).sum(dim) == stored)
    if not bool(whole.any()):
        return None
    found = hist_moments(pooled.values, x.values)
    like = pooled.isel({dim: 0}, drop=True)
    return xr.Dataset({k: like.copy(data=v) for k, v in found.items()}).where(whole.broadcast_like(like))


def hist_moments(counts: np.ndarray, values: np.ndarray) -> dict[str, np.ndarray]:
    """``n = sum c``, ``mean = sum c x / n`` and ``m_k = sum c (x - mean)^k / n``
    (k = 2, 3, 4) of histograms ``counts`` (bins last) over the per-game ``values``."""
    c = np.asarray(counts, dtype=np.float64)
    x = np.asarray(values, dtype=np.float64)
    n = c.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = (c * x).sum(axis=-1) / np.where(n > 0, n, np.nan)
        d = x - mean[..., None]
        found = {"n": n, "mean": mean}
        for k in (2, 3, 4):
            found[f"m{k}"] = (c * d ** k).sum(axis=-1) / np.where(n > 0, n, np.nan)
    return found


def _skewness(n: np.ndarray, m2: np.ndarray, m3: np.ndarray) -> np.ndarray:
    """The adjusted sample skewness ``G1 = g1 sqrt(n (n - 1)) / (n - 2)``, 0 where undefined."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g1 = m3 / m2 ** 1.5 * np.sqrt(n * (n - 1.0)) / (n - 2.0)
    return np.where((n > 2) & (m2 > 0) & np.isfinite(g1), g1, 0.0)


def hall_interval(estimate: np.ndarray, se: np.ndarray, df: np.ndarray, n: np.ndarray, m2: np.ndarray,
                  m3: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` interval of a mean from Hall's transformed t statistic (module docstring).

    ``g^-1(u) = ((1 + 3 a (u - b))^(1/3) - 1) / a``; where ``a`` is 0 (no
    skew) it is the t interval ``estimate -+ t(df) se``.
    """
    est, se, df, n, m2, m3 = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64)
                                                   for v in (estimate, se, df, n, m2, m3)))
    gamma = _skewness(n, m2, m3)
    root = np.sqrt(np.where(n > 0, n, 1.0))
    a, b = gamma / (3.0 * root), gamma / (6.0 * root)
    low_t, high_t = stats.t_interval(np.zeros_like(est), np.ones_like(est), df, level)  # -+ t(df)
    straight = np.abs(a) < 1e-12

    def inverse(u: np.ndarray) -> np.ndarray:
        safe = np.where(straight, 1.0, a)
        return np.where(straight, u - b, (np.cbrt(1.0 + 3.0 * safe * (u - b)) - 1.0) / safe)

    return est - se * inverse(high_t), est - se * inverse(low_t)


def se_df(df: np.ndarray, n: np.ndarray, m2: np.ndarray, m4: np.ndarray) -> np.ndarray:
    """``2 / (2 / (n - 1) + G2 / n)``, at most ``df``: the df of ``chi2(nu) / nu``
    with the variance of ``s^2 / sigma^2``; ``G2`` is the adjusted excess kurtosis
    ``((n + 1) g2 + 6) (n - 1) / ((n - 2) (n - 3))``, ``g2 = m4 / m2^2 - 3``, at least 0."""
    df, n, m2, m4 = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (df, n, m2, m4)))
    with np.errstate(divide="ignore", invalid="ignore"):
        g2 = m4 / (m2 * m2) - 3.0
        big = ((n + 1.0) * g2 + 6.0) * (n - 1.0) / ((n - 2.0) * (n - 3.0))
        nu = 2.0 / (2.0 / (n - 1.0) + np.maximum(big, 0.0) / n)
    return np.where((n > 3) & (m2 > 0) & np.isfinite(nu), np.minimum(nu, df), df)
