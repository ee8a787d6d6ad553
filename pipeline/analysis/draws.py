"""Draws worth diagnosing: ArviZ's convergence diagnostics on each
headline's equal-batch series, one chain per replicate.

A store of format 7 keeps, per replicate, each headline variable's counts in
``B`` equal batches of the run (``series_<name>``, ``[checkpoints] batches``,
default 64).  The draws of a headline are its batch ratios ``y_rb = a_rb /
m_rb`` (a batch's numerator over its denominator: its own total over the
label dim, or its games).  On them arviz-stats gives the rank-normalised
split R-hat, the bulk and tail ESS and the MCSE of the mean and of the
median (:func:`diagnostics`).

R-hat is read against its own reference at the design's size: with
exchangeable draws (replicates that agree, batches long beside the
chain's memory) rank-normalised R-hat has a law that depends only on the
chains ``R`` and draws ``B`` (its ranks are a uniform permutation), so
its ``1 - alpha`` quantile :func:`rhat_reference` is computed once by
simulation, and ``rhat_high`` (R-hat above it) fires on a share ``alpha``
of labels whose replicates are correct.  Ties among integer counts are
broken at random (fixed seed, :func:`tie_broken`), so the reference holds
for counts too.  An older store keeps no series: its diagnostics are NaN
and :data:`NO_SERIES` says so in one line.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import xarray as xr

from ...core.games import SERIES_DIM, SERIES_PREFIX, Headline, headlines_of
from .dataset import MIN_COUNT, game_of, grid_axes_of, in_memory

__all__ = ["SERIES_DIM", "RHAT_ALPHA", "REFERENCE_SIMS", "NO_SERIES", "has_series", "headline_draws",
           "DIAGNOSTIC_KEYS", "tie_broken", "rhat_reference", "diagnostics", "headline_diagnostics", "series_summary"]


#: Share of labels with correct replicates on which ``rhat_high`` fires.
RHAT_ALPHA = 0.01

#: Simulated sets of draws behind :func:`rhat_reference` (20 beyond its 99% quantile).
REFERENCE_SIMS = 2000

#: What the diagnostics of a store without series say (one line).
NO_SERIES = ("this store keeps no equal-batch series (made before store format 7, or with "
             "[checkpoints] batches = 0): R-hat, ESS and MCSE are not computed; run the sweep again "
             "with this boardsweep (`boardsweep run SPEC --overwrite`) to keep them")

#: The diagnostics, per (grid..., label).
DIAGNOSTIC_KEYS = ("rhat", "rhat_limit", "rhat_high", "ess_bulk", "ess_tail", "mcse", "mcse_median", "draws")


def has_series(ds: xr.Dataset) -> bool:
    """Whether the store keeps equal-batch series (format 7, batches > 0)."""
    return SERIES_DIM in ds.dims and any(str(n).startswith(SERIES_PREFIX) for n in ds.data_vars)


def headline_draws(ds: xr.Dataset, h: Headline) -> xr.DataArray | None:
    """The draws of headline ``h``: per (grid..., replicate, batch[, DIM]),
    ``y_rb = a_rb / m_rb``, the batch's numerator over its denominator (the
    batch's games where the denominator is the checkpoint itself, its
    total over the label dim where there is none); NaN where a batch is
    empty or a replicate not done.  None where the store keeps no series of
    ``h``'s numerator."""
    num = ds.get(SERIES_PREFIX + h.numerator)
    if num is None:
        return None
    num = num.astype(float)
    if h.denominator == "checkpoint":
        ends = ds[SERIES_DIM].astype(float)
        den = ends.diff(SERIES_DIM, label="upper").reindex({SERIES_DIM: ends[SERIES_DIM]}).fillna(ends[0])
    elif h.denominator is None or SERIES_PREFIX + h.denominator not in ds:
        own = [d for d in num.dims if d not in (*grid_axes_of(ds), "replicate", SERIES_DIM)]
        if h.denominator is not None or len(own) != 1:
            return None
        den = num.sum(own[0], min_count=1)
    else:
        den = ds[SERIES_PREFIX + h.denominator].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (num / den.where(den > 0)).transpose(*grid_axes_of(ds), "replicate", SERIES_DIM, ...)


