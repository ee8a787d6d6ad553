"""Variance of a sweep's estimates beside the theory: the game's exact CLT
variance, batch means within a replicate, and per label where the variance
comes from (:func:`label_variance`: replicate s.d., MCSE, ESS, the deck parts).

The games are reached only through :mod:`boardsweep.core.games`: the optional
``extras["asymptotic_variance"]`` (CLT theory); what a game does not provide
comes back as ``None`` or NaN.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

if TYPE_CHECKING:
    import pandas as pd

from ...core import stats
from ...core.batches import heterogeneity_test, long_batches, variance_interval
from .dataset import (MIN_COUNT, grid_axes_of, in_memory, distribution_variables, frequencies, game_of, grid_params,
                      grid_points, increments, label_values)
from .draws import DIAGNOSTIC_KEYS, NO_SERIES, headline_diagnostics
from ...core.games import Headline
from .decks import BETWEEN_DOMINATES, deck_pairs

__all__ = ["theoretical_variance", "variance_ratio", "batch_means", "long_increments", "heterogeneity",
           "DISAGREE_ALPHA", "replicate_agreement",
           "batch_diagnostics", "VARIANCE_COLUMNS", "label_variance"]


def theoretical_variance(ds: xr.Dataset, variable: str = "counts") -> xr.DataArray | None:
    """CLT variance per unit of the game's ``extras["asymptotic_variance"]``,
    dims (grid..., DIM), with ``attrs["per"]`` naming the store variable ``N``
    in ``Var(f_hat) ~ variance / N``.  NaN where the game has no theory for a
    point; None when the game has no such hook at all (or its unit is not in
    the store)."""
    game = game_of(ds)
    hook = None if game is None else game.extras.get("asymptotic_variance")
    if hook is None:
        return None
    dim = distribution_variables(ds)[variable]
    axes = grid_axes_of(ds)
    out = xr.DataArray(
        np.full([ds.sizes[a] for a in axes] + [ds.sizes[dim]], np.nan),
        dims=(*axes, dim), coords={**{a: ds[a] for a in axes}, dim: ds[dim]},
    )
    per = None
    for point, params in grid_params(ds):
        try:
            res = hook(params)
        except Exception:  # no theory for this point: stays NaN
            continue
        per = res.get("per", per)
        values = np.asarray(res["variance"], dtype=float)
        if values.shape == (ds.sizes[dim],):
            out.loc[point] = values
    if per is None or per not in ds:
        return None
    out.attrs["per"] = per
    return out


def variance_ratio(ds: xr.Dataset, variable: str = "counts", theory: xr.DataArray | None = None
                   ) -> xr.Dataset | None:
    """Measured across-replicate variance over the CLT prediction, per
    (grid..., checkpoint, DIM); it should approach 1 as steps grow.

    The prediction for replicate ``r`` is ``sigma^2 / N_r``; the ratio uses
    their mean over finished replicates.  Also ``measured`` and ``predicted``,
    and ``ratio_low`` / ``ratio_high``: its 95% interval from the measured
    variance's chi-square law on replicates - 1 degrees of freedom
    (:func:`boardsweep.core.batches.variance_interval`; at R = 4 a ratio of 1
    reads anywhere in [0.32, 13.9] of the truth's reach).
    None when the game has no theory.  ``theory``: a :func:`theoretical_variance`
    already computed (it is computed here otherwise).
    """
    ds = in_memory(ds)
    theory = theoretical_variance(ds, variable) if theory is None else theory
    if theory is None:
        return None
    freq = frequencies(ds, variable)
    n_steps = ds[theory.attrs["per"]].astype(float).where(ds[theory.attrs["per"]] > 0)
    done = freq.notnull().all(distribution_variables(ds)[variable])
    predicted = (theory / n_steps).where(done).mean("replicate")
    measured = freq.var("replicate", ddof=1).where(freq.notnull().sum("replicate") > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (measured / predicted).where(predicted > 0)
    df = freq.notnull().sum("replicate") - 1
    low, high = xr.apply_ufunc(variance_interval, ratio, df, output_core_dims=[[], []])
    return xr.Dataset({"measured": measured, "predicted": predicted, "ratio": ratio, "ratio_low": low,
                       "ratio_high": high}, attrs={"per": theory.attrs["per"]})


def batch_means(ds: xr.Dataset, variable: str = "counts", theory: xr.DataArray | None = None
                ) -> xr.Dataset:
    """Within-replicate variance of each replicate's final frequency from its own
    checkpoint increments as (unequal) batches (:func:`boardsweep.core.stats.ratio_batch_variance`).

    Returns ``variance`` (grid..., replicate, DIM), ``stderr`` its square root,
    ``batches_effective`` = n^2 / sum n_j^2 (log-spaced checkpoints leave only
    a few effective batches, so each estimate is noisy; compare medians), and,
    where the game has a theory, ``ratio`` = variance / (sigma^2 / N_r).
    """
    ds = in_memory(ds)
    dim = distribution_variables(ds)[variable]
    counts = ds[variable].astype(float)
    total = counts.sum(dim, min_count=1)
    inc = counts.diff("checkpoint", label="upper")
    first = counts.isel(checkpoint=[0])
    c = xr.concat([first, inc], "checkpoint").transpose(..., "checkpoint", dim)
    e_inc = xr.concat([total.isel(checkpoint=[0]), total.diff("checkpoint", label="upper")], "checkpoint")
    e = e_inc.transpose(..., "checkpoint")
    var = xr.apply_ufunc(
        lambda cc, ee: stats.ratio_batch_variance(cc, ee[..., None], axis=-2),
        c, e, input_core_dims=[["checkpoint", dim], ["checkpoint"]], output_core_dims=[[dim]],
    )
    n = e.sum("checkpoint", skipna=False)
    eff = n**2 / (e**2).sum("checkpoint", skipna=False)
    out = xr.Dataset({"variance": var, "stderr": np.sqrt(var), "batches_effective": eff})
    theory = theoretical_variance(ds, variable) if theory is None else theory
    if theory is not None:
        N = ds[theory.attrs["per"]].isel(checkpoint=-1).astype(float)
        out["ratio"] = (var / (theory / N)).where(theory > 0)
    return out


def long_increments(ds: xr.Dataset, variable: str = "counts") -> tuple[xr.DataArray, xr.DataArray]:
    """Batches of ``variable`` long enough to be independent stretches of a
    run: its increments between the checkpoints in the upper half of the log
    checkpoint range (:func:`boardsweep.core.batches.long_batches`; the
    first batch from the start), as ``(counts, steps)``: (grid...,
    replicate, checkpoint, DIM) and their totals over DIM."""
    dim = distribution_variables(ds)[variable]
    a = increments(ds[variable].astype(float).isel(checkpoint=long_batches(ds["checkpoint"].values)))
    return a, a.sum(dim, min_count=1)


#: Family-wise level of the replicate-disagreement flag (:func:`heterogeneity`'s ``disagree``).
DISAGREE_ALPHA = 0.01


def heterogeneity(ds: xr.Dataset, variable: str = "counts", alpha: float = DISAGREE_ALPHA) -> xr.Dataset:
    """Do the replicates of a grid point estimate one frequency?  Per
    (grid..., DIM) the weighted one-way analysis of variance of
    :func:`long_increments` (:func:`boardsweep.core.batches.heterogeneity_test`):
    ``F``, ``df_between``, ``df_within``, ``p``; ``p_holm``, Holm's adjusted p
    over every label and grid point of the store, and ``disagree``, the
    replicate-disagreement flag ``p_holm < alpha``: with correct replicates it
    fires anywhere in a sweep with probability at most ``alpha``
    (family-wise), so on at most that share of labels.  Valid for every game whose
    batches are independent (games; a chain's long stretches); NaN where a
    label's mean count per replicate is below ``MIN_COUNT`` (too discrete)."""
    ds = in_memory(ds)
    dim = distribution_variables(ds)[variable]
    a, m = long_increments(ds, variable)
    keys = ("F", "df_between", "df_within", "p")
    parts = xr.apply_ufunc(
        lambda aa, mm: tuple(heterogeneity_test(aa, mm)[k] for k in keys),
        a.transpose(..., "replicate", "checkpoint", dim), m.transpose(..., "replicate", "checkpoint"),
        input_core_dims=[["replicate", "checkpoint", dim], ["replicate", "checkpoint"]],
        output_core_dims=[[dim]] * len(keys), vectorize=True,
    )
    enough = ds[variable].isel(checkpoint=-1).mean("replicate") >= MIN_COUNT
    out = xr.Dataset({k: v.where(enough) for k, v in zip(keys, parts)})
    out["p_holm"] = out["p"].copy(data=stats.holm(out["p"].values.ravel()).reshape(out["p"].shape))
    out["disagree"] = (out["p_holm"] < alpha).where(out["p_holm"].notnull())
    out.attrs.update(alpha=alpha, flag="Holm over every label and grid point at family-wise alpha")
    return out


def replicate_agreement(ds: xr.Dataset, variable: str = "counts", alpha: float = DISAGREE_ALPHA) -> dict[str, Any]:
    """The replicate-disagreement flag in one line: of the labels
    :func:`heterogeneity` tests, how many have replicates that differ (Holm at
    family-wise ``alpha``).  Returns ``alpha``, ``labels`` (tested),
    ``flagged``, ``min_p_holm`` and ``text``; ``labels`` 0 where nothing is
    tested (fewer than 4 checkpoints, one replicate, too few counts)."""
    if variable not in distribution_variables(ds) or ds.sizes["checkpoint"] < 4 or ds.sizes["replicate"] < 2:
        found = None
    else:
        found = heterogeneity(ds, variable, alpha)
    p = found["p_holm"].values.ravel() if found is not None else np.zeros(0)
    p = p[np.isfinite(p)]
    flagged = int((p < alpha).sum())
    text = (f"replicates {'differ' if flagged else 'agree'}: {flagged} of {len(p)} labels flagged by the "
            f"heterogeneity F test across replicates (Holm at family-wise {alpha:.0%})" if len(p)
            else "replicate agreement not tested (it needs 2 replicates, 4 checkpoints and counts)")
    return {"alpha": alpha, "labels": int(len(p)), "flagged": flagged,
            "min_p_holm": float(p.min()) if len(p) else None, "text": text}


def batch_diagnostics(ds: xr.Dataset, variable: str = "counts") -> xr.Dataset:
    """ArviZ's diagnostics of ``variable``'s frequencies on the store's
    equal-batch series, one chain per replicate, one draw per batch
    (:func:`boardsweep.pipeline.analysis.draws.headline_diagnostics` of the
    headline dividing ``variable`` by its total): per (grid..., DIM)
    ``rhat`` with ``rhat_limit`` and ``rhat_high`` (above the reference
    for the design's size: a share :data:`~.draws.RHAT_ALPHA` of labels
    with correct replicates), ``ess_bulk``, ``ess_tail``, ``mcse`` (of the
    frequency), ``mcse_median`` and ``draws``, the bulk ESS's reference
    (``ess_ref_low``, ``ess_ref_high``), ``tau``, ``acf1``, ``acf1_limit``
    and ``acf1_high`` (:mod:`~.mixing`); NaN below ``MIN_COUNT``.  A
    store without series (older than format 7): all NaN, its ``note``
    attribute :data:`~.draws.NO_SERIES`."""
    ds = in_memory(ds)
    dim = distribution_variables(ds)[variable]
    h = Headline(variable, variable, variable, None, None, None, "distribution")
    found = headline_diagnostics(ds, h)
    if found is not None:
        return found
    shape = ds[variable].isel(checkpoint=-1, replicate=0)
    return xr.Dataset({k: xr.full_like(shape, np.nan, dtype=float) for k in DIAGNOSTIC_KEYS},
                      attrs={"note": NO_SERIES}).transpose(..., dim)


#: The columns of :func:`label_variance` after the grid axes, headline and label.
VARIANCE_COLUMNS = ("estimate", "replicates", "units", "replicate_sd", "mcse", "se", "ess", "ess_per_unit",
                    "clt_variance", "clt_sd", "variance_ratio", "variance_ratio_low", "variance_ratio_high",
                    "heterogeneity_p", "heterogeneity_p_holm", "replicates_disagree", "rhat", "ess_bulk", "between_var", "within_var", "between_share",
                    "between_share_low", "between_share_high", "between_share_interval", "anova_share",
                    "anova_F", "deck_difference", "deck_sd", "deck_t", "deck_df", "deck_p", "more_turns")


class _Flat:
    """Arrays as (grid points in grid order, labels), broadcast like one estimate."""

    def __init__(self, like: xr.DataArray, dims: list[str], shape: tuple[int, int]) -> None:
        self.like, self.dims, self.shape = like, dims, shape

    def of(self, da: xr.DataArray, dtype: type = float) -> np.ndarray:
        da = da.broadcast_like(self.like)
        values = da.transpose(*self.dims).values if self.dims else da.values
        return np.asarray(values, dtype=dtype).reshape(self.shape)


def label_variance(ds: xr.Dataset, found: dict[str, xr.Dataset], ratio: xr.Dataset | None = None,
                   decomp: xr.Dataset | None = None, variable: str | None = None,
                   theory: xr.DataArray | None = None) -> "pd.DataFrame":
    """Variance per grid point, headline and label, and where it comes from.

    Parameters
    ----------
    ds : xarray.Dataset
        The store.
    found : dict
        :func:`boardsweep.pipeline.analysis.headlines.estimates` of ``ds``.
    ratio : xarray.Dataset, optional
        :func:`variance_ratio` of ``variable`` (the exact CLT variance).
    decomp : xarray.Dataset, optional
        :func:`shuffle_decomposition` of ``variable`` (shuffled decks).
    variable : str, optional
        The distribution variable ``ratio`` and ``decomp`` are of.
    theory : xarray.DataArray, optional
        :func:`theoretical_variance` of ``variable`` (``sigma^2`` per unit).

    Returns
    -------
    pandas.DataFrame
        One row per grid point, headline and label with :data:`VARIANCE_COLUMNS`:
        ``replicate_sd`` (of the replicates' own ratios), ``mcse`` (arviz's
        Monte Carlo s.e. on the replicates, ``replicate_sd / sqrt(R)``),
        ``se`` (the headline's: pooled per game where the store has sums of
        squares), ``ess`` (arviz's effective sample size ``N / tau`` =
        ``unit variance / mcse^2``, the unit variance ``f (1 - f)`` of a
        frequency per event, ``sd^2`` per game; NaN for a mean with no
        per-unit variance), ``ess_per_unit`` (``1 / tau``), ``clt_variance``
        (the exact ``sigma^2`` per unit) with ``clt_sd`` (the replicate s.d.
        it predicts) and ``variance_ratio`` (``replicate_sd^2 / clt_sd^2``)
        with its 95% interval (``variance_ratio_low``, ``_high``),
        ``heterogeneity_p`` (:func:`heterogeneity`) with ``heterogeneity_p_holm``
        and ``replicates_disagree`` (the flag: Holm at :data:`DISAGREE_ALPHA`), ``rhat`` and
        ``ess_bulk`` (:func:`batch_diagnostics`, the batches of ``variable``),
        and for shuffled decks ``between_var``, ``within_var``,
        ``between_share`` (with its printed 95% interval ``between_share_low``,
        ``_high`` and its kind ``between_share_interval``:
        :func:`boardsweep.pipeline.analysis.decks.printed_share_interval`),
        the equal-batch ANOVA's own share and F (``anova_share``,
        ``anova_F``; NaN without equally spaced checkpoints) and the paired deck test (``deck_*``: the
        replicates against their own decks, the s.d. of the differences);
        ``more_turns``: "shrink it", or "will not shrink it (between deck
        orders)" where the between share is at least :data:`BETWEEN_DOMINATES`,
        empty where a game with deck orders was given no ``decomp``.
    """
    import pandas as pd

    axes = grid_axes_of(ds)
    pairs = deck_pairs(ds, decomp, variable) if decomp is not None and variable else None
    game = game_of(ds)
    # decks a replicate keeps for all its turns can only be assessed with their exact answers
    assessed = decomp is not None or game is None or "replicate_exact" not in game.extras
    batch = _batch_columns(ds, variable)
    with np.errstate(divide="ignore", invalid="ignore"):
        rows = _variance_rows(ds, found, ratio, decomp, variable, theory, pairs, assessed, batch)
    return pd.DataFrame(rows, columns=[*axes, "headline", "label", *VARIANCE_COLUMNS])


#: label_variance computes the batch diagnostics (arviz: about 5 ms a label) up to this many labels x points.
MAX_DIAGNOSED = 4000


def _batch_columns(ds, variable) -> xr.Dataset | None:
    """:func:`heterogeneity`'s p and :func:`batch_diagnostics`' R-hat and
    bulk ESS of ``variable``, or None (no variable, or too many labels)."""
    if variable is None or variable not in distribution_variables(ds):
        return None
    dim = distribution_variables(ds)[variable]
    if ds[variable].isel(checkpoint=-1, replicate=0).size > MAX_DIAGNOSED or ds.sizes["checkpoint"] < 4:
        return None
    diag = batch_diagnostics(ds, variable)
    het = heterogeneity(ds, variable)
    return xr.Dataset({"heterogeneity_p": het["p"], "heterogeneity_p_holm": het["p_holm"],
                       "replicates_disagree": het["disagree"], "rhat": diag["rhat"],
                       "ess_bulk": diag["ess_bulk"]}).transpose(..., dim)


def _extra(flat, f, ratio, decomp, theory, pairs, batch) -> dict[str, np.ndarray]:
    """The columns of the distribution variable's own headline (``f``: its
    flat estimate columns)."""
    extra: dict[str, np.ndarray] = {}
    if ratio is not None:
        predicted = ratio["predicted"].isel(checkpoint=-1)
        extra["clt_sd"] = np.sqrt(flat(predicted))
        extra["variance_ratio"] = f["replicate_sd"] ** 2 / flat(predicted)
        extra["variance_ratio_low"], extra["variance_ratio_high"] = variance_interval(
            extra["variance_ratio"], f["replicates"] - 1)
        if theory is not None:
            extra["clt_variance"] = flat(theory)
    if batch is not None:
        extra.update({k: flat(batch[k]) for k in batch.data_vars})
    if decomp is not None:
        between = flat(decomp["between"])
        # only where replicates play different decks (independent draws: one chain, nothing to split)
        shuffled = (np.nan_to_num(between, nan=0.0) > 0).any(axis=1, keepdims=True)
        parts = {"between_var": between, "within_var": flat(decomp["sampling"]),
                 "between_share": flat(decomp["between_share"]),
                 "between_share_low": flat(decomp["between_share_low"]),
                 "between_share_high": flat(decomp["between_share_high"]),
                 **{f"deck_{k}": flat(pairs[k]) for k in ("difference", "sd", "t", "df", "p")}}
        if "anova_share" in decomp:
            parts.update({"anova_share": flat(decomp["anova_share"]), "anova_F": flat(decomp["anova_F"])})
        extra.update({k: np.where(shuffled, v, np.nan) for k, v in parts.items()})
        extra["between_share_interval"] = np.where(shuffled, flat(decomp["between_share_interval"], str), "")
    return extra


def _variance_rows(ds, found, ratio, decomp, variable, theory, pairs, assessed, batch) -> list[dict[str, Any]]:
    """The rows of :func:`label_variance`."""
    axes = grid_axes_of(ds)
    points = list(grid_points(ds))
    rows = []
    for name, est in found.items():
        dim = est.attrs["dim"] or None
        labels = label_values(ds, dim) if dim else [""]
        at = _Flat(est["estimate"], [*axes, *([dim] if dim else [])], (len(points), len(labels)))
        flat = at.of
        f = {k: flat(est[k]) for k in ("estimate", "replicates", "units", "replicate_sd", "se", "sd")}
        mcse = f["replicate_sd"] / np.sqrt(np.where(f["replicates"] > 0, f["replicates"], np.nan))
        if est.attrs["basis"] == "units":
            unit_var = f["sd"] ** 2
        elif est.attrs["kind"] == "distribution":
            unit_var = f["estimate"] * (1.0 - f["estimate"])
        else:
            unit_var = np.full_like(mcse, np.nan)
        ess = stats.effective_sample_size(unit_var, mcse)
        mine = variable is not None and est.attrs.get("numerator") == variable
        extra = _extra(flat, f, ratio, decomp, theory, pairs, batch if dim else None) if mine else {}
        for i, point in enumerate(points):
            for j, label in enumerate(labels):
                if not np.isfinite(f["estimate"][i, j]):
                    continue  # a seat that does not play here
                share = extra.get("between_share", np.full_like(mcse, np.nan))[i, j]
                turns = ("will not shrink it (between deck orders)" if share >= BETWEEN_DOMINATES
                         else "shrink it" if assessed else "")
                row = {**point, "headline": name, "label": label, "estimate": f["estimate"][i, j],
                       "replicates": int(f["replicates"][i, j]), "units": f["units"][i, j],
                       "replicate_sd": f["replicate_sd"][i, j], "mcse": mcse[i, j], "se": f["se"][i, j],
                       "ess": ess[i, j], "ess_per_unit": ess[i, j] / f["units"][i, j] if f["units"][i, j] else np.nan,
                       **{k: v[i, j] for k, v in extra.items()},
                       "more_turns": turns}
                rows.append(row)
    return rows
