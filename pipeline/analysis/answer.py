"""The question a sweep store answers, read back from the spec it records.

A spec's ``[answer]`` table (:mod:`boardsweep.pipeline.spec.answer`) names the
headline, its label, the grid axis it is studied against and the grid points
asked; a store without one (or made before the table existed) answers the
game's first headline against the first grid axis.  ``run``, ``query
--summary``, the report and ``ds.boardsweep.plot_answer`` all start here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from ..errors import SpecError
from ..spec import Answer, check_answer, default_answer, recorded_table
from ..words import python_value
from .dataset import game_of, grid_points

__all__ = ["answer_of", "asked_points", "asked_flat", "cap_note"]


def answer_of(ds: xr.Dataset) -> Answer | None:
    """The store's :class:`Answer` (None where its game is not installed here).

    The ``[answer]`` table of the recorded spec text, checked against the
    store's grid and labels; the game's default where there is none (or it no
    longer fits the store: a grid grown with ``--extend`` keeps its axes)."""
    game = game_of(ds)
    if game is None:
        return None
    axes = [a for a in ds.attrs.get("grid_axes", []) if a in ds.coords]
    table = recorded_table(str(ds.attrs.get("spec_text", "")))
    if table is None:
        return default_answer(game, dict.fromkeys(axes, ()))  # the first axis: no axis's values needed
    grid = {a: _values(ds[a].values) for a in axes}
    labels = {d: tuple(str(v) for v in _values(ds[d].values)) for d in game.coords if d in ds.coords}
    table = {**table, "at": _selected(table.get("at"), grid)}
    try:
        return check_answer(table, game, grid, labels, lambda key, message: SpecError(f"{key}: {message}"))
    except SpecError:
        return default_answer(game, grid)


def _values(values: np.ndarray) -> tuple:
    """A coordinate's values as Python values (:func:`python_value` of each),
    converted whole by numpy where they are numbers or text."""
    if values.dtype.kind in "biufU":
        return tuple(values.tolist())
    return tuple(python_value(v) for v in values)


def _selected(at: Any, grid: dict[str, tuple]) -> Any:
    """``[answer] at`` within a selection of the store (``query --sel``): the
    asked values it holds; an axis none of whose asked values it holds asks
    every selected point."""
    if not isinstance(at, dict):
        return {} if at is None else at
    out = {}
    for axis, values in at.items():
        kept = [v for v in (values if isinstance(values, list) else [values]) if v in grid.get(axis, ())]
        if kept or axis not in grid:
            out[axis] = kept or values
    return out


def asked_points(ds: xr.Dataset, answer: Answer | None) -> list[int]:
    """Flat indices (grid order) of the grid points the answer asks: those
    matching every ``at`` entry (every point where it gives none)."""
    points = list(grid_points(ds))
    if answer is None:
        return list(range(len(points)))
    return [i for i, p in enumerate(points) if answer.asks({k: python_value(v) for k, v in p.items()})]


def asked_flat(ds: xr.Dataset, answer: Answer) -> list[int]:
    """:func:`asked_points` from the grid axes' coordinates alone (one mask per
    axis, their outer product): no Python object per grid point, for a grid of
    any size (the run's summary of a grid larger than a block)."""
    axes = list(ds.attrs.get("grid_axes", []))
    if not axes:
        return [0]
    inside = np.ones((), dtype=bool)
    for k, a in enumerate(axes):
        wanted = answer.at.get(a)
        mask = np.array([wanted is None or python_value(v) in wanted for v in ds[a].values], dtype=bool)
        inside = inside[..., None] & mask.reshape((1,) * k + (-1,))
    return np.flatnonzero(inside).tolist()


def cap_note(ds: xr.Dataset, est: xr.Dataset) -> str:
    """Where a headline sits at its cap (``Headline.cap``, e.g. hk_monopoly's
    ``rounds``) with no spread, the sentence that says so: every game reached
    the cap, so the value is the cap, censored rather than measured."""
    from ...core.games import headlines_of
    from .dataset import canonical_spec

    game = game_of(ds)
    h = next((h for h in headlines_of(game) if h.name == est.attrs.get("name")), None) if game else None
    if h is None or not h.cap or "estimate" not in est:
        return ""
    fixed: Any = canonical_spec(ds).get("params", {}).get(h.cap)
    limit = ds[h.cap] if h.cap in ds.coords else fixed
    if limit is None:
        return ""
    n = int(((est["estimate"] >= limit) & (est["se"] == 0)).sum())
    if not n:
        return ""
    value = fixed if fixed is not None else f"the point's {h.cap}"
    return (f"{h.name} {value} ± 0 at {n} point{'s' if n > 1 else ''}: every game reached the cap {h.cap} = "
            f"{value}, so it is the cap, not a measured length")