def tie_broken(y: np.ndarray, scale: float, seed: int = 54) -> np.ndarray:
    """``y`` with ties broken at random: ``y + u scale / 10``, ``u`` uniform
    on (-1/2, 1/2) from a fixed seed, ``scale`` the least gap between two
    distinct values (``1 / m^2`` for ratios of batches of at most ``m``
    units), so no two distinct values change order, nor do their distances
    from the median; tied values take a random order, as continuous draws
    would (:func:`rhat_reference`'s law)."""
    u = np.random.default_rng(seed).random(y.shape) - 0.5
    return y + u * (scale / 10.0)


@functools.lru_cache(maxsize=64)
def rhat_reference(chains: int, draws: int, alpha: float = RHAT_ALPHA, sims: int = REFERENCE_SIMS) -> float:
    """The ``1 - alpha`` quantile of arviz's rank-normalised split R-hat of
    ``chains`` chains of ``draws`` exchangeable continuous draws (its law
    depends on nothing else: the ranks are a uniform permutation), from
    ``sims`` simulated sets (fixed seed); about 1.018 at 8 chains of 64
    draws, 1.030 at 4 of 64, 1.039 at 8 of 32, 1.063 at 4 of 32, where 1.01
    is the rule for hundreds of draws a chain.  Cached per process (about
    2 ms a set: 4 s at 8 x 64 on a loaded 2-core Xeon)."""
    from arviz_stats.base import array_stats

    rng = np.random.default_rng([chains, draws, 54])
    found = np.empty(sims)
    for lo in range(0, sims, 500):  # 500 sets at a time: memory stays small
        x = rng.standard_normal((min(500, sims - lo), chains, draws))
        found[lo:lo + x.shape[0]] = array_stats.rhat(x, method="rank")
    return float(np.quantile(found, 1.0 - alpha))


