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

The printed interval (:func:`skew_interval`) is Hall's at ``df = se_df``,
and the verdict's test of such a mean is its own (:func:`hall_test`, the
same ``g`` and df: the exact answer lies in the 95% interval exactly where
``p >= 0.05``); it covers :data:`COVERAGE`.  A reference on the far side
of a right-skewed mean (above it) must be farther off to be seen: the
power statement and the planner read Hall's test's own power on its weak
side (:func:`hall_power`, :func:`hall_detectable_bias`).

Elsewhere (no such histogram, or a point whose sums differ from it) the
interval stays t and ``se_df`` is ``df``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from scipy import special

from ...core import stats
from ...core.games import Headline

__all__ = ["COVERAGE", "moments_of", "hist_moments", "hall_interval", "skew_interval", "hall_test", "hall_a", "hall_moments",
           "hall_power", "hall_detectable_bias", "se_df", "retest"]

#: What the 95% interval of a skewed mean (:func:`skew_interval`) covers, measured against the exact answers
#: (tests/pipeline/analysis/test_skew.py): the one place this figure is stated.
COVERAGE = "about 94.5% from 16 games, 95% from 64"


def _histogram(ds: xr.Dataset, h: Headline, others) -> Headline | None:
    """The distribution headline over games whose labels are ``h``'s per-game values."""
    for g in others:
        if (g.kind == "distribution" and g.squares == g.numerator and g.denominator == h.denominator
                and g.numerator in ds and h.squares in ds):
            dim = ds[g.numerator].dims[-1]
            if np.issubdtype(ds[dim].dtype, np.integer):
                return g
    return None


def hall_moments(ds: xr.Dataset, h: Headline, others, cp: int, done: xr.DataArray, basis: str
                 ) -> xr.Dataset | None:
    """Where the verdict tests headline ``h`` by Hall's test (the one place
    this is decided; the planner asks it of a pilot store too): a per-game
    mean (``h.kind`` "mean", not a 0/1 share) whose s.e. is pooled over games
    (``basis`` "units") and whose histogram holds every game's value; its
    games' moments there (:func:`moments_of`), else None (its t test stays)."""
    if basis != "units" or h.kind != "mean" or h.squares == h.numerator:
        return None
    return moments_of(ds, h, others, cp, done)


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


def _hall_terms(n: np.ndarray, m2: np.ndarray, m3: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hall's ``a = G1 / (3 sqrt n)`` and ``b = G1 / (6 sqrt n) = a / 2``."""
    gamma = _skewness(n, m2, m3)
    root = np.sqrt(np.where(n > 0, n, 1.0))
    return gamma / (3.0 * root), gamma / (6.0 * root)


def hall_a(n: np.ndarray, m2: np.ndarray, m3: np.ndarray) -> np.ndarray:
    """Hall's ``a = G1 / (3 sqrt n)`` of the games' moments (0 where not skewed)."""
    n, m2, m3 = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (n, m2, m3)))
    return _hall_terms(n, m2, m3)[0]


