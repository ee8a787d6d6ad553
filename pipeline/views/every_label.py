"""Every label of a headline at one grid point, by name, largest estimate first.

What the summary prints under a question that asks for the whole table
(``[answer] all_labels = true``: the Stats 102A assignment's 40 squares).
The labels are written by the store's name coordinate (``location_name``
beside ``location``), shortened to the words before a bracket; a name that
several labels share (Chance, Community Chest) gets its code.  The rows are
laid out in two halves side by side so that 41 labels fit a screen; the
numbers are the estimate table's, nothing is computed here but the order.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ..analysis import flat_label, ranked
from ..words import decimals, fmt_interval, fmt_to, fmt_z

__all__ = ["label_names", "every_label_columns", "every_label_legend"]


def label_names(ds: xr.Dataset, dim: str) -> list[str]:
    """The labels of ``dim`` by name (``<dim>_name`` where the store has it,
    else the labels), a name shared by several labels followed by its label."""
    codes = [str(v) for v in ds[dim].values]
    key = f"{dim}_name"
    if key not in ds.coords and key not in ds:
        return codes
    names = [str(v).split(" (")[0].strip() or c for v, c in zip(ds[key].values, codes)]
    return [f"{n} ({c})" if names.count(n) > 1 and n != c else n for n, c in zip(names, codes)]


def _cell(x: float, low: float, high: float, se: float) -> str:
    """``estimate ± h`` (:func:`fmt_interval`); a label with no spread (s.e. 0:
    Go to Jail, never a resting place) as ``0 [0, 5.4e-05]``."""
    if np.isfinite(se) and se > 0 or not np.isfinite(x):
        return fmt_interval(x, low, high, se)
    return f"{x:.6g} [{low:.2g}, {high:.2g}]"


def every_label_columns(ds: xr.Dataset, est: xr.Dataset, name: str) -> list[tuple[str, list[str], int]]:
    """(header, cells, drop) per column at the one grid point of ``est``:
    rank, name, estimate with its interval, exact, z; the ranks in two halves
    side by side (the second half's columns after the first's)."""
    dim = est.attrs["dim"]
    names = label_names(ds, dim)
    get = {k: flat_label(est, k, dim) for k in ("estimate", "se", "low", "high", "exact", "z")}
    order = [j for j in ranked(get["estimate"]) if np.isfinite(get["estimate"][j])]
    level = f"{est.attrs['level']:.0%}"
    half = (len(order) + 1) // 2
    columns = []
    for part in (order[:half], order[half:]):
        first = order.index(part[0]) if part else 0
        pad = [""] * (half - len(part))
        columns += [
            ("#", [str(first + k + 1) for k in range(len(part))] + pad, 0),
            (dim, [names[j] for j in part] + pad, 0),
            (f"{name} ± {level}", [_cell(get["estimate"][j], get["low"][j], get["high"][j], get["se"][j])
                                   for j in part] + pad, 0),
            ("exact", [fmt_to(get["exact"][j], decimals(get["se"][j])) for j in part] + pad, 2),
            ("z", [fmt_z(get["z"][j]) for j in part] + pad, 3),
        ]
    return columns


def every_label_legend(est: xr.Dataset, basis: str) -> str:
    """What the table is, in one paragraph (``basis``: how its s.e. were found)."""
    dim = est.attrs["dim"]
    return (f"every {dim}, the most frequent first (ranks 1 down the left half, then the right); ± : half-width "
            f"of the {est.attrs['level']:.0%} interval, s.e. {basis}; exact and z = (estimate - exact) / s.e. where "
            "the console is wide enough")
