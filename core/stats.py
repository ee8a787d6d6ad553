"""Game-agnostic statistics for Monte Carlo convergence (numpy and scipy.special only).

Array functions in the style of arviz-stats: plain ndarrays in, ndarrays out,
the reduced axis given explicitly; NaN marks a missing value and is skipped,
never read as zero.  The xarray wrappers live in :mod:`boardsweep.pipeline.analysis.convergence`.

* :func:`loglog_slope`: least-squares slope of ``log y`` on ``log x`` (the
  convergence rate; -1/2 for a Monte Carlo error).
* :func:`ratio_batch_variance`: variance of a ratio estimator
  ``sum c / sum e`` from (possibly unequal) consecutive batches of one run.
* :func:`welch_test`: difference of two means with unequal variances.
* :func:`holm`: Holm-Bonferroni adjusted p-values (family-wise error).
* :func:`variance_decomposition`: total = between-environment + sampling.
* :func:`paired_test`: each replicate against its own environment's exact
  answer, the s.e. from the spread of the paired differences.
* :func:`effective_sample_size`: arviz's ``ess = N / tau`` of a mean from
  the per-unit variance and its Monte Carlo s.e.
* :func:`proportion_interval`: exact (Clopper-Pearson) interval of a binomial
  proportion, coverage at least the level for every true value and count.
* :func:`same_value`: equal within :data:`EXACT_ULPS` units in the last place.
* :func:`proportion_test`: z and p of a 0/1 share against an exact value,
  the exact binomial test (doubled smaller tail), whatever the count.
* :data:`ROUNDOFF`: the relative floor below which a spread is float round-off, read as 0.
* :func:`count_interval`: a count-based (Poisson, dispersion-scaled) interval of
  a frequency whose labels have too few counts for a t interval.
* :func:`pooled_unit_stderr`: standard error of a mean over units (games)
  from pooled sums and sums of squares, ``df = N - 1``.
* :func:`replicate_ratio_stderr`: standard error of a ratio of sums from
  the spread of R independent replicates, ``df = R - 1``.
* :func:`t_interval`: ``estimate -+ t(1 - a/2, df) s.e.``, the one interval
  every table uses.
* :func:`t_test`: two-sided p-value of ``(estimate - reference) / s.e.``
  against Student's t with ``df`` degrees of freedom.
* :func:`chi2_gof`: chi-square goodness of fit of pooled multinomial counts,
  adjacent bins merged until every expected count is at least 5.
* :func:`share_difference`: the difference of two exclusive win shares
  averaged over strata (seat orders), its s.e. per game, interval and test.
* the power of a t test (:data:`POWER`, :func:`t_power`,
  :func:`detectable_bias`, :func:`replicates_for_bias`) is in
  :mod:`boardsweep.core.power`.
"""

from __future__ import annotations

import numpy as np
from scipy import special as _sc  # Student's t and chi-square tails; scipy.stats takes ~1.5 s to import


__all__ = ["loglog_slope", "ratio_batch_variance", "welch_test", "holm", "variance_decomposition", "paired_test", "effective_sample_size", "proportion_interval", "EXACT_ULPS", "same_value", "proportion_test", "ROUNDOFF", "count_interval", "pooled_unit_stderr", "replicate_ratio_stderr", "t_interval", "t_test", "chi2_gof", "MIN_EXPECTED", "share_difference"]

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def loglog_slope(x: np.ndarray, y: np.ndarray, min_points: int = 3) -> tuple[float, float]:
    """Slope (and its standard error) of the least-squares line of ``log y`` on ``log x``.

    Entries where ``x`` or ``y`` is not finite and positive are skipped.  With
    fewer than ``min_points`` usable points the result is ``(nan, nan)``; with
    exactly two points the standard error is NaN.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if ok.sum() < max(min_points, 2):
        return np.nan, np.nan
    lx, ly = np.log(x[ok]), np.log(y[ok])
    if np.ptp(lx) == 0:
        return np.nan, np.nan
    sxx, sxy, _, syy = np.cov(lx, ly, bias=True).flat  # as scipy.stats.linregress computes it
    if ok.sum() == 2:
        return float(sxy / sxx), np.nan
    r = np.clip(sxy / np.sqrt(sxx * syy), -1.0, 1.0) if syy > 0 else np.nan
    return float(sxy / sxx), float(np.sqrt((1.0 - r * r) * syy / sxx / (ok.sum() - 2)))


def _align(c: np.ndarray, e: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Batches first; ``e`` (same shape as ``c`` or its leading dims) broadcast."""
    c = np.moveaxis(np.asarray(c, dtype=np.float64), axis, 0)
    e = np.asarray(e, dtype=np.float64)
    if e.ndim == c.ndim:
        e = np.moveaxis(e, axis, 0)
    else:
        e = e.reshape(e.shape + (1,) * (c.ndim - e.ndim))
    return c, np.broadcast_to(e, c.shape)