def _inverse(u: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``g^-1(u) = ((1 + 3 a (u - b))^(1/3) - 1) / a``; ``u - b`` where ``a`` is 0."""
    straight = np.abs(a) < 1e-12
    safe = np.where(straight, 1.0, a)
    return np.where(straight, u - b, (np.cbrt(1.0 + 3.0 * safe * (u - b)) - 1.0) / safe)


def _hall_edges(a: np.ndarray, df: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Where Hall's test at ``level`` rejects, in s.e.s of the estimate:
    ``T < -up`` or ``T > down`` (``up = -g^-1(-c)``, ``down = g^-1(c)``, ``c``
    the two-sided t quantile at ``df``; both ``c`` where ``a`` is 0)."""
    c = stats.t_interval(np.zeros_like(a), np.ones_like(a), df, 1.0 - level)[1]
    return -_inverse(-c, a, a / 2), _inverse(c, a, a / 2)


#: Equal-probability nodes of each chi-square spread that :func:`hall_power` averages over.
_NODES = 48


def _root_nodes(nu: np.ndarray) -> np.ndarray:
    """``sqrt(chi2(nu) / nu)`` at :data:`_NODES` equal-probability midpoints, per ``nu`` (rows)."""
    q = (np.arange(_NODES) + 0.5) / _NODES
    nu = np.asarray(nu, dtype=np.float64)[..., None]
    return np.sqrt(special.chdtri(nu, 1.0 - q) / nu)


def hall_power(k: np.ndarray, df: np.ndarray, a: np.ndarray, level: float, estimated: bool = True
               ) -> tuple[np.ndarray, np.ndarray]:
    """The power of Hall's test (:func:`hall_test`, ``df`` = its se_df) against
    a reference ``k`` s.e.s above the mean and ``k`` below: ``(up, down)``.

    The test's own run has ``Z = (mean - mu) / se`` and ``W = (se_hat / se)^2
    ~ chi2(df) / df``, tied by the games' skewness: ``Cov(Z, W) = gamma / sqrt(n)
    = 3 a`` (``Cov(mean, s^2) = mu_3 / n``), taken as ``Z | W ~ N(beta (W - 1),
    1 - beta^2 2 / df)``, ``beta = 3 a df / 2``.  A reference ``d`` above is
    seen where ``Z + up sqrt(W) < d / se`` (:func:`_hall_edges`); one below
    where ``-Z + down sqrt(W) < d / se``.  A right-skewed mean's high estimates
    come with high s.e.s, so the side above is the weak one.  ``estimated``:
    ``d = k se_hat'`` is the bias printed from another run's s.e. (``se_hat'
    / se = sqrt(V)``, ``V ~ chi2(df) / df`` independent), averaged over it;
    else ``d = k se`` (the true s.e.: the planner's question)."""
    k, df, a = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (k, df, a)))
    up, down = _hall_edges(a, df, level)
    w = _root_nodes(df)[..., None, :]  # testing run: sqrt(W) on the last axis
    v = _root_nodes(df)[..., :, None] if estimated else np.ones(df.shape + (1, 1))  # printing run
    beta = 3.0 * a * df / 2.0
    rest = np.sqrt(np.maximum(1.0 - beta * beta * 2.0 / df, 0.05))[..., None, None]
    shift, tie = (k[..., None, None] * v), (beta[..., None, None] * (w * w - 1.0))
    seen_up = special.ndtr((shift - up[..., None, None] * w - tie) / rest)
    seen_down = special.ndtr((shift - down[..., None, None] * w + tie) / rest)
    return seen_up.mean(axis=(-2, -1)), seen_down.mean(axis=(-2, -1))


def hall_detectable_bias(se: np.ndarray, df: np.ndarray, a: np.ndarray, level: float, power: float = 0.8,
                         estimated: bool = True, side: str = "either") -> np.ndarray:
    """The smallest bias Hall's test at ``level`` (df = its se_df) detects with
    probability ``power`` on **either** side of the mean: ``k se``, ``k`` the
    larger of the two sides' (:func:`hall_power`; the weak side above a
    right-skewed mean), bisected to a relative 1e-6.  ``estimated``: ``se``
    is the run's estimate and the power is averaged over it (the bias printed
    beside a verdict); else ``se`` is the truth (the planner's).  ``side``:
    "either" (the larger of the two), "above" or "below" (a reference that
    far above, or below, the mean).  NaN where
    ``se`` is not positive or ``df`` below 1; ``a`` NaN counts as 0."""
    se, df, a = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (se, df, a)))
    ok = np.isfinite(se) & (se > 0) & np.isfinite(df) & (df >= 1)
    nu, aa = np.where(ok, df, 10.0).ravel(), np.where(ok & np.isfinite(a), a, 0.0).ravel()
    k = np.concatenate([_hall_factor(nu[i:i + _CHUNK], aa[i:i + _CHUNK], level, power, estimated, side)
                        for i in range(0, nu.size, _CHUNK)] or [np.zeros(0)]).reshape(se.shape)
    return np.where(ok & np.isfinite(k), k * np.where(ok, se, 0.0), np.nan)


#: Tests whose factor is bisected at once (each holds _NODES^2 doubles a step).
_CHUNK = 256


def _hall_factor(nu: np.ndarray, a: np.ndarray, level: float, power: float, estimated: bool,
                 side: str = "either") -> np.ndarray:
    """``k`` of :func:`hall_detectable_bias` per test (``side``: "either",
    "above", "below"): bisection to a relative 1e-6 (NaN where no ``k`` below
    2^60 has the power)."""
    pick = {"either": np.minimum, "above": lambda up, down: up, "below": lambda up, down: down}[side]
    weakest = lambda k: pick(*hall_power(k, nu, a, level, estimated))  # noqa: E731
    lo, hi = np.zeros(nu.shape), np.ones(nu.shape)
    for _ in range(60):  # grow until the upper end has the power
        short = weakest(hi) < power
        if not short.any():
            break
        lo, hi = np.where(short, hi, lo), np.where(short, 2.0 * hi, hi)
    while np.any(open_ := hi - lo > 1e-6 * hi):  # each test stops at its own tolerance: its k never
        mid = 0.5 * (lo + hi)                     # depends on the tests bisected beside it (a block's)
        up = weakest(mid) >= power
        lo, hi = np.where(open_ & ~up, mid, lo), np.where(open_ & up, mid, hi)
    return np.where(weakest(hi) >= power - 1e-6, hi, np.nan)


