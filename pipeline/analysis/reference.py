"""The reference an estimate is compared with: one owner for every analysis.

The verdict compares each headline's estimate with :func:`headline_exact`:
its ``exact`` variable at the checkpoint (normalised over its labels for a
distribution: Monopoly's expected counts at the run's horizon, not the
long-run frequency), except where the headline's ``exact_unless`` happened
(:func:`voided`).  Every other comparison takes its reference from here:

* :func:`exact_reference`: what a distribution variable's frequencies
  estimate at each checkpoint (the convergence tables and plots), and
  :func:`batch_reference` what they estimate between two checkpoints (the
  convergence slope's increments);
* :func:`replicate_reference`: what each replicate is compared with in the
  paired deck test: the verdict's reference where the point has one, else
  the exact answer of the deck orders the replicate played;

so that no two analyses of one store test against different answers.
"""

from __future__ import annotations

import xarray as xr

from ...core.games import Headline, headlines_of
from .dataset import grid_axes_of, distribution_variables, game_of

__all__ = ["variable_headline", "headline_exact", "voided", "point_reference", "exact_reference",
           "batch_reference", "replicate_reference"]


def variable_headline(ds: xr.Dataset, variable: str) -> Headline:
    """The headline that estimates the simulated distribution ``variable``:
    the game's (a distribution first), else the variable as a distribution
    over its own labels compared with the first exact variable over them."""
    game = game_of(ds)
    found = [h for h in (headlines_of(game) if game is not None else ()) if h.numerator == variable]
    h = next((h for h in found if h.kind == "distribution"), None) or (found[0] if found else None)
    if h is not None:
        return h
    dim = ds[variable].dims[-1]
    exact = next((e for e in ds.attrs.get("exact_variables", []) if e in ds and ds[e].dims[-1:] == (dim,)), None)
    return Headline(f"{variable}_frequency", f"relative frequency of each {dim}", variable, None,
                    exact=exact, kind="distribution")


def headline_exact(ds: xr.Dataset, h: Headline, cp: int, dim: str | None) -> xr.DataArray | None:
    """The exact value headline ``h`` is compared with at checkpoint index
    ``cp``: its ``exact`` variable there, normalised over ``dim`` for a
    distribution; None where the game has none."""
    if h.exact is None or h.exact not in ds:
        return None
    ex = ds[h.exact].astype(float)
    if "checkpoint" in ex.dims:
        ex = ex.isel(checkpoint=cp)
    if h.kind == "distribution" and dim is not None:
        ex = ex / ex.sum(dim, skipna=False)
    return ex


def voided(ds: xr.Dataset, h: Headline, cp: int, done: xr.DataArray) -> xr.DataArray | None:
    """Grid points where ``h.exact_unless`` is above 0 in a finished replicate
    (its exact answer does not hold there); a seat that does not play (-1 or
    missing) counts as 0."""
    if h.exact_unless is None or h.exact_unless not in ds:
        return None
    v = ds[h.exact_unless].isel(checkpoint=cp).astype(float).where(done)
    return (v > 0).any([d for d in v.dims if d not in grid_axes_of(ds)])


def point_reference(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.DataArray | None:
    """The verdict's reference for the frequencies of ``variable`` at
    ``checkpoint`` (index): :func:`headline_exact` of its headline, NaN where
    :func:`voided`; None where there is none."""
    h = variable_headline(ds, variable)
    exact = headline_exact(ds, h, checkpoint, distribution_variables(ds)[variable])
    if exact is None:
        return None
    void = voided(ds, h, checkpoint, ds["done"].astype(bool))
    return exact if void is None else exact.where(~void)


def batch_reference(ds: xr.Dataset, variable: str = "counts") -> xr.DataArray | None:
    """The exact frequency of ``variable`` between consecutive checkpoints
    (from the start for the first): the increments of a finite-horizon exact
    variable (expected counts at each checkpoint), normalised, else the
    long-run one.  None when there is neither."""
    dim = distribution_variables(ds)[variable]
    h = variable_headline(ds, variable)
    if h.exact is None or h.exact not in ds:
        return None
    ex = ds[h.exact].astype(float)
    if "checkpoint" in ex.dims:
        ex = xr.concat([ex.isel(checkpoint=[0]), ex.diff("checkpoint")], "checkpoint")
    ref = ex / ex.sum(dim, min_count=1)
    if "checkpoint" not in ref.dims:
        ref = ref.expand_dims(checkpoint=ds["checkpoint"])
    return ref.transpose(..., "checkpoint", dim)


def replicate_reference(ds: xr.Dataset, decomp: xr.Dataset, variable: str = "counts",
                        checkpoint: int = -1) -> xr.DataArray:
    """What each replicate's frequency of ``variable`` is compared with in the
    paired deck test: the verdict's reference (:func:`point_reference`)
    where it is finite, else the exact answer of the decks the replicate
    played (``decomp["replicate_exact"]`` of
    :func:`boardsweep.pipeline.analysis.decks.shuffle_decomposition`)."""
    own = decomp["replicate_exact"]
    ref = point_reference(ds, variable, checkpoint)
    if ref is None:
        return own
    ref = ref.broadcast_like(own)
    return ref.where(ref.notnull(), own).transpose(*own.dims)


def exact_reference(ds: xr.Dataset, variable: str = "counts") -> xr.DataArray | None:
    """The exact frequency that ``frequencies(ds, variable)`` estimates, with a
    ``checkpoint`` dim: the verdict's (:func:`variable_headline`'s exact
    variable, normalised): finite-horizon where it has a checkpoint dim,
    else the long-run one broadcast over checkpoints (not voided: the
    convergence tables show it everywhere).  None when there is neither."""
    dim = distribution_variables(ds)[variable]
    h = variable_headline(ds, variable)
    if h.exact is None or h.exact not in ds:
        return None
    ex = ds[h.exact]
    ref = ex / ex.sum(dim, min_count=1)
    if "checkpoint" not in ref.dims:
        ref = ref.expand_dims(checkpoint=ds["checkpoint"])
    return ref.transpose(..., "checkpoint", dim)
