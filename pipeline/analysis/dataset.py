"""What a sweep store's Dataset holds, read by every analysis: its game,
spec and run shape, its grid points, its simulated distributions and their
frequencies and increments (:func:`increments`); and, handed on as they are so that the views read nothing of
the store themselves, what the store records of each label and grid point
(:func:`label_text`, :func:`exact_states`, :func:`exact_state`) and the
points counted by exact state (:func:`answer_counts`, the plan's).

The lowest layer of the analysis: :mod:`~boardsweep.pipeline.analysis.query`,
:mod:`~boardsweep.pipeline.analysis.headlines` and
:mod:`~boardsweep.pipeline.analysis.convergence` build on it.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Iterable

import numpy as np
import xarray as xr

from ...core.games import Game, get_game
from ..store import exact_state, exact_states, label_text, simulated_variables
from ..plan import answer_counts
from ..words import python_value
from ..store import recorded_spec

__all__ = ["distribution_variables", "frequencies", "MIN_COUNT", "z_score", "grid_points", "grid_points_at",
           "grid_size", "game_of", "use_game", "point_params", "label_values", "run_shape_of", "grid_params",
           "label_text", "exact_states", "exact_state", "answer_counts", "increments"]


#: Games found by :func:`game_of`, per name: finding one scans the installed
#: entry points (milliseconds), and a summary asks once per grid point.
_GAMES: dict[str, Game | None] = {}


def game_of(ds: xr.Dataset) -> Game | None:
    """The registered game that made the store (None if not registered here)."""
    name = ds.attrs.get("game")
    if not isinstance(name, str):
        return None
    if name not in _GAMES:
        try:
            _GAMES[name] = get_game(name)
        except Exception:
            return None
    return _GAMES[name]


def use_game(game: Game) -> None:
    """Make ``game`` the one :func:`game_of` finds under its name in this
    process: a worker handed the run's game, which may be registered only
    where the run started (a test's or a notebook's ``games.register``).  A
    game the worker cannot import raises :class:`GameNotInstalled` here."""
    _GAMES[game.name] = game


def canonical_spec(ds: xr.Dataset) -> dict:
    """The store's canonical spec, parsed (empty where it has none)."""
    return recorded_spec(ds.attrs)


def point_params(ds: xr.Dataset, point: dict[str, Any]) -> dict[str, Any]:
    """Full game parameters of a grid point (the spec's fixed ones + the point)."""
    params = {**canonical_spec(ds).get("params", {}), **point}
    game = game_of(ds)
    return game.resolve_params(params) if game is not None else params


def label_values(ds: xr.Dataset, dim: str) -> list[str]:
    """The labels of a game dimension as text (the one place that reads them:
    a numeric histogram coordinate reads the same way)."""
    return [str(python_value(v)) for v in ds[dim].values]


def run_shape_of(ds: xr.Dataset) -> dict[str, int]:
    """The run shape of every replicate (without ``replicates``)."""
    run = dict(canonical_spec(ds).get("run", {}))
    run.pop("replicates", None)
    return run


def grid_params(ds: xr.Dataset) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Every grid point (store order) with its full game parameters, as
    :func:`point_params` gives them; the spec is parsed and the game looked
    up once, not once per point (the spec holds the grid: parsing it per
    point is quadratic, and a game lookup reads the installed entry points)."""
    fixed, game = canonical_spec(ds).get("params", {}), game_of(ds)
    resolve = game.resolve_params if game is not None else dict
    return [(point, resolve({**fixed, **point})) for point in grid_points(ds)]


def in_memory(ds: xr.Dataset) -> xr.Dataset:
    """The Dataset in memory (a store opened lazily is read once here)."""
    return ds.compute() if any(v.chunks for v in ds.variables.values()) else ds


def grid_axes_of(ds: xr.Dataset) -> list[str]:
    """The store's grid axes."""
    return list(ds.attrs.get("grid_axes", []))


def distribution_variables(ds: xr.Dataset) -> dict[str, str]:
    """Simulated variables shaped ``(..., checkpoint, DIM)``: name -> DIM."""
    out = {}
    for name in simulated_variables(ds.attrs):
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
    return named(counts / counts.sum(dim, min_count=1), "frequency", "relative frequency",
                  f"{variable} / {variable}.sum('{dim}'): the share of each {dim} label in one replicate at a checkpoint")


def increments(cumulative: xr.DataArray) -> xr.DataArray:
    """What happened between consecutive checkpoints (from the start for the
    first): disjoint stretches of each replicate, the batches of its run;
    :func:`boardsweep.core.batches.increments` on a DataArray."""
    return xr.concat([cumulative.isel(checkpoint=[0]), cumulative.diff("checkpoint")], "checkpoint")


#: A label is judged by its z only where its mean count per replicate is at
#: least this; below it the counts are too discrete for a normal standard
#: error (four replicates that each landed 4 times give a standard error near
#: zero and a |z| of 77).
MIN_COUNT = 10


def z_score(difference: xr.DataArray, stderr: xr.DataArray, counts: xr.DataArray) -> xr.DataArray:
    """z = difference / stderr, missing where the standard error is 0 or the
    label's mean count per replicate (``counts``) is below :data:`MIN_COUNT`."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (difference / stderr).where((stderr > 0) & (counts >= MIN_COUNT))


EXACT_TEXT = ("exact frequency", "the exact relative frequency (NaN where none exists or not computed yet)")


def named(values: xr.DataArray, name: str, long_name: str, description: str) -> xr.DataArray:
    """``values`` renamed, with its own ``long_name`` and ``description`` (not its inputs')."""
    out = values.copy(deep=False).rename(name)
    out.attrs = {"long_name": long_name, "description": description}
    return out


def grid_points(ds: xr.Dataset) -> Iterable[dict[str, Any]]:
    """Every grid point as {axis: value}, in store order."""
    axes = list(ds.attrs.get("grid_axes", []))
    for values in itertools.product(*([python_value(v) for v in ds[a].values] for a in axes)):
        yield dict(zip(axes, values))


def grid_size(ds: xr.Dataset) -> int:
    """The number of grid points (1 without grid axes)."""
    return math.prod(ds.sizes[a] for a in ds.attrs.get("grid_axes", []))


def grid_points_at(ds: xr.Dataset, indices) -> list[dict[str, Any]]:
    """The grid points at flat ``indices`` (in grid order) as {axis: value}:
    only those points are made, whatever the grid's size."""
    axes = list(ds.attrs.get("grid_axes", []))
    flat = np.asarray(indices, dtype=np.int64).ravel()
    if not axes or not flat.size:
        return [{} for _ in flat]
    coords = np.unravel_index(flat, [ds.sizes[a] for a in axes])
    values = [ds[a].values for a in axes]
    return [{a: python_value(v[i]) for a, v, i in zip(axes, values, point)} for point in zip(*coords)]