def hall_interval(estimate: np.ndarray, se: np.ndarray, df: np.ndarray, n: np.ndarray, m2: np.ndarray,
                  m3: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` interval of a mean from Hall's transformed t statistic (module docstring).

    ``g^-1(u) = ((1 + 3 a (u - b))^(1/3) - 1) / a``; where ``a`` is 0 (no
    skew) it is the t interval ``estimate -+ t(df) se``.  The verdict passes
    ``df = se_df`` (:func:`se_df`), as its test does (:func:`hall_test`).
    """
    est, se, df, n, m2, m3 = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64)
                                                   for v in (estimate, se, df, n, m2, m3)))
    a, b = _hall_terms(n, m2, m3)
    low_t, high_t = stats.t_interval(np.zeros_like(est), np.ones_like(est), df, level)  # -+ t(df)
    return est - se * _inverse(high_t, a, b), est - se * _inverse(low_t, a, b)


def skew_interval(estimate: np.ndarray, se: np.ndarray, df: np.ndarray, moments: dict[str, np.ndarray],
                  level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The printed interval of a skewed mean: :func:`hall_interval` at
    ``df = se_df`` (:func:`se_df`; the games' kurtosis makes the s.e.
    noisier than ``df`` says), from the games' ``moments`` (``n``, ``m2``,
    ``m3``, ``m4``).  Covers :data:`COVERAGE` (measured).

    Returns
    -------
    low, high, se_df : ndarray
    """
    nu = se_df(df, moments["n"], moments["m2"], moments["m4"])
    low, high = hall_interval(estimate, se, nu, moments["n"], moments["m2"], moments["m3"], level)
    return low, high, nu


def hall_test(estimate: np.ndarray, se: np.ndarray, df: np.ndarray, n: np.ndarray, m2: np.ndarray,
              m3: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The two-sided p of a mean against ``reference`` by Hall's transformed
    statistic: ``T = (estimate - reference) / se``, ``p = 2 P(t_df > |g(T)|)``,
    ``g(T) = T + a T^2 + a^2 T^3 / 3 + b``; the test of :func:`hall_interval`
    (the reference lies in the ``level`` interval exactly where ``p >= 1 -
    level``).  NaN where ``se`` is not positive or ``df < 1``."""
    est, se, df, n, m2, m3, ref = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64)
                                                        for v in (estimate, se, df, n, m2, m3, reference)))
    a, b = _hall_terms(n, m2, m3)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, (est - ref) / se, np.nan)
        g = t + a * t * t + a * a * t ** 3 / 3.0 + b
    _, p = stats.t_test(g, np.ones_like(g), df, np.zeros_like(g))
    return p


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


def retest(out: xr.Dataset, moments: xr.Dataset) -> None:
    """Replaces the t test of an estimate table's mean by :func:`hall_test`
    at ``df = se_df`` (the interval's test), where the family tests it with
    the estimated s.e. (finite ``p`` and ``test_df``); ``test_df`` becomes
    ``se_df`` there, ``skew_a`` its Hall's ``a`` (:func:`hall_a`, for the
    power statement: :func:`hall_detectable_bias`) and ``attrs["test_kind"]`` ``skew_t``."""
    est, se, df, sdf, ex, p = (out[c].broadcast_like(out["estimate"]).values
                               for c in ("estimate", "test_se", "test_df", "se_df", "exact", "p"))
    m = {c: moments[c].broadcast_like(out["estimate"]).values for c in ("n", "m2", "m3")}
    # where a point's histogram does not hold every game (NaN moments) its t test stays, named t
    tested = np.isfinite(p) & np.isfinite(df) & np.isfinite(m["n"]) & np.isfinite(m["m2"]) & np.isfinite(m["m3"])
    if not tested.any():
        return
    hall = hall_test(est, se, sdf, m["n"], m["m2"], m["m3"], ex)
    like = out["estimate"]
    out["p"] = like.copy(data=np.where(tested, hall, p))
    out["test_df"] = like.copy(data=np.where(tested, sdf, df))
    out["skew_a"] = like.copy(data=np.where(tested, hall_a(m["n"], m["m2"], m["m3"]), np.nan))
    out.attrs["test_kind"] = "skew_t"
