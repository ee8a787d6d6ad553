"""Draws worth diagnosing: ArviZ's convergence diagnostics on each
headline's equal-batch series, one chain per replicate.

A store of format 7 keeps, per replicate, each headline variable's counts in
``B`` equal batches of the run (``series_<name>``, ``[checkpoints] batches``,
default 64).  The draws of a headline are its batch ratios ``y_rb = a_rb /
m_rb`` (a batch's numerator over its denominator: its own total over the
label dim, or its games).  On them arviz-stats gives the rank-normalised
split R-hat, the bulk and tail ESS and the MCSE of the mean and of the
median (:func:`diagnostics`); beside them the chains' memory
(:mod:`boardsweep.pipeline.analysis.mixing`): the integrated
autocorrelation time ``tau`` (``R B / ESS_mean``), the lag-1
autocorrelation against its bound for independent batches, and the 90%
range of the bulk ESS of independent draws at the design's size (ESS's
reference); :func:`headline_autocorr` gives lags ``0..k`` and
:func:`headline_quantiles` quantiles of the draws with their MCSE.

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
from .mixing import LAGS, acf_limit, autocorrelation, ess_reference, integrated_time, quantile_mcse

__all__ = ["SERIES_DIM", "RHAT_ALPHA", "REFERENCE_SIMS", "NO_SERIES", "has_series", "headline_draws",
           "DIAGNOSTIC_KEYS", "tie_broken", "rhat_reference", "diagnostics", "headline_diagnostics", "series_summary",
           "headline_autocorr", "headline_quantiles", "QUANTILE_PROBS", "LUMPY_NOTE"]


#: Share of labels with correct replicates on which ``rhat_high`` fires.
RHAT_ALPHA = 0.01

#: Simulated sets of draws behind :func:`rhat_reference` (20 beyond its 99% quantile).
REFERENCE_SIMS = 2000

#: What the diagnostics of a store without series say (one line).
NO_SERIES = ("this store keeps no equal-batch series (made before store format 7, or with "
             "[checkpoints] batches = 0): R-hat, ESS and MCSE are not computed; run the sweep again "
             "with this boardsweep (`boardsweep run SPEC --overwrite`) to keep them")

#: The diagnostics, per (grid..., label).
DIAGNOSTIC_KEYS = ("rhat", "rhat_limit", "rhat_high", "ess_bulk", "ess_tail", "mcse", "mcse_median", "draws",
                   "ess_ref_low", "ess_ref_high", "tau", "acf1", "acf1_limit", "acf1_high")

#: What :func:`headline_quantiles` says of its MCSE (its Dataset's ``note``).
LUMPY_NOTE = ("arviz's MCSE of a quantile assumes continuous draws: where a batch holds few counts "
              "(batch_counts), the batch ratios are lumpy and the MCSE can misstate the quantile's spread "
              "several times over (docs/explanation/statistics.md, MCSE of quantiles)")

#: The quantiles :func:`headline_quantiles` gives by default.
QUANTILE_PROBS = (0.05, 0.5, 0.95)


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


def _chains(y: np.ndarray) -> np.ndarray:
    """One grid point's chains of draws ``y`` (labels, replicate, batch): the
    replicates with every batch present (seats that do not play: NaN labels)."""
    return y[:, np.isfinite(y).all(axis=2).any(axis=0), :]


def _point(y: np.ndarray, scale: float, alpha: float, kept: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """:data:`DIAGNOSTIC_KEYS` of one grid point's draws ``y`` (labels, replicate, batch):
    the replicates with every batch present are the chains; only the labels
    ``kept`` (a mask; default all) are computed, the others NaN."""
    out = {k: np.full(y.shape[0], np.nan) for k in DIAGNOSTIC_KEYS}
    x = _chains(y)
    z = tie_broken(x, scale)  # on every label: a label's ties broken alike whichever labels are kept
    if kept is not None:
        x, z = x[kept], z[kept]
    if x.shape[0] == 0 or x.shape[1] < 2 or x.shape[2] < 4:
        return out
    found = _diagnosed(x, z, alpha)
    for k in DIAGNOSTIC_KEYS:
        out[k][slice(None) if kept is None else kept] = found[k]
    return out


def _diagnosed(x: np.ndarray, z: np.ndarray, alpha: float) -> dict[str, np.ndarray]:
    """:data:`DIAGNOSTIC_KEYS` of chains ``x`` (labels, chain, batch; at least 2 chains
    of 4 batches), ``z`` the same with its ties broken (:func:`tie_broken`)."""
    from arviz_stats.base import array_stats

    out = {k: np.full(x.shape[0], np.nan) for k in DIAGNOSTIC_KEYS}
    with np.errstate(divide="ignore", invalid="ignore"):
        out["rhat"] = np.asarray(array_stats.rhat(z, method="rank"), dtype=float)
        out["ess_bulk"] = np.asarray(array_stats.ess(z, method="bulk"), dtype=float)
        out["ess_tail"] = np.asarray(array_stats.ess(z, method="tail", prob=(0.05, 0.95)), dtype=float)
        out["mcse"] = np.asarray(array_stats.mcse(x, method="mean"), dtype=float)
        out["mcse_median"] = np.asarray(array_stats.mcse(z, method="quantile", prob=0.5), dtype=float)
    out["rhat_limit"][:] = rhat_reference(x.shape[1], x.shape[2], alpha)
    out["rhat_high"] = np.where(np.isfinite(out["rhat"]), out["rhat"] > out["rhat_limit"], np.nan)
    out["draws"][:] = x.shape[1] * x.shape[2]
    out["ess_ref_low"][:], out["ess_ref_high"][:] = ess_reference(x.shape[1], x.shape[2])
    out["tau"] = integrated_time(x)
    out["acf1"] = autocorrelation(x, 1)[:, 1]
    out["acf1_limit"][:] = acf_limit(x.shape[1], x.shape[2], alpha)
    out["acf1_high"] = np.where(np.isfinite(out["acf1"]), out["acf1"] > out["acf1_limit"], np.nan)
    return out


def _flat(ds: xr.Dataset, h: Headline) -> tuple[xr.DataArray, np.ndarray, float] | None:
    """Headline ``h``'s draws as (grid..., labels..., replicate, batch), their
    values as (grid points, labels, replicate, batch), and the least gap
    between distinct ratios (:func:`tie_broken`'s ``scale``, ``1 / m^2``);
    None without series."""
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
    return flat, values, 1.0 / most**2


def _labelled(ds: xr.Dataset, h: Headline, flat: xr.DataArray, arrays: dict[str, np.ndarray],
              extra: dict[str, np.ndarray] | None = None) -> xr.Dataset:
    """``arrays`` (grid points, labels[, extra]) as a Dataset over (grid..., labels...[, extra]),
    NaN for a label whose mean count per replicate is below ``MIN_COUNT``."""
    dims = flat.dims[:-2]
    coords = {d: ds[d] for d in dims if d in ds.coords}
    shape = flat.shape[:-2] + tuple(len(v) for v in (extra or {}).values())
    out = xr.Dataset({k: xr.DataArray(v.reshape(shape), dims=(*dims, *(extra or {})), coords=coords)
                      for k, v in arrays.items()})
    out = out.assign_coords(extra or {})
    own = [d for d in dims if d not in grid_axes_of(ds)]
    last = ds[h.numerator].isel(checkpoint=-1).astype(float).mean("replicate")
    return out.where(last >= MIN_COUNT) if own else out


def headline_diagnostics(ds: xr.Dataset, h: Headline, alpha: float = RHAT_ALPHA) -> xr.Dataset | None:
    """ArviZ's diagnostics of headline ``h``'s draws (:func:`headline_draws`),
    per (grid..., [DIM]): ``rhat`` (rank-normalised split R-hat),
    ``rhat_limit`` (:func:`rhat_reference` for the point's chains and
    draws), ``rhat_high`` (``rhat > rhat_limit``: at most ``alpha`` of
    labels with correct replicates), ``ess_bulk``, ``ess_tail`` (5% and
    95% quantiles), ``mcse`` (of the mean of the draws: the headline's
    Monte Carlo s.e. where batches are equal) and ``mcse_median``,
    ``draws`` (chains x batches: the ESS of independent draws),
    ``ess_ref_low`` and ``ess_ref_high`` (the 90% range of the bulk ESS of
    independent draws at this size, :func:`~.mixing.ess_reference`),
    ``tau`` (the integrated autocorrelation time, ``draws / ESS_mean``),
    ``acf1`` (the lag-1 autocorrelation, mean over chains), ``acf1_limit``
    (its ``1 - alpha`` bound for independent batches) and ``acf1_high``.
    NaN for a label whose mean count per replicate is below ``MIN_COUNT``.
    None without series."""
    ds = in_memory(ds)
    found = _flat(ds, h)
    if found is None:
        return None
    flat, values, scale = found
    kept = _countable(ds, h, flat)
    parts = [_point(v, scale, alpha, None if kept is None else kept[i]) for i, v in enumerate(values)]
    return _labelled(ds, h, flat, {k: np.stack([p[k] for p in parts]) for k in DIAGNOSTIC_KEYS})


def _countable(ds: xr.Dataset, h: Headline, flat: xr.DataArray) -> np.ndarray | None:
    """(grid points, labels): the labels whose mean count per replicate is
    at least ``MIN_COUNT`` (those :func:`_labelled` keeps: a histogram's
    sparse tail is not diagnosed only to be dropped); None for a headline without labels."""
    axes = grid_axes_of(ds)
    own = [d for d in flat.dims[:-2] if d not in axes]
    if not own:
        return None
    last = ds[h.numerator].isel(checkpoint=-1).astype(float).mean("replicate")
    cells = flat.isel({d: 0 for d in flat.dims[-2:]}, drop=True)
    mask = (last >= MIN_COUNT).broadcast_like(cells).transpose(*cells.dims)
    return mask.values.reshape(int(np.prod([ds.sizes[a] for a in axes], dtype=np.int64)), -1)


def headline_autocorr(ds: xr.Dataset, h: Headline, lags: int = LAGS) -> xr.DataArray | None:
    """The autocorrelation of headline ``h``'s draws at lags ``0..lags``
    (:func:`~.mixing.autocorrelation`: ArviZ's per chain, mean over the
    replicates done), per (grid..., [DIM], lag); None without series."""
    ds = in_memory(ds)
    found = _flat(ds, h)
    if found is None:
        return None
    flat, values, _ = found
    acf = np.stack([autocorrelation(_chains(v), lags) for v in values])
    return _labelled(ds, h, flat, {"autocorr": acf}, {"lag": np.arange(lags + 1)})["autocorr"]


def headline_quantiles(ds: xr.Dataset, h: Headline, probs: tuple[float, ...] = QUANTILE_PROBS
                       ) -> xr.Dataset | None:
    """Quantiles of headline ``h``'s draws (the batch ratios, pooled over the
    replicates done) and ArviZ's MCSE of each (``mcse(method="quantile",
    prob=...)`` on the tie-broken draws, :func:`~.mixing.quantile_mcse`),
    per (grid..., [DIM], prob): ``quantile`` and ``mcse``, with
    ``batch_counts`` (the numerator's mean count a batch): the MCSE assumes
    continuous draws, and a ratio of few counts a batch is lumpy
    (:data:`LUMPY_NOTE`, the Dataset's ``note``); None without series."""
    ds = in_memory(ds)
    found = _flat(ds, h)
    if found is None:
        return None
    flat, values, scale = found
    q = np.full((*values.shape[:2], len(probs)), np.nan)
    se = np.full_like(q, np.nan)
    for i, v in enumerate(values):
        x = _chains(v)
        if x.shape[1] >= 1 and x.shape[2] >= 4:
            for j, p in enumerate(probs):
                q[i, :, j], se[i, :, j] = quantile_mcse(tie_broken(x, scale), p)
    out = _labelled(ds, h, flat, {"quantile": q, "mcse": se}, {"prob": np.asarray(probs, dtype=float)})
    num = ds[SERIES_PREFIX + h.numerator].astype(float)
    out["batch_counts"] = num.mean(["replicate", SERIES_DIM]).where(out["quantile"].isel(prob=0).notnull())
    return out.assign_attrs(note=LUMPY_NOTE)


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
    (the rule for hundreds of draws a chain), with the draws per label; the
    median bulk ESS beside the 90% range of independent draws' (its
    reference), the median integrated autocorrelation time and how many
    labels' lag-1 autocorrelation is above its bound (``acf1_high``: a share
    ``alpha`` where batches are independent).  Returns ``labels``, ``high``,
    ``above_1_01``, ``limit`` (the largest reference used), ``draws``,
    ``ess_bulk`` (median), ``ess_reference`` ((low, high) at the most draws),
    ``tau`` (median), ``acf1_high`` and ``text``; :data:`NO_SERIES` as
    ``text`` for a store without series."""
    found = diagnostics(ds, alpha)

    def pooled(key: str) -> np.ndarray:
        return np.concatenate([d[key].values.ravel() for d in found.values()]) if found else np.zeros(0)

    rhat, limit, draws = pooled("rhat"), pooled("rhat_limit"), pooled("draws")
    ok = np.isfinite(rhat)
    n, high = int(ok.sum()), int((rhat[ok] > limit[ok]).sum())
    out: dict[str, Any] = {"labels": n, "high": high, "above_1_01": int((rhat[ok] > 1.01).sum()) if n else 0,
                           "limit": float(np.nanmax(limit[ok])) if n else None,
                           "draws": int(np.nanmax(draws[ok])) if n else None, "ess_bulk": None,
                           "ess_reference": None, "tau": None, "acf1_high": 0}
    if not has_series(ds):
        return {**out, "text": NO_SERIES}
    if not n:
        return {**out, "text": "R-hat not computed (it needs 2 replicates done, 4 batches and counts)"}
    most = int(np.argmax(np.where(ok, draws, -1)))
    ref = (float(pooled("ess_ref_low")[most]), float(pooled("ess_ref_high")[most]))
    ess, tau = float(np.nanmedian(pooled("ess_bulk")[ok])), float(np.nanmedian(pooled("tau")[ok]))
    acf_high = int(np.nansum(pooled("acf1_high")[ok]))
    text = (f"R-hat on {out['draws']} equal-batch draws a label: {high} of {n} labels above "
            f"its reference for this size ({out['limit']:.3f}, exceeded on {alpha:.0%} of labels "
            f"when replicates agree); {out['above_1_01']} above 1.01; bulk ESS median {ess:.0f} "
            f"(independent draws: {ref[0]:.0f}-{ref[1]:.0f}, 90%); autocorrelation time median {tau:.2f} "
            f"draws, lag-1 autocorrelation above its {1 - alpha:.0%} bound on {acf_high} of {n} labels")
    return {**out, "ess_bulk": ess, "ess_reference": ref, "tau": tau, "acf1_high": acf_high, "text": text}