def _point(y: np.ndarray, scale: float, alpha: float) -> dict[str, np.ndarray]:
    """:data:`DIAGNOSTIC_KEYS` of one grid point's draws ``y`` (labels, replicate, batch):
    the replicates with every batch present are the chains."""
    from arviz_stats.base import array_stats

    out = {k: np.full(y.shape[0], np.nan) for k in DIAGNOSTIC_KEYS}
    chains = np.isfinite(y).all(axis=2).any(axis=0)  # a replicate done (seats that do not play: NaN labels)
    x = y[:, chains, :]
    if x.shape[1] < 2 or x.shape[2] < 4:
        return out
    z = tie_broken(x, scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["rhat"] = np.asarray(array_stats.rhat(z, method="rank"), dtype=float)
        out["ess_bulk"] = np.asarray(array_stats.ess(z, method="bulk"), dtype=float)
        out["ess_tail"] = np.asarray(array_stats.ess(z, method="tail", prob=(0.05, 0.95)), dtype=float)
        out["mcse"] = np.asarray(array_stats.mcse(x, method="mean"), dtype=float)
        out["mcse_median"] = np.asarray(array_stats.mcse(z, method="quantile", prob=0.5), dtype=float)
    out["rhat_limit"][:] = rhat_reference(x.shape[1], x.shape[2], alpha)
    out["rhat_high"] = np.where(np.isfinite(out["rhat"]), out["rhat"] > out["rhat_limit"], np.nan)
    out["draws"][:] = x.shape[1] * x.shape[2]
    return out


def headline_diagnostics(ds: xr.Dataset, h: Headline, alpha: float = RHAT_ALPHA) -> xr.Dataset | None:
    """ArviZ's diagnostics of headline ``h``'s draws (:func:`headline_draws`),
    per (grid..., [DIM]): ``rhat`` (rank-normalised split R-hat),
    ``rhat_limit`` (:func:`rhat_reference` for the point's chains and
    draws), ``rhat_high`` (``rhat > rhat_limit``: at most ``alpha`` of
    labels with correct replicates), ``ess_bulk``, ``ess_tail`` (5% and
    95% quantiles), ``mcse`` (of the mean of the draws: the headline's
    Monte Carlo s.e. where batches are equal) and ``mcse_median``, and
    ``draws`` (chains x batches: the ESS of independent draws).  NaN for a
    label whose mean count per replicate is below ``MIN_COUNT``.  None
    without series."""
    ds = in_memory(ds)
    y = headline_draws(ds, h)
    if y is None:
        return None
    axes = grid_axes_of(ds)
    own = [d for d in y.dims if d not in (*axes, "replicate", SERIES_DIM)]
    flat = y.transpose(*axes, *own, "replicate", SERIES_DIM)
    values = flat.values.reshape(int(np.prod([ds.sizes[a] for a in axes], dtype=np.int64)), -1,
                                 *flat.shape[-2:])
    den = ds[SERIES_PREFIX + h.numerator].sum([d for d in ds[SERIES_PREFIX + h.numerator].dims
                                               if d not in (*axes, "replicate", SERIES_DIM)])
    if h.denominator not in (None, "checkpoint") and SERIES_PREFIX + h.denominator in ds:
        den = ds[SERIES_PREFIX + h.denominator]
    elif h.denominator == "checkpoint":
        den = ds[SERIES_DIM].diff(SERIES_DIM)
    most = max(float(np.nanmax(np.asarray(den, dtype=float))), 1.0)
    parts = [_point(v, 1.0 / most**2, alpha) for v in values]
    shape = flat.shape[:-2]
    out = xr.Dataset({k: xr.DataArray(np.stack([p[k] for p in parts]).reshape(shape), dims=flat.dims[:-2],
                                      coords={d: ds[d] for d in flat.dims[:-2] if d in ds.coords})
                      for k in DIAGNOSTIC_KEYS})
    last = ds[h.numerator].isel(checkpoint=-1).astype(float).mean("replicate")
    return out.where(last >= MIN_COUNT) if own else out


def diagnostics(ds: xr.Dataset, alpha: float = RHAT_ALPHA) -> dict[str, xr.Dataset]:
    """:func:`headline_diagnostics` of every headline of the store's game
    that has series; empty for a store without (:data:`NO_SERIES`)."""
    game = game_of(ds)
    if game is None or not has_series(ds):
        return {}
    found = {h.name: headline_diagnostics(ds, h, alpha) for h in headlines_of(game)}
    return {k: v for k, v in found.items() if v is not None}


def series_summary(ds: xr.Dataset, alpha: float = RHAT_ALPHA) -> dict[str, Any]:
    """The diagnostics in one line: over every headline and label diagnosed,
    how many have R-hat above its reference (``rhat_high``: on a share
    ``alpha`` of labels when replicates agree), and how many above 1.01
    (the rule for hundreds of draws a chain), with the draws per label.
    Returns ``labels``, ``high``, ``above_1_01``, ``limit`` (the largest
    reference used), ``draws`` and ``text``; :data:`NO_SERIES` as ``text``
    for a store without series."""
    found = diagnostics(ds, alpha)
    rhat = np.concatenate([d["rhat"].values.ravel() for d in found.values()]) if found else np.zeros(0)
    limit = np.concatenate([d["rhat_limit"].values.ravel() for d in found.values()]) if found else np.zeros(0)
    draws = np.concatenate([d["draws"].values.ravel() for d in found.values()]) if found else np.zeros(0)
    ok = np.isfinite(rhat)
    n, high = int(ok.sum()), int((rhat[ok] > limit[ok]).sum())
    if not has_series(ds):
        text = NO_SERIES
    elif not n:
        text = "R-hat not computed (it needs 2 replicates done, 4 batches and counts)"
    else:
        text = (f"R-hat on {int(np.nanmax(draws[ok]))} equal-batch draws a label: {high} of {n} labels above "
                f"its reference for this size ({np.nanmax(limit[ok]):.3f}, exceeded on {alpha:.0%} of labels "
                f"when replicates agree); {int((rhat[ok] > 1.01).sum())} above 1.01")
    return {"labels": n, "high": high, "above_1_01": int((rhat[ok] > 1.01).sum()) if n else 0,
            "limit": float(np.nanmax(limit[ok])) if n else None,
            "draws": int(np.nanmax(draws[ok])) if n else None, "text": text}