def ratio_batch_variance(c: np.ndarray, e: np.ndarray, axis: int = 0) -> np.ndarray:
    """Variance of ``R = sum c / sum e`` from consecutive batches of one run.

    ``c`` and ``e`` hold per-batch totals along ``axis`` (``e`` has the shape
    of ``c`` or of its leading dims, batches first); batches may differ in
    size.  With ``r_j = c_j - R e_j`` and batches long enough to be nearly
    independent, ``E[sum r_j^2] ~ s^2 (n - sum n_j^2 / n)`` where
    ``n_j = e_j``, ``n = sum n_j`` and ``s^2`` is the asymptotic variance of
    ``c - R e`` per unit of ``e``, so

        Var(R) ~ s^2 / n,   s^2 = sum r_j^2 / (n - sum n_j^2 / n).

    For equal batches this is the classical ``B / (B - 1)`` batch-means formula.
    Batches with NaN are skipped; fewer than two usable batches give NaN.
    """
    c, e = _align(c, e, axis)
    ok = np.isfinite(c) & np.isfinite(e) & (e > 0)
    c0, e0 = np.where(ok, c, 0.0), np.where(ok, e, 0.0)
    n = e0.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        R = c0.sum(axis=0) / n
        r = np.where(ok, c0 - R * e0, 0.0)
        denom = n - (e0 * e0).sum(axis=0) / n
        var = (r * r).sum(axis=0) / denom / n
    return np.where((ok.sum(axis=0) >= 2) & (denom > 0), var, np.nan)


def welch_test(
    mean1: np.ndarray, var1: np.ndarray, n1: np.ndarray,
    mean2: np.ndarray, var2: np.ndarray, n2: np.ndarray,
) -> dict[str, np.ndarray]:
    """Welch's t-test of ``mean1 - mean2`` (sample variances ``var``, sizes ``n``).

    Returns ``difference``, ``stderr``, ``t``, ``df`` (Welch-Satterthwaite)
    and two-sided ``p``; NaN where a side has fewer than two values.
    """
    m1, v1, n1 = (np.asarray(a, dtype=np.float64) for a in (mean1, var1, n1))
    m2, v2, n2 = (np.asarray(a, dtype=np.float64) for a in (mean2, var2, n2))
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = v1 / n1, v2 / n2
        se = np.sqrt(a + b)
        diff = m1 - m2
        t = diff / se
        df = (a + b) ** 2 / (a * a / (n1 - 1) + b * b / (n2 - 1))
        p = 2.0 * _sc.stdtr(df, -np.abs(t))
    bad = (n1 < 2) | (n2 < 2)
    nan = np.nan
    return {
        "difference": np.where(bad, nan, diff),
        "stderr": np.where(bad, nan, se),
        "t": np.where(bad, nan, t),
        "df": np.where(bad, nan, df),
        "p": np.where(bad | ~np.isfinite(t), nan, p),
    }


