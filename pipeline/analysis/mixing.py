"""Autocorrelation, the integrated autocorrelation time, ESS's reference and
the MCSE of quantiles, on draws shaped ``(..., chain, draw)``.

Array functions over arviz-stats (``arviz_stats.base.array_stats``):
:mod:`boardsweep.pipeline.analysis.draws` applies them to each headline's
equal-batch series, one chain per replicate.

* :func:`autocorrelation`: ArviZ's autocorrelation of each chain (FFT,
  divisor ``B``), averaged over the chains, lags ``0..k``:
  ``rho_k = mean_r sum_t (y_rt - ybar_r)(y_r,t+k - ybar_r) / sum_t (y_rt - ybar_r)^2``.
* :func:`integrated_time`: ``tau = R B / ESS_mean``, ArviZ's ESS of the mean
  (split chains, Geyer's initial monotone sequence), i.e.
  ``tau = 1 + 2 sum_k rho_k``: about 1 for independent batches.
* :func:`acf_limit`: the one-sided ``1 - alpha`` bound of the lag-1
  autocorrelation of independent draws, ``-1/B + z_(1-alpha) / sqrt(R B)``
  (Bartlett: each chain's ``r_1`` has mean about ``-1/B`` and variance
  ``1/B``).
* :func:`ess_reference`: the 5% and 95% quantiles of the bulk ESS of ``R``
  chains of ``B`` exchangeable draws, simulated (rank-normalised: its law
  depends only on ``R`` and ``B``), the range a label's ESS is read against.
* :func:`quantile_mcse`: the ``prob`` quantile of the pooled draws and
  ArviZ's MCSE of it (``mcse(method="quantile", prob=...)``).
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["LAGS", "ACF_ALPHA", "ESS_RANGE", "ESS_SIMS", "autocorrelation", "integrated_time", "acf_limit",
           "ess_reference", "quantile_mcse"]

#: Lags :func:`autocorrelation` returns by default (0 to 10).
LAGS = 10

#: Share of labels with independent batches whose lag-1 autocorrelation exceeds :func:`acf_limit`.
ACF_ALPHA = 0.01

#: The quantiles of the bulk ESS of exchangeable draws :func:`ess_reference` gives (a 90% range).
ESS_RANGE = (0.05, 0.95)

#: Simulated sets of draws behind :func:`ess_reference`.
ESS_SIMS = 1000


def autocorrelation(y: np.ndarray, lags: int = LAGS) -> np.ndarray:
    """The autocorrelation of draws ``y`` (..., chain, draw) at lags ``0..lags``,
    ArviZ's per chain (``array_stats.autocorr``: FFT, divisor ``B``) averaged
    over the chains: ``rho_k = mean_r c_rk / c_r0``,
    ``c_rk = sum_t (y_rt - ybar_r)(y_r,t+k - ybar_r) / B``.  Shape
    (..., lags + 1); NaN where a chain is constant or ``lags >= B``."""
    from arviz_stats.base import array_stats

    y = np.asarray(y, dtype=float)
    out = np.full((*y.shape[:-2], lags + 1), np.nan)
    if y.shape[-1] <= lags or y.shape[-1] < 2:
        return out
    with np.errstate(divide="ignore", invalid="ignore"):
        acf = np.asarray(array_stats.autocorr(y, axis=-1), dtype=float)
    return acf[..., : lags + 1].mean(axis=-2)


def integrated_time(y: np.ndarray) -> np.ndarray:
    """The integrated autocorrelation time of draws ``y`` (..., chain, draw),
    in draws: ``tau = R B / ESS_mean``, ArviZ's ESS of the mean (split
    chains, Geyer's initial monotone sequence), so ``tau = 1 + 2 sum_k rho_k``;
    about 1 where the batches are independent, ``(1 + phi) / (1 - phi)`` for
    an AR(1) series of coefficient ``phi``.  NaN with fewer than 4 draws."""
    from arviz_stats.base import array_stats

    y = np.asarray(y, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ess = np.asarray(array_stats.ess(y, method="mean"), dtype=float)
        return y.shape[-2] * y.shape[-1] / ess


def acf_limit(chains: int, draws: int, alpha: float = ACF_ALPHA) -> float:
    """The ``1 - alpha`` one-sided bound of the chains' mean lag-1
    autocorrelation where draws are independent:
    ``-1/B + z_(1-alpha) / sqrt(R B)`` (each chain's ``r_1`` has mean about
    ``-1/B``, variance about ``1/B``); 0.087 at 8 chains of 64 draws."""
    from scipy.special import ndtri

    return float(-1.0 / draws + ndtri(1.0 - alpha) / np.sqrt(chains * draws))


@functools.lru_cache(maxsize=64)
def ess_reference(chains: int, draws: int, sims: int = ESS_SIMS) -> tuple[float, float]:
    """The :data:`ESS_RANGE` quantiles (5%, 95%) of ArviZ's bulk ESS of
    ``chains`` chains of ``draws`` exchangeable continuous draws, from
    ``sims`` simulated sets (fixed seed): rank-normalised, its law depends
    on nothing else.  About (455, 634) at 8 chains of 64 draws (the ESS of
    independent draws scatters around ``R B``, beyond it too).  Cached per
    process (about 2 ms a set)."""
    from arviz_stats.base import array_stats

    rng = np.random.default_rng([chains, draws, 5454])
    found = np.empty(sims)
    for lo in range(0, sims, 500):  # 500 sets at a time: memory stays small
        x = rng.standard_normal((min(500, sims - lo), chains, draws))
        found[lo:lo + x.shape[0]] = array_stats.ess(x, method="bulk")
    low, high = np.quantile(found, ESS_RANGE)
    return float(low), float(high)


def quantile_mcse(y: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``prob`` quantile of draws ``y`` (..., chain, draw), pooled over
    chains and draws, and ArviZ's Monte Carlo s.e. of it
    (``mcse(method="quantile", prob=prob)``: half the width of the central
    68% interval of the quantile's order statistic, from the quantile's own
    ESS).  NaN with fewer than 4 draws a chain."""
    from arviz_stats.base import array_stats

    y = np.asarray(y, dtype=float)
    flat = y.reshape(*y.shape[:-2], -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.quantile(flat, prob, axis=-1)
        se = np.asarray(array_stats.mcse(y, method="quantile", prob=prob), dtype=float)
    if y.shape[-1] < 4:
        q, se = np.full_like(q, np.nan), np.full_like(se, np.nan)
    return np.asarray(q, dtype=float), se
