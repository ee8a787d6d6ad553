"""Read a sweep store: a lazy Dataset with missing cells as NaN, and helpers.

``open_sweep`` masks every simulated variable with ``done`` and every exact
variable with ``exact_done``: a cell no task has finished reads as NaN, never
as zero.  The helpers work on any game whose simulated variables have the
form ``(checkpoint, DIM)`` (a distribution over DIM, e.g. ``location``).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np
import xarray as xr

from boardsweep.pipeline import integrity
from boardsweep.pipeline.store import quiet_zarr

__all__ = [
    "open_sweep",
    "distribution_variables",
    "frequencies",
    "estimate",
    "exact_frequencies",
    "compare_exact",
    "top_k",
    "modal_string",
    "rows",
]


def open_sweep(url: str, check: bool = True) -> xr.Dataset:
    """Open the store at ``url`` lazily; unfinished cells read as NaN.

    With ``check`` (the default) the store's finished cells are verified
    first (:mod:`boardsweep.pipeline.integrity`: raw chunk bytes against the
    checksums their tasks recorded); a damaged store raises
    :class:`~boardsweep.pipeline.integrity.StoreDamaged` naming the cells,
    rather than answering with fewer replicates or a decompression error.
    """
    if check:
        integrity.assert_intact(url)
    with quiet_zarr():
        ds = xr.open_zarr(url)
    for name in ds.attrs.get("variables", []):
        ds[name] = ds[name].where(ds["done"])
    for name in ds.attrs.get("exact_variables", []):
        ds[name] = ds[name].where(ds["exact_done"])
    return ds


def distribution_variables(ds: xr.Dataset) -> dict[str, str]:
    """Simulated variables shaped ``(..., checkpoint, DIM)``: name -> DIM."""
    out = {}
    for name in ds.attrs.get("variables", []):
        dims = ds[name].dims
        if len(dims) >= 2 and dims[-2] == "checkpoint":
            out[name] = dims[-1]
    return out


def frequencies(ds: xr.Dataset, variable: str = "counts") -> xr.DataArray:
    """``variable`` divided by its total over its own dim at each checkpoint.

    For Monopoly this is counts / events (the counts of one checkpoint sum to
    the events counted); missing cells stay NaN.
    """
    dim = distribution_variables(ds)[variable]
    counts = ds[variable]
    return counts / counts.sum(dim, skipna=False)


def estimate(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.Dataset:
    """Mean frequency over finished replicates at one checkpoint (index), with
    its standard error and the number of replicates behind it."""
    freq = frequencies(ds, variable).isel(checkpoint=checkpoint)
    n = freq.notnull().sum("replicate")
    mean = freq.mean("replicate")
    stderr = freq.std("replicate", ddof=1) / np.sqrt(n.where(n > 1))
    return xr.Dataset({"estimate": mean, "stderr": stderr, "replicates": n})


def exact_frequencies(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.DataArray | None:
    """The exact counterpart of ``frequencies(ds, variable)`` at one checkpoint.

    An exact variable with the same dims (e.g. exact expected counts per
    checkpoint) is preferred; else one over the variable's own dim only (a
    long-run frequency).  ``None`` when the game has neither.
    """
    dim = distribution_variables(ds)[variable]
    exact = [ds[name] for name in ds.attrs.get("exact_variables", [])]
    for candidate in exact:
        if candidate.dims[-2:] == ("checkpoint", dim):
            value = candidate.isel(checkpoint=checkpoint)
            return value / value.sum(dim, skipna=False)
    for candidate in exact:
        if candidate.dims[-1] == dim and "checkpoint" not in candidate.dims:
            return candidate / candidate.sum(dim, skipna=False)
    return None


def compare_exact(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.Dataset:
    """Estimate, standard error, exact value, difference and z-score side by side."""
    out = estimate(ds, variable, checkpoint)
    exact = exact_frequencies(ds, variable, checkpoint)
    if exact is None:
        exact = xr.full_like(out["estimate"], np.nan)
    out["exact"] = exact
    out["difference"] = out["estimate"] - exact
    out["z"] = out["difference"] / out["stderr"]
    return out


def top_k(values: xr.DataArray, k: int = 3, dim: str = "location") -> list[tuple[Any, float]]:
    """The ``k`` largest entries of a 1-d array along ``dim`` as (label, value)."""
    data = np.asarray(values.values, dtype=float)
    order = np.argsort(-np.nan_to_num(data, nan=-np.inf), kind="stable")[:k]
    labels = values[dim].values
    return [(labels[i], float(data[i])) for i in order]


def modal_string(
    values: xr.DataArray,
    k: int = 3,
    dim: str = "location",
    merge: Mapping[str, str] | None = None,
) -> str:
    """Project Euler 84's modal string: the ``k`` most frequent squares, two digits each.

    ``merge`` folds labels into others first (default: ``IN_JAIL`` into ``JAIL``,
    since PE84 treats them as one square); a square's number is its position
    along ``dim``.
    """
    merge = {"IN_JAIL": "JAIL"} if merge is None else dict(merge)
    labels = [str(x) for x in values[dim].values]
    data = np.asarray(values.values, dtype=float).copy()
    for src, dst in merge.items():
        if src in labels and dst in labels:
            data[labels.index(dst)] += data[labels.index(src)]
            data[labels.index(src)] = -np.inf
    order = np.argsort(-data, kind="stable")[:k]
    return "".join(f"{i:02d}" for i in order)


def grid_points(ds: xr.Dataset) -> Iterable[dict[str, Any]]:
    """Every grid point as {axis: value}, in store order."""
    axes = ds.attrs.get("grid_axes", [])
    for index in np.ndindex(*(ds.sizes[a] for a in axes)):
        yield {a: _py(ds[a].values[i]) for a, i in zip(axes, index)}


def rows(
    ds: xr.Dataset, variable: str = "counts", top: int | None = None, checkpoint: int = -1
) -> list[dict[str, Any]]:
    """Tidy rows (one per grid point and label) of :func:`compare_exact`,
    the ``top`` most frequent labels per grid point when given."""
    with np.errstate(divide="ignore", invalid="ignore"):
        table = compare_exact(ds, variable, checkpoint).compute()
    dim = distribution_variables(ds)[variable]
    out = []
    for point in grid_points(ds):
        cell = table.sel(point) if point else table
        order = [label for label, _ in top_k(cell["estimate"], top or cell.sizes[dim], dim)]
        for label in order:
            one = cell.sel({dim: label})
            out.append({
                **point,
                dim: str(label),
                "estimate": _num(one["estimate"]),
                "stderr": _num(one["stderr"]),
                "exact": _num(one["exact"]),
                "replicates": int(one["replicates"]),
            })
    return out


def _py(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _num(value: xr.DataArray) -> float | None:
    x = float(value)
    return None if np.isnan(x) else x