def holm(p: np.ndarray, axis: int = -1) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values along ``axis`` (NaN entries ignored
    and left NaN; the family is the finite entries)."""
    p = np.moveaxis(np.asarray(p, dtype=np.float64), axis, -1)
    row = np.where(np.isfinite(p), p, np.nan)  # inf is no p-value either
    order = np.argsort(row, axis=-1, kind="stable")  # NaN last
    ranked = np.take_along_axis(row, order, axis=-1)
    m = np.isfinite(row).sum(axis=-1, keepdims=True)
    adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(row.shape[-1])) * ranked), axis=-1)  # NaN stays last
    out = np.empty_like(adj)
    np.put_along_axis(out, order, adj, axis=-1)
    return np.moveaxis(out, -1, axis)


def variance_decomposition(
    estimate: np.ndarray, conditional_mean: np.ndarray, axis: int = 0
) -> dict[str, np.ndarray]:
    """Split the spread of replicate estimates into environment and sampling parts.

    Replicate ``r`` plays a random environment (e.g. a deck shuffle) whose
    exact answer is ``conditional_mean[r]``; ``estimate[r]`` is its Monte
    Carlo estimate.  By the law of total variance ``Var(estimate) =
    Var(conditional_mean) + E[Var(estimate | environment)]``:

    * ``total``: sample variance of ``estimate`` (ddof 1);
    * ``between``: sample variance of ``conditional_mean`` (ddof 1);
    * ``sampling``: mean of ``(estimate - conditional_mean)^2`` (unbiased for
      the expected conditional variance when the estimate is conditionally
      unbiased);
    * ``between_share``: ``between / (between + sampling)``.

    NaN replicates are skipped.
    """
    x = np.asarray(estimate, dtype=np.float64)
    m = np.asarray(conditional_mean, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(m)
    x, m = np.where(ok, x, np.nan), np.where(ok, m, np.nan)
    n = ok.sum(axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"), _quiet():
        total = np.nanvar(x, axis=axis, ddof=1)
        between = np.nanvar(m, axis=axis, ddof=1)
        sampling = np.nanmean((x - m) ** 2, axis=axis)
        share = between / (between + sampling)
    few = n < 2
    return {
        "total": np.where(few, np.nan, total),
        "between": np.where(few, np.nan, between),
        "sampling": np.where(n < 1, np.nan, sampling),
        "between_share": np.where(few, np.nan, share),
        "n": n,
    }


def paired_test(estimate: np.ndarray, conditional_mean: np.ndarray, axis: int = 0) -> dict[str, np.ndarray]:
    """The paired t test of replicate estimates against their own exact answers.

    Replicate ``r`` estimates ``estimate[r]`` in an environment (a deck order)
    whose exact answer is ``conditional_mean[r]``; with ``d_r = estimate[r] -
    conditional_mean[r]`` over the ``n`` replicates where both are finite,
    ``t = mean(d) / (sd(d) / sqrt(n))`` with ``n - 1`` degrees of freedom.  The
    between-environment spread cancels in ``d``: dividing by the total
    replicate s.d. instead would hide a bias behind the deck-to-deck spread.

    Returns
    -------
    dict
        ``difference`` (mean d), ``sd`` (of d, ddof 1), ``stderr``, ``t``,
        ``df`` and the two-sided ``p``; NaN where fewer than 2 pairs or sd 0.
    """
    x = np.asarray(estimate, dtype=np.float64)
    m = np.asarray(conditional_mean, dtype=np.float64)
    d = np.where(np.isfinite(x) & np.isfinite(m), x - m, np.nan)
    n = np.isfinite(d).sum(axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"), _quiet():
        mean = np.nanmean(d, axis=axis)
        sd = np.nanstd(d, axis=axis, ddof=1)
        se = sd / np.sqrt(n)
        t = np.where(se > 0, mean / se, np.nan)
        p = 2.0 * _sc.stdtr(np.maximum(n - 1, 1), -np.abs(t))
    few = n < 2
    nan = np.nan
    return {"difference": np.where(n < 1, nan, mean), "sd": np.where(few, nan, sd),
            "stderr": np.where(few, nan, se), "t": np.where(few, nan, t),
            "df": np.where(few, nan, n - 1.0), "p": np.where(few | ~np.isfinite(t), nan, p)}


def effective_sample_size(unit_variance: np.ndarray, mcse: np.ndarray) -> np.ndarray:
    """arviz's effective sample size of a mean, ``ess = N / tau``, as
    ``unit_variance / mcse^2``: the number of independent units (games,
    turns) whose mean would have the Monte Carlo standard error ``mcse``.

    For a frequency per event ``unit_variance = f (1 - f)`` and ``mcse`` the
    replicates' (arviz's ``mcse = sd / sqrt(ess)`` turned round); the events
    of one Markov chain are correlated, so ``ess`` is below the events
    counted and ``ess / events = 1 / tau``.  NaN where either is missing or
    ``mcse`` is 0.
    """
    v = np.asarray(unit_variance, dtype=np.float64)
    e = np.asarray(mcse, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((e > 0) & np.isfinite(v), v / (e * e), np.nan)


class _quiet:
    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        self._w.__exit__(*exc)


def proportion_interval(
    successes: np.ndarray, trials: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Clopper-Pearson) two-sided ``level`` interval of ``successes / trials``.

    The ends are the Beta quantiles ``B((1 - level)/2; k, n - k + 1)`` and
    ``B((1 + level)/2; k + 1, n - k)``; at ``k = 0`` the low end is 0 and at
    ``k = n`` the high end is 1, so an interval is never a single point (none
    of 4,000 games in a bin: ``[0, 9.2e-4]``; every one of them won:
    ``[0.99908, 1]``).  Its coverage is at least ``level`` for every true
    proportion and count (Wilson's dips to 90% where a bin expects about one
    count); it is above ``level`` where the count is small (97-99.9% at expected counts of 5
    or less) and tends to it as the count grows.

    Parameters
    ----------
    successes, trials : array_like
        Counts, broadcast together (``0 <= successes <= trials``).
    level : float
        Two-sided level, in (0, 1).

    Returns
    -------
    (ndarray, ndarray)
        ``low`` and ``high``; NaN where ``trials`` is 0 or missing.
    """
    k, n = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (successes, trials)))
    ok = np.isfinite(k) & np.isfinite(n) & (n > 0) & (k >= 0) & (k <= n)
    k1, n1 = np.where(ok, k, 0.0), np.where(ok, n, 1.0)
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(k1 > 0, _sc.betaincinv(np.maximum(k1, 1.0), n1 - k1 + 1.0, tail), 0.0)
        high = np.where(k1 < n1, _sc.betaincinv(k1 + 1.0, np.maximum(n1 - k1, 1.0), 1.0 - tail), 1.0)
    return np.where(ok, low, np.nan), np.where(ok, high, np.nan)


