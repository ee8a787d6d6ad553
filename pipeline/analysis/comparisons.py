"""Grid axes compared: do the points with ``axis = a`` and ``axis = b``
(all else equal) differ, label by label (Welch's t, Holm over the labels)?

Where both sides' replicates tie (every replicate of ``a`` has the same
frequency, and every replicate of ``b``: small counts, often 0), Welch's
t is 0 / 0 and its p was NaN, silently.  Now:

* tied at different values: decided from the integers by the exact
  permutation test of the replicates (:func:`tied_permutation_p`): under
  "no difference" the ``n_a + n_b`` replicates are exchangeable, so ``p`` is
  the share of the ``C(n_a + n_b, n_a)`` ways to split them whose
  difference of means is at least the observed one, ``2 / C(2n, n)`` with
  ``n`` replicates each (0.33 at 2, 0.029 at 4); marked ``permutation``;
* tied at the same value (a location no replicate of either side landed
  on): nothing to test (every split gives the same means); p stays NaN, out
  of the Holm family, marked ``untestable`` and counted, in words, in the
  attrs (:data:`UNTESTABLE_TEXT`).
"""

from __future__ import annotations

from typing import Any

import xarray as xr

import numpy as np
from scipy import special as sc

from ...core import stats
from .dataset import grid_axes_of, in_memory, distribution_variables, frequencies
from .figures import panel_spread
from ..words import python_value

__all__ = ["compare_axis", "axis_comparisons", "compared", "tied_permutation_p", "TIED_TEXT", "UNTESTABLE_TEXT"]

#: What a label decided by the permutation test is, in words.
TIED_TEXT = ("decided by the exact permutation test of the replicates: every replicate of each side had the same "
             "value, so Welch's t is 0 / 0")
#: What a label tied alike on both sides is, in words.
UNTESTABLE_TEXT = ("not testable at this size: every replicate of both sides had the same value; more replicates "
                   "or turns would test it")


def tied_permutation_p(u: np.ndarray, n1: np.ndarray, w: np.ndarray, n2: np.ndarray) -> np.ndarray:
    """Two-sided exact permutation p of two tied samples: ``n1`` values all ``u``, ``n2`` all ``w``.

    A split with ``j`` of the ``u``s in the first group has
    ``|mean_1 - mean_2| = |u - w| |j / n1 - (n1 - j) / n2|`` and probability
    ``C(n1, j) C(n2, n1 - j) / C(n1 + n2, n1)`` (hypergeometric); ``p`` sums
    the splits at least as far apart as the observed ``j = n1``: 1 where
    ``u = w``.
    """
    u, n1, w, n2 = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (u, n1, w, n2)))
    p = np.zeros(u.shape)
    for j in range(int(np.nanmax(n1, initial=0)) + 1):
        with np.errstate(invalid="ignore", divide="ignore"):
            far = np.abs(j / n1 - (n1 - j) / n2) >= 1.0 - 1e-12  # the observed split, j = n1, gives 1
            weight = sc.comb(n1, j) * sc.comb(n2, n1 - j) / sc.comb(n1 + n2, n1)
        p += np.where((j <= n1) & far, weight, 0.0)
    return np.where(u == w, 1.0, np.minimum(p, 1.0))


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
    ds = in_memory(ds)
    dim = distribution_variables(ds)[variable]
    freq = frequencies(ds, variable).isel(checkpoint=checkpoint)
    sides = []
    for value in (a, b):
        f = freq.sel({axis: value})
        sides.append((f.mean("replicate"), f.var("replicate", ddof=1), f.notnull().sum("replicate")))
    (m1, v1, n1), (m2, v2, n2) = sides
    res = stats.welch_test(m1.values, v1.values, n1.values, m2.values, v2.values, n2.values)
    tied = _tied(m1.values, v1.values, n1.values) & _tied(m2.values, v2.values, n2.values)
    alike = tied & (m1.values == m2.values)
    apart = tied & ~alike
    res["p"] = np.where(apart, tied_permutation_p(m1.values, n1.values, m2.values, n2.values),
                        np.where(alike, np.nan, res["p"]))
    out = xr.Dataset({k: (m1.dims, v) for k, v in res.items()}, coords=m1.coords)
    out["permutation"], out["untestable"] = (m1.dims, apart), (m1.dims, alike)
    d = out["p"].get_axis_num(dim)
    out["p_holm"] = (out["p"].dims, stats.holm(out["p"].values, axis=d))
    out["significant"] = out["p_holm"] < alpha
    out.attrs.update(axis=axis, a=str(a), b=str(b), alpha=alpha,
                     note=f"Holm-Bonferroni over the {ds.sizes[dim]} labels of each point",
                     permutation=int(apart.sum()), permutation_text=TIED_TEXT,
                     untestable=int(alike.sum()), untestable_text=UNTESTABLE_TEXT)
    return out


def _tied(mean: np.ndarray, var: np.ndarray, n: np.ndarray) -> np.ndarray:
    """At least two replicates, all equal (a variance of round-off, :data:`~boardsweep.core.stats.ROUNDOFF`, is 0)."""
    with np.errstate(invalid="ignore"):
        return (n >= 2) & np.isfinite(mean) & (var <= stats.ROUNDOFF * np.maximum(mean * mean, 1e-300))


def axis_comparisons(ds: xr.Dataset, variable: str = "counts", checkpoint: int = -1,
                     most: int | None = None) -> dict:
    """:func:`compare_axis` of every grid axis's first value against each
    other value (against at most ``most`` of them: :func:`compared`), each
    comparison reading only its two values' grid points."""
    out = {}
    for axis in grid_axes_of(ds):
        values = ds[axis].values
        for k in compared(len(values), most):
            pair = ds.isel({axis: [0, int(k)]})
            out[(axis, python_value(values[0]), python_value(values[k]))] = compare_axis(
                pair, axis, values[0], values[k], variable, checkpoint)
    return out


def compared(size: int, most: int | None = None) -> np.ndarray:
    """The indices of an axis of ``size`` values that :func:`axis_comparisons`
    compares with its first: every other one, or at most ``most`` of them,
    evenly spaced, the last among them."""
    if most is None:
        return np.arange(1, size)
    return 1 + panel_spread(size - 1, most)


