"""The stronger test where the mathematics allows: a frequency against its
exact CLT variance.

A game that knows the asymptotic variance of its frequency estimates
(``extras["asymptotic_variance"]``: Monopoly's Markov chain gives
``Var(f_hat) ~ sigma^2 / N``, ``N`` the store variable it names, the rolls)
has a **known** standard error, ``se = sqrt(sigma^2 / N)`` with ``N`` summed
over the finished replicates, so its test is ``z = (estimate - exact) / se``
against the normal: no degrees-of-freedom penalty (the t test across R = 4
replicates needs 32 s.e.s for 80% power at Holm's 1%/80, 44.6 once the s.e.
is known to be estimated; the z test 4.7), and no tie can make its spread 0.
Used at every grid point whose variance the game solves (not for shuffled
decks, NaN there: the t test across replicates stays) where the grid has
at most :data:`CLT_POINTS` points (each is one Markov-chain solve, about
0.3 s); beyond that, the t test, and the estimate's ``test`` attribute says
which.  Labels under ``MIN_COUNT`` counts a replicate stay out of the family
either way (a normal count needs counts).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .dataset import game_of, grid_params, grid_size

__all__ = ["CLT_POINTS", "TEST_TEXT", "clt_stderr"]

#: The most grid points at which the verdict solves the exact CLT variance.
CLT_POINTS = 64

#: Which test a headline uses, in words (an estimate table's ``test`` attribute).
TEST_TEXT = {
    "clt": "z = (estimate - exact) / se against the normal, se from the exact CLT variance of the game's Markov "
           "chain (sigma^2 / rolls): known, not estimated, so no df penalty",
    "t": "t = (estimate - exact) / se against Student's t with the table's df (the s.e. is estimated)",
    "share": "exact binomial test of games with the outcome (doubled smaller tail)",
}


def clt_stderr(ds: xr.Dataset, cp: int, done: xr.DataArray, like: xr.DataArray, dim: str) -> xr.DataArray | None:
    """The known standard error ``sqrt(sigma^2 / N)`` of each label's pooled
    frequency at checkpoint index ``cp`` (shaped like ``like``: the grid and
    ``dim``), NaN where the game has no single answer; None where the game has
    no CLT variance, the store lacks its ``per`` variable, or the grid has more
    than :data:`CLT_POINTS` points."""
    game = game_of(ds)
    hook = game.extras.get("asymptotic_variance") if game is not None else None
    if hook is None or grid_size(ds) > CLT_POINTS:
        return None
    axes = list(ds.attrs.get("grid_axes", []))
    rows, per = [], None
    for _, params in grid_params(ds):
        try:
            found = hook(params)
        except Exception:  # noqa: BLE001 - no theory at this point: its t test stays
            rows.append(np.full(ds.sizes[dim], np.nan))
            continue
        per = found.get("per", per)
        variance = np.asarray(found["variance"], dtype=np.float64)
        rows.append(variance if variance.shape == (ds.sizes[dim],) else np.full(ds.sizes[dim], np.nan))
    if per is None or per not in ds:
        return None
    shape = [ds.sizes[a] for a in axes] + [ds.sizes[dim]]
    variance = xr.DataArray(np.asarray(rows).reshape(shape), dims=[*axes, dim],
                            coords={c: ds[c] for c in [*axes, dim] if c in ds.coords})
    units = ds[per].isel(checkpoint=cp).astype(float).where(done).sum("replicate", min_count=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(variance / units.where(units > 0))
    return se.broadcast_like(like).transpose(*like.dims)
