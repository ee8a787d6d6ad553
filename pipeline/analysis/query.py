"""The tables of a sweep's estimates: each label's estimate beside its exact
answer (z, p), the top labels, tidy rows.

The helpers work on any game whose simulated variables have the form
``(checkpoint, DIM)`` (a distribution over DIM, e.g. ``location``).  Reading
a store (:func:`open_sweep`, :func:`load_sweep`, :func:`mask`,
:func:`read_chunks`) is :mod:`boardsweep.pipeline.store.open`'s; what a
Dataset holds (grid points, distributions, frequencies) is
:mod:`boardsweep.pipeline.analysis.dataset`'s.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np
import xarray as xr

from ..store import exact_states, label_text
from ..words import python_value
from .dataset import EXACT_TEXT, named, distribution_variables, grid_points

__all__ = ["estimate", "exact_frequencies", "compare_exact", "top_k", "modal_string", "rows", "compared", "worst_z", "table_rows"]


def estimate(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.Dataset:
    """The estimate of each label's frequency at one checkpoint (index), with
    its standard error, interval, exact value, z and p: the game's headline
    estimator (:func:`boardsweep.pipeline.analysis.headlines.of_variable`), the one
    ``run``, ``query``, ``query --summary`` and the report print.

    The estimate is the ratio of sums over the finished replicates,
    ``sum_r c_r / sum_r e_r``; its s.e. is the linearised ratio estimator's
    from the replicates' spread (or pooled per game where the game stores
    sums of squares)."""
    from .headlines import of_variable

    return of_variable(ds, variable, checkpoint)


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
            return named(value / value.sum(dim, min_count=1), "exact", *EXACT_TEXT)
    for candidate in exact:
        if candidate.dims[-1] == dim and "checkpoint" not in candidate.dims:
            return named(candidate / candidate.sum(dim, min_count=1), "exact", *EXACT_TEXT)
    return None


def compare_exact(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.Dataset:
    """:func:`estimate` with ``difference`` = estimate - exact beside it."""
    out = estimate(ds, variable, checkpoint)
    out["difference"] = out["estimate"] - out["exact"]
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


def rows(
    ds: xr.Dataset, variable: str = "counts", top: int | None = None, checkpoint: int = -1,
    numeric: bool = False,
) -> list[dict[str, Any]]:
    """Tidy rows (one per grid point and label) of :func:`estimate`
    (``estimate``, ``se``, ``low``, ``high``, ``df``, ``exact``, ``z``, ``p``,
    ``exact_state``, ``replicates``), the ``top`` most frequent labels per grid point when given.  ``exact_state``
    says why ``exact`` may be missing: ``stored``, ``none`` (no single exact
    answer exists) or ``pending`` (not computed yet).  ``numeric``: a
    histogram's bins as numbers (JSON, CSV), with an ``overflow`` column
    (True on the last bin, which counts every value >= its own); else as
    text (``>=N`` on the overflow bin)."""
    return table_rows(ds, compared(ds, variable, checkpoint), variable, top, numeric=numeric)


def compared(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> xr.Dataset:
    """:func:`compare_exact`, computed (numpy), with its grid axes first."""
    with np.errstate(divide="ignore", invalid="ignore"):
        table = compare_exact(ds, variable, checkpoint).compute()
    axes = list(ds.attrs.get("grid_axes", []))
    return table.broadcast_like(table["estimate"]).transpose(*axes, distribution_variables(ds)[variable])


def worst_z(table: xr.Dataset) -> np.ndarray:
    """Largest |z| over the labels of each grid point of a :func:`compared`
    table (NaN where the point has no exact answer or too few replicates)."""
    z = np.abs(np.asarray(table["z"].values, dtype=float))
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(z).any(-1), np.nanmax(np.where(np.isfinite(z), z, -np.inf), -1), np.nan)


def table_rows(
    ds: xr.Dataset, table: xr.Dataset, variable: str, top: int | None = None,
    points: Iterable[int] | None = None, numeric: bool = False,
) -> list[dict[str, Any]]:
    """:func:`rows` from a :func:`compared` table; ``points`` (flat indices
    in grid order) restricts them to those grid points, in that order."""
    dim = distribution_variables(ds)[variable]
    from .headlines import COLUMNS

    arrays = {k: table[k].values.reshape(-1, table.sizes[dim]) for k in (*COLUMNS, "replicates")}
    number = numeric and table[dim].dtype.kind in "iuf"
    labels = [python_value(v) for v in table[dim].values] if number else label_text(table[dim])
    last = table[dim].attrs.get("overflow_bin") if number else None
    keep = top or len(labels)
    every = list(grid_points(ds))
    states = exact_states(ds)[0].ravel() if "exact_done" in ds else np.full(len(every), "pending")
    out = []
    for i in (range(len(every)) if points is None else points):
        cell = {k: v[i] for k, v in arrays.items()}
        order = np.argsort(-np.nan_to_num(cell["estimate"], nan=-np.inf), kind="stable")[:keep]
        for j in order:
            out.append({
                **every[i],
                dim: labels[j],
                **({"overflow": bool(labels[j] == last)} if last is not None else {}),
                **{k: _num(cell[k][j]) for k in COLUMNS},
                "exact_state": str(states[i]),
                "replicates": int(cell["replicates"][j]),
            })
    return out


def _num(value: Any) -> float | None:
    x = float(value)
    return None if np.isnan(x) else x
