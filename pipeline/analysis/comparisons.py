"""Grid axes compared: do the points with ``axis = a`` and ``axis = b``
(all else equal) differ, label by label (Welch's t, Holm over the labels)?"""

from __future__ import annotations

from typing import Any

import xarray as xr

from ...core import stats
from .dataset import _grid, _mem, distribution_variables, frequencies
from ..words import python_value

__all__ = ["compare_axis", "axis_comparisons"]


def compare_axis(
    ds: xr.Dataset, axis: str, a: Any, b: Any, variable: str = "counts",
    checkpoint: int = -1, alpha: float = 0.05,
) -> xr.Dataset:
    """Do grid points with ``axis = a`` and ``axis = b`` (all else equal) differ?

    Welch's t-test per label of the replicate means at ``checkpoint``:
    ``difference`` (a - b), ``stderr``, ``t``, ``df``, ``p``; ``p_holm``
    adjusts p over the labels of each point (Holm-Bonferroni: with 41
    locations, about two would pass an unadjusted 5% test by chance alone);
    ``significant`` = p_holm < alpha.  Dims: the other grid axes and DIM.
    """
    ds = _mem(ds)
    dim = distribution_variables(ds)[variable]
    freq = frequencies(ds, variable).isel(checkpoint=checkpoint)
    sides = []
    for value in (a, b):
        f = freq.sel({axis: value})
        sides.append((f.mean("replicate"), f.var("replicate", ddof=1), f.notnull().sum("replicate")))
    (m1, v1, n1), (m2, v2, n2) = sides
    res = stats.welch_test(m1.values, v1.values, n1.values, m2.values, v2.values, n2.values)
    out = xr.Dataset({k: (m1.dims, v) for k, v in res.items()}, coords=m1.coords)
    d = out["p"].get_axis_num(dim)
    out["p_holm"] = (out["p"].dims, stats.holm(out["p"].values, axis=d))
    out["significant"] = out["p_holm"] < alpha
    out.attrs.update(axis=axis, a=str(a), b=str(b), alpha=alpha,
                     note=f"Holm-Bonferroni over the {ds.sizes[dim]} labels of each point")
    return out


def axis_comparisons(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1) -> dict:
    """:func:`compare_axis` of every grid axis's first value against each other value."""
    out = {}
    for axis in _grid(ds):
        values = list(ds[axis].values)
        for other in values[1:]:
            out[(axis, python_value(values[0]), python_value(other))] = compare_axis(
                ds, axis, values[0], other, variable, checkpoint)
    return out


