"""Shuffled decks (a random environment a replicate keeps for all its
turns): the replicate variance split into between-deck and sampling parts,
and the paired deck test of each replicate against its own decks.

Needs the game's ``extras["replicate_exact"]``: the exact answer of the
environment (e.g. the deck orders) each replicate played, found from the
replicate's seed.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...core import stats
from ...core.batches import share_interval
from ..plan.tasks import replicate_seed
from .dataset import _canonical, _grid, _mem, distribution_variables, frequencies, game_of, grid_params, run_shape_of
from .reference import replicate_reference

__all__ = ["shuffle_decomposition", "deck_pairs", "BETWEEN_DOMINATES"]


def _sel(obj, point: dict):
    return obj.sel(point) if point else obj


def shuffle_decomposition(
    ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1, max_solves: int = 256
) -> xr.Dataset | None:
    """Split the replicate variance into between-environment and sampling parts.

    Needs the game's ``extras["replicate_exact"]``: the exact answer of the
    environment (e.g. the deck shuffles) each replicate played, found from the
    replicate's seed (:func:`boardsweep.pipeline.plan.tasks.replicate_seed`).  Computed for
    grid points where it is informative (the per-replicate answers differ)
    and feasible; ``None`` when the game has no hook, an error was raised
    (e.g. too many games per replicate) or it would need more than
    ``max_solves`` calls.  Returns (grid..., DIM): ``total``, ``between``,
    ``sampling``, ``between_share`` with its 95% interval
    ``between_share_low`` / ``_high`` (:func:`boardsweep.core.batches.share_interval`),
    and ``replicate_exact`` (grid..., replicate, DIM).
    """
    ds = _mem(ds)
    game = game_of(ds)
    hook = None if game is None else game.extras.get("replicate_exact")
    if hook is None:
        return None
    dim = distribution_variables(ds)[variable]
    done = ds["done"].values
    if int(done.sum()) > max_solves:
        return None
    root = int(_canonical(ds).get("seed", 0))
    run_shape = run_shape_of(ds)
    freq = frequencies(ds, variable).isel(checkpoint=checkpoint)
    exact = xr.full_like(freq, np.nan).load()
    axes = _grid(ds)
    for point, params in grid_params(ds):
        for r in ds["replicate"].values:
            if not bool(_sel(ds["done"], point).sel(replicate=r)):
                continue
            try:
                res = hook(params, replicate_seed(root, params, int(r)), run_shape)
            except Exception:
                return None
            values = next(iter(res.values()))
            exact.loc[{**point, "replicate": r}] = np.asarray(values, float)
    parts = xr.apply_ufunc(
        lambda x, m: tuple(stats.variance_decomposition(x, m, axis=-1)[k]
                           for k in ("total", "between", "sampling", "between_share")),
        freq.transpose(..., dim, "replicate"), exact.transpose(..., dim, "replicate"),
        input_core_dims=[["replicate"], ["replicate"]], output_core_dims=[[], [], [], []],
    )
    out = xr.Dataset(dict(zip(("total", "between", "sampling", "between_share"), parts)))
    n = (freq.notnull() & exact.notnull()).sum("replicate")
    out["between_share_low"], out["between_share_high"] = xr.apply_ufunc(
        share_interval, out["between"], out["sampling"], n, output_core_dims=[[], []])
    out["replicate_exact"] = exact
    out.attrs["grid_axes"] = axes
    return out


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