#: Units in the last place within which a simulated and an exact value are
#: the same number: an exact solver's rounding (one-player Chutes and Ladders'
#: exact win share is 0.9999999999999973, 24 ulps below 1).
EXACT_ULPS = 64


def same_value(a: np.ndarray, b: np.ndarray, ulps: int = EXACT_ULPS) -> np.ndarray:
    """``|a - b|`` at most ``ulps`` units in the last place of the larger of
    ``|a|`` and ``|b|`` (never compare floats bit for bit); False where either is NaN."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.abs(a - b) <= ulps * np.spacing(np.maximum(np.abs(a), np.abs(b)))


def proportion_test(
    successes: np.ndarray, trials: np.ndarray, stderr: np.ndarray, df: np.ndarray, reference: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Exact binomial test of a 0/1 share ``successes / trials`` against ``reference``.

    The units (games) are independent, so the count ``k`` of ``n`` is
    Binomial(n, p0) under the reference: ``p = min(1, 2 min(P(X <= k), P(X >= k)))``
    (the doubled smaller tail), whose size is at most the nominal level for
    every ``n`` and ``p0`` (a z test on the pooled s.e. had 7.3% at nominal 1%
    where few wins were expected; where every unit or none had the outcome
    its s.e. is 0 and its z nothing).  ``p0`` is read as 1 or 0 when it is
    that within :data:`EXACT_ULPS` (a solver's rounding).  ``z`` is the normal
    deviate of that p, signed like ``p_hat - p0``: 0 where they agree.
    ``stderr`` and ``df`` are accepted for the call's shape and not used.

    Returns
    -------
    (ndarray, ndarray)
        ``z`` and the two-sided ``p``, NaN where the reference or the counts are missing.
    """
    k, n, _, _, ref = np.broadcast_arrays(
        *(np.asarray(a, dtype=np.float64) for a in (successes, trials, stderr, df, reference)))
    ok = np.isfinite(k) & np.isfinite(n) & (n > 0) & (k >= 0) & (k <= n) & np.isfinite(ref)
    k1, n1 = np.where(ok, k, 0.0), np.where(ok, n, 1.0)
    p0 = np.where(same_value(ref, 1.0), 1.0, np.where(same_value(ref, 0.0), 0.0, np.clip(np.nan_to_num(ref), 0.0, 1.0)))
    with np.errstate(invalid="ignore", divide="ignore"):
        # P(X <= k) = I_{1-p0}(n - k, k + 1), P(X >= k) = I_{p0}(k, n - k + 1)
        below = np.where(k1 >= n1, 1.0, _sc.betainc(np.maximum(n1 - k1, 1.0), k1 + 1.0, 1.0 - p0))
        above = np.where(k1 <= 0, 1.0, _sc.betainc(np.maximum(k1, 1.0), n1 - k1 + 1.0, p0))
        p = np.clip(2.0 * np.minimum(below, above), 0.0, 1.0)
        sign = np.sign(k1 / n1 - p0)
        z = sign * np.where(p >= 1.0, 0.0, -_sc.ndtri(p / 2.0))
    return np.where(ok, z, np.nan), np.where(ok, p, np.nan)


