"""Shuffled decks (a random environment a game keeps for all its turns;
Monopoly's ``shuffled_cycle``: each game of a replicate shuffles its own
decks, so a replicate of ``G`` games plays ``G`` deck orders): the replicate
variance split into between-deck-order and sampling parts, checked by an
analysis of variance on equal batches, and the paired deck test of each
replicate against its own decks.

Needs the game's ``extras["replicate_exact"]``: the exact answer of the
environment (e.g. the deck orders) each replicate played, found from the
replicate's seed.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...core import stats
from ...core.batches import anova_share
from ..plan import replicate_seed
from .dataset import canonical_spec, grid_axes_of, in_memory, distribution_variables, frequencies, game_of, grid_params, run_shape_of
from .reference import replicate_reference

__all__ = ["shuffle_decomposition", "anova_decomposition", "equal_batches", "deck_pairs", "printed_share_interval",
           "solves", "SHARE_INTERVAL_TEXT", "BETWEEN_DOMINATES"]

#: Each kind of printed between-share interval (``between_share_interval``) in words.
SHARE_INTERVAL_TEXT = {
    "anova": "the one-way ANOVA's F interval on equal batches (its F law rests on batch means, not on the "
             "deck orders' answers being normal)",
    "none": "no interval: the checkpoints are not equally spaced, so there are no equal batches for the "
            "ANOVA, and the exact answers' F interval assumes normal deck answers, which discrete deck "
            "effects break (Monopoly's Community Chest squares: 73-90% coverage at R = 8)",
}


def _sel(obj, point: dict):
    return obj.sel(point) if point else obj


def shuffle_decomposition(
    ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1, max_solves: int = 256
) -> xr.Dataset | None:
    """Split the replicate variance into between-deck-order and sampling parts.

    Needs the game's ``extras["replicate_exact"]``: the exact answer of the
    environment (e.g. the deck shuffles) each replicate played, found from the
    replicate's seed (:func:`boardsweep.pipeline.plan.tasks.replicate_seed`),
    and, where a replicate plays several deck orders (Monopoly: one per
    game), its ``deck_frequency``: each order's answer.  ``between`` is the
    variance of a replicate's exact answer, ``s_b^2 / G`` with ``s_b^2`` the
    sample variance of all ``R G`` deck orders' answers (``R G - 1`` df;
    ``R - 1`` without per-order answers), ``sampling`` the mean of
    ``(f_r - m_r)^2`` (``R`` df), ``between_share = between / (between +
    sampling)`` with the 95% interval :func:`printed_share_interval` chooses
    (``between_share_low`` / ``_high``, its kind ``between_share_interval``),
    the same for a replicate and one deck order (both parts scale by ``1 / G``).
    Computed for grid points where it is informative and feasible; ``None``
    when the game has no hook, an error was raised (e.g. too many games per
    replicate) or it would need more than ``max_solves`` chain solves
    (:func:`solves`: one per deck order, ``G`` a replicate).  Also
    ``replicate_exact`` (grid..., replicate, DIM), ``deck_exact`` (grid...,
    replicate, deck, DIM), ``between_df`` and the independent check
    :func:`anova_decomposition` (``anova_*``).
    """
    ds = in_memory(ds)
    game = game_of(ds)
    hook = None if game is None else game.extras.get("replicate_exact")
    if hook is None or solves(ds) > max_solves:
        return None
    dim = distribution_variables(ds)[variable]
    freq = frequencies(ds, variable).isel(checkpoint=checkpoint)
    solved = _solve(ds, hook, freq, dim)
    if solved is None:
        return None
    exact, per_deck = solved
    parts = xr.apply_ufunc(
        lambda x, m: tuple(stats.variance_decomposition(x, m, axis=-1)[k] for k in ("total", "between", "sampling")),
        freq.transpose(..., dim, "replicate"), exact.transpose(..., dim, "replicate"),
        input_core_dims=[["replicate"], ["replicate"]], output_core_dims=[[], [], []],
    )
    out = xr.Dataset(dict(zip(("total", "between", "sampling"), parts)))
    n = (freq.notnull() & exact.notnull()).sum("replicate")
    out["between_df"] = n - 1
    if per_deck is not None:  # the variance of one deck order's answer over all R G orders, over G
        orders = per_deck.stack(order=("replicate", "deck"))
        df = orders.notnull().sum("order") - 1
        has = df >= 1  # points whose replicates play deck orders (not independent draws)
        out["between"] = (orders.var("order", ddof=1) / per_deck.sizes["deck"]).where(has, out["between"])
        out["between_df"] = df.where(has, out["between_df"])
        out["deck_exact"] = per_deck
    with np.errstate(divide="ignore", invalid="ignore"):
        out["between_share"] = out["between"] / (out["between"] + out["sampling"])
    out["replicate_exact"] = exact
    anova = anova_decomposition(ds, variable)
    if anova is not None:
        out.update({f"anova_{k}": v for k, v in anova.data_vars.items()})
    out.update(printed_share_interval(out))
    out.attrs["grid_axes"] = grid_axes_of(ds)
    return out


def solves(ds: xr.Dataset) -> int:
    """The chain solves :func:`shuffle_decomposition` would make, at most:
    one per deck order, ``G`` (games) per finished replicate of every point."""
    return int(ds["done"].values.sum()) * int(run_shape_of(ds).get("games", 1))


def printed_share_interval(decomp: xr.Dataset) -> dict[str, xr.DataArray]:
    """The between share's printed 95% interval, per label: the ANOVA's on
    equal batches (``anova_share_low`` / ``_high``) where it is finite, else
    none (NaN).  ``between_share_interval`` names the kind (keys of
    :data:`SHARE_INTERVAL_TEXT`: ``anova``, ``none``; empty where there is
    no share either).

    Why not the exact answers' ``F(R G - 1, R)`` interval
    (:func:`boardsweep.core.batches.share_interval`): it needs the deck
    orders' answers to be normal, and where a deck effect is discrete (which
    of a few card positions a movement card holds) it is not: over 200 real
    Monopoly sweeps at R = 8 it covered 73-90% at Community Chest 1-3,
    Pennsylvania Avenue and Short Line, and their R G answers cannot tell
    such a label apart (their sample kurtosis is biased low exactly when the
    rare order is missing; a kurtosis-widened df reached 91% only at 64
    orders).  The ANOVA's F law rests on batch means; it covered at every
    label (tests/pipeline/analysis/test_decks.py).

    Returns
    -------
    dict
        ``between_share_low``, ``between_share_high``, ``between_share_interval``.
    """
    like = decomp["between_share"]
    if "anova_share_low" in decomp:
        low, high = decomp["anova_share_low"].broadcast_like(like), decomp["anova_share_high"].broadcast_like(like)
    else:
        low = high = xr.full_like(like, np.nan, dtype=float)
    has = np.isfinite(low) & np.isfinite(high)
    kind = xr.where(has, "anova", xr.where(np.isfinite(like), "none", ""))
    return {"between_share_low": low.where(has), "between_share_high": high.where(has),
            "between_share_interval": kind}


def _solve(ds: xr.Dataset, hook, freq: xr.DataArray, dim: str) -> tuple[xr.DataArray, xr.DataArray | None] | None:
    """The exact answer of each finished replicate's environment (grid...,
    replicate, DIM), and of each of its deck orders (grid..., replicate,
    deck, DIM; None where the hook gives no ``deck_frequency``); None when
    the hook raised."""
    root = int(canonical_spec(ds).get("seed", 0))
    run_shape = run_shape_of(ds)
    exact = xr.full_like(freq, np.nan).load()
    per_deck = None
    for point, params in grid_params(ds):
        for r in ds["replicate"].values:
            if not bool(_sel(ds["done"], point).sel(replicate=r)):
                continue
            try:
                res = hook(params, replicate_seed(root, params, int(r)), run_shape)
            except Exception:
                return None
            exact.loc[{**point, "replicate": r}] = np.asarray(next(iter(res.values())), float)
            if "deck_frequency" in res:
                decks = np.asarray(res["deck_frequency"], float)
                if per_deck is None:
                    per_deck = (xr.full_like(freq, np.nan).expand_dims(deck=np.arange(len(decks)))
                                .transpose(..., "deck", dim).copy())
                per_deck.loc[{**point, "replicate": r}] = decks
    return exact, per_deck


def equal_batches(checkpoints: np.ndarray) -> np.ndarray | None:
    """Indices of the checkpoints that end equally long batches: every one
    where the checkpoints are equally spaced from 0, every one but the first
    where they are equally spaced after it; None otherwise (or fewer than 2)."""
    c = np.asarray(checkpoints, dtype=np.int64)
    step = np.diff(c)
    if c.size < 3 or not (step == step[0]).all() or step[0] <= 0:
        return None
    return np.arange(c.size) if c[0] == step[0] else np.arange(1, c.size)


def anova_decomposition(ds: xr.Dataset, variable: str = "counts") -> xr.Dataset | None:
    """The between share without exact answers: a one-way analysis of
    variance of the replicates' equal batches (increments between equally
    spaced checkpoints, :func:`equal_batches`),
    :func:`boardsweep.core.batches.anova_share` per (grid..., DIM):
    ``between``, ``sampling``, ``share`` with ``share_low`` / ``_high`` (its
    F interval), ``F``.  Valid where a replicate's batches are independent
    given its decks (long stretches of a chain).  None where the checkpoints
    are not equally spaced."""
    ds = in_memory(ds)
    keep = equal_batches(ds["checkpoint"].values)
    if keep is None:
        return None
    dim = distribution_variables(ds)[variable]
    counts = ds[variable].astype(float).where(ds["done"])
    a = xr.concat([counts.isel(checkpoint=[0]), counts.diff("checkpoint")], "checkpoint").isel(checkpoint=keep)
    m = a.sum(dim, min_count=1)
    keys = ("between", "sampling", "share", "share_low", "share_high", "F")
    parts = xr.apply_ufunc(
        lambda aa, mm: tuple(anova_share(aa, mm)[k] for k in keys),
        a.transpose(..., "replicate", "checkpoint", dim), m.transpose(..., "replicate", "checkpoint"),
        input_core_dims=[["replicate", "checkpoint", dim], ["replicate", "checkpoint"]],
        output_core_dims=[[dim]] * len(keys), vectorize=True, keep_attrs=False,
    )
    return xr.Dataset(dict(zip(keys, parts)))


def deck_pairs(ds: xr.Dataset, decomp: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.Dataset:
    """The paired deck test per grid point and label: each replicate's
    frequency against the reference it is compared with
    (:func:`boardsweep.pipeline.analysis.reference.replicate_reference`: the
    verdict's where the point has one, else the exact answer of the deck
    orders the replicate played), :func:`boardsweep.core.stats.paired_test`
    along ``replicate``: ``difference``, ``sd`` (of the paired differences),
    ``stderr``, ``t``, ``df``, ``p``.  NaN where a point has neither."""
    freq = frequencies(ds, variable).isel(checkpoint=checkpoint)
    exact = replicate_reference(ds, decomp, variable, checkpoint)
    dim = distribution_variables(ds)[variable]
    keys = ("difference", "sd", "stderr", "t", "df", "p")
    parts = xr.apply_ufunc(
        lambda x, m: tuple(stats.paired_test(x, m, axis=-1)[k] for k in keys),
        freq.transpose(..., dim, "replicate"), exact.transpose(..., dim, "replicate"),
        input_core_dims=[["replicate"], ["replicate"]], output_core_dims=[[]] * len(keys),
    )
    return xr.Dataset(dict(zip(keys, parts)))


#: A label whose between-deck share of the replicate variance is at least this
#: is one where more turns will not shrink the error (only more replicates will).
BETWEEN_DOMINATES = 0.5