#: Relative floor of a spread: a replicate s.e. at most ``ROUNDOFF |estimate|``,
#: or a per-unit variance at most ``ROUNDOFF`` times the mean square, is float
#: round-off of a spread that is exactly 0 (tied replicates, equal games), and
#: is read as 0: 450 times double precision's round-off, and below any real
#: spread of integer counts under 10^12.
ROUNDOFF = 1e-13


def count_interval(
    total: np.ndarray, units: np.ndarray, dispersion: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Count-based interval of a frequency ``total / units`` with few counts.

    The pooled count ``K`` of events over ``N`` units is taken as Poisson
    with its variance scaled by ``phi = max(1, dispersion)`` (a Markov
    chain's visits cluster): ``K / phi`` is a Poisson count of mean
    ``f N / phi``, and the exact (Garwood) interval of its mean,
    ``[G^-1((1 - level)/2; K/phi), G^-1((1 + level)/2; K/phi + 1)] phi / N``
    (``G`` the regularised gamma), is clipped to ``[0, 1]``.  At ``K = 0``
    the low end is 0 and the high end positive: never a single point.

    Parameters
    ----------
    total, units : array_like
        The pooled count and the pooled units (events, turns), broadcast together.
    dispersion : array_like
        Observed variance of the counts over the Poisson variance (NaN or
        below 1 reads as 1).
    level : float
        Two-sided level.

    Returns
    -------
    (ndarray, ndarray)
        ``low`` and ``high``; NaN where ``units`` is not positive.
    """
    k, n, d = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (total, units, dispersion)))
    ok = np.isfinite(k) & np.isfinite(n) & (n > 0) & (k >= 0)
    phi = np.where(np.isfinite(d) & (d > 1.0), d, 1.0)
    keff = np.where(ok, k, 0.0) / phi
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(keff > 0, _sc.gammaincinv(np.maximum(keff, 1e-300), tail), 0.0) * phi / n
        high = _sc.gammaincinv(keff + 1.0, 1.0 - tail) * phi / n
    return np.where(ok, np.clip(low, 0.0, 1.0), np.nan), np.where(ok, np.clip(high, 0.0, 1.0), np.nan)


def pooled_unit_stderr(
    total: np.ndarray, squares: np.ndarray, units: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-unit sd, standard error and degrees of freedom of a mean over ``N``
    independent units (games) from pooled sums.

    ``total = sum x``, ``squares = sum x^2`` over the ``N = units`` units, so
    ``s^2 = (sum x^2 - (sum x)^2 / N) / (N - 1)``, ``se = s / sqrt(N)`` and
    ``df = N - 1``.  A 0/1 outcome (a win, a game in a histogram bin) has
    ``squares = total``.  A variance at most :data:`ROUNDOFF` times the
    mean square is round-off of 0 (every unit equal) and is returned as 0.
    Returns ``(s, se, df)``, NaN where ``N < 2``.
    """
    t = np.asarray(total, dtype=np.float64)
    q = np.asarray(squares, dtype=np.float64)
    n = np.asarray(units, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.maximum(q - t * t / n, 0.0) / (n - 1)
        var = np.where(var <= ROUNDOFF * q / n, 0.0, var)  # every unit equal: round-off of 0
        sd = np.sqrt(var)
        se = sd / np.sqrt(n)
    few = ~(n >= 2)
    return np.where(few, np.nan, sd), np.where(few, np.nan, se), np.where(few, np.nan, n - 1)


def replicate_ratio_stderr(
    numerator: np.ndarray, denominator: np.ndarray, axis: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ratio of sums over independent replicates with its linearised standard error.

    ``R_hat = sum c_r / sum e_r`` over the ``n`` finished replicates (NaN
    ones skipped); with ``d_r = c_r - R_hat e_r`` and ``e_bar`` the mean
    denominator, ``se^2 = sum d_r^2 / (n (n - 1) e_bar^2)`` and ``df = n - 1``
    (equal denominators: the sd of the replicates' own ratios over sqrt(n)).
    Returns ``(estimate, sd, se, df)`` with ``sd = se sqrt(n)`` (the spread
    of one replicate's ratio); se NaN where fewer than 2 replicates, and
    exactly 0 where it is at most :data:`ROUNDOFF` ``|R_hat|`` (replicates
    whose ratios are equal: ``d_r`` is float round-off, ~1e-17, not a spread).
    """
    c, e = _align(numerator, denominator, axis)
    ok = np.isfinite(c) & np.isfinite(e) & (e > 0)
    c0, e0 = np.where(ok, c, 0.0), np.where(ok, e, 0.0)
    n = ok.sum(axis=0).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        est = c0.sum(axis=0) / e0.sum(axis=0)
        d = np.where(ok, c0 - est * e0, 0.0)
        ebar = e0.sum(axis=0) / n
        se = np.sqrt((d * d).sum(axis=0) / (n * (n - 1))) / ebar
        se = np.where(se <= ROUNDOFF * np.abs(est), 0.0, se)  # tied replicates: round-off of 0
    few = n < 2
    est = np.where(n < 1, np.nan, est)
    se = np.where(few, np.nan, se)
    return est, se * np.sqrt(n), se, np.where(few, np.nan, n - 1)


def t_interval(
    estimate: np.ndarray, stderr: np.ndarray, df: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided ``level`` interval ``estimate -+ t(1 - (1 - level)/2, df) se``.

    Student's t with ``df`` degrees of freedom: ``df = R - 1`` where R
    replicates are the unit, ``N - 1`` (practically normal) where N games
    are.  NaN where ``df`` is missing or below 1.
    """
    est = np.asarray(estimate, dtype=np.float64)
    se = np.asarray(stderr, dtype=np.float64)
    df = np.asarray(df, dtype=np.float64)
    ok = df >= 1
    q = np.full(df.shape, np.nan)
    q[ok] = _sc.stdtrit(df[ok], 0.5 + level / 2)  # only where there is an interval: a special function is slow
    return est - q * se, est + q * se


def t_test(
    estimate: np.ndarray, stderr: np.ndarray, df: np.ndarray, reference: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``z = (estimate - reference) / se`` and its two-sided p-value
    ``2 P(T_df > |z|)``; NaN where the reference or the s.e. is missing or
    the s.e. is 0."""
    est, se, df, ref = (np.asarray(a, dtype=np.float64) for a in (estimate, stderr, df, reference))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, (est - ref) / se, np.nan)
        ok = np.isfinite(z) & (df >= 1)
        p = np.full(ok.shape, np.nan)
        p[ok] = 2.0 * _sc.stdtr(np.broadcast_to(df, ok.shape)[ok],  # only where tested: a special function is slow
                                -np.abs(np.broadcast_to(z, ok.shape)[ok]))
    return np.where(ok, z, np.nan), p


#: Smallest expected count of a bin that :func:`chi2_gof` tests on its own.
MIN_EXPECTED = 5.0


def chi2_gof(counts: np.ndarray, probabilities: np.ndarray, min_expected: float = MIN_EXPECTED
             ) -> tuple[float, int, float]:
    """Pearson's chi-square test that ``counts`` (one multinomial sample of
    ``N = sum counts`` independent units, e.g. games by length) follow
    ``probabilities``.

    Adjacent bins are merged, in order, until each merged bin expects at
    least ``min_expected`` units (the last group joins the one before it if
    it falls short), so sparse tails never decide; ``X^2 = sum (O - E)^2 / E``
    with ``bins - 1`` degrees of freedom.  A count in a bin whose
    probability is 0 gives ``p = 0`` (an impossible outcome was seen).  Returns ``(X^2, df, p)``; NaN p where
    fewer than 2 groups remain.
    """
    o = np.asarray(counts, dtype=np.float64)
    p = np.asarray(probabilities, dtype=np.float64)
    if not (np.isfinite(o).all() and np.isfinite(p).all()) or o.sum() <= 0:
        return np.nan, 0, np.nan
    if np.any((p == 0) & (o > 0)):
        return np.inf, 0, 0.0  # an impossible outcome was observed
    e = p / p.sum() * o.sum()
    groups_o, groups_e, acc_o, acc_e = [], [], 0.0, 0.0
    for oi, ei in zip(o, e):
        acc_o, acc_e = acc_o + oi, acc_e + ei
        if acc_e >= min_expected:
            groups_o.append(acc_o)
            groups_e.append(acc_e)
            acc_o = acc_e = 0.0
    if acc_e > 0 or acc_o > 0:
        if groups_e:
            groups_o[-1] += acc_o
            groups_e[-1] += acc_e
        else:
            groups_o, groups_e = [acc_o], [acc_e]
    go, ge = np.array(groups_o), np.array(groups_e)
    if np.any((ge == 0) & (go > 0)):
        return np.inf, max(len(go) - 1, 0), 0.0
    if len(go) < 2:
        return np.nan, 0, np.nan
    stat = float(((go - ge) ** 2 / ge).sum())
    df = len(go) - 1
    return stat, df, float(_sc.chdtrc(df, stat))


def share_difference(a: np.ndarray, b: np.ndarray, n: np.ndarray, level: float = 0.95
                     ) -> dict[str, np.ndarray]:
    """Difference of two exclusive shares, ``D = mean_j (a_j - b_j) / n_j``, over strata ``j`` (last axis).

    Each of the ``n_j`` games of stratum ``j`` (one seat order) scores
    ``X = 1`` (side A won), ``-1`` (side B won) or ``0`` (neither: a tie);
    the games are independent, so ``Var d_j = s_j^2 / n_j`` with
    ``s_j^2 = ((a_j + b_j)/n_j - d_j^2) n_j / (n_j - 1)``, and the equally
    weighted mean over the ``J`` strata (each seat order counts the same,
    whatever its games) has ``se = sqrt(sum_j s_j^2 / n_j) / J``.  The
    interval and the test of ``D = 0`` use Student's t with
    ``sum_j n_j - J`` degrees of freedom (:func:`t_interval`, :func:`t_test`).

    Parameters
    ----------
    a, b : array_like
        Games won by side A and by side B, per stratum (last axis).
    n : array_like
        Games per stratum (> 1).
    level : float
        Two-sided level of the interval.

    Returns
    -------
    dict of ndarray
        ``difference``, ``se``, ``low``, ``high``, ``z``, ``p``, ``df``,
        reduced over the last axis.
    """
    a, b, n = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (a, b, n)))
    with np.errstate(invalid="ignore", divide="ignore"):
        d = (a - b) / n
        s2 = ((a + b) / n - d * d) * n / (n - 1)
        strata = n.shape[-1]
        diff = d.mean(axis=-1)
        se = np.sqrt((s2 / n).sum(axis=-1)) / strata
    df = n.sum(axis=-1) - strata
    low, high = t_interval(diff, se, df, level)
    z, p = t_test(diff, se, df, np.zeros_like(diff))
    return {"difference": diff, "se": se, "low": low, "high": high, "z": z, "p": p, "df": df}
