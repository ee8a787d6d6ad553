"""Grid points as the report's tables and figures index them: keys, flat arrays, selections."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ...analysis import point_params
from ...analysis import exact_states
from ...words import python_value


def point_key(ds: xr.Dataset, point: dict[str, Any]) -> str:
    """``axis=value,...`` of a grid point (all parameters when there is no grid)."""
    items = point if point else point_params(ds, {})
    return ",".join(f"{k}={v}" for k, v in items.items())


def grid_axes(ds) -> list[str]:
    return list(ds.attrs.get("grid_axes", []))


def flat_points(da: xr.DataArray, axes: list[str], extra: list[str] | None = None) -> np.ndarray:
    """``da`` as an array (points in grid order, then ``extra`` dims)."""
    dims = [*axes, *(extra or [])]
    values = da.transpose(*dims).values if dims else da.values
    return values.reshape((-1, *values.shape[len(axes):])) if axes else values[None, ...]


def sel(obj, point):
    return obj.sel(point) if point else obj


def point_index(ds, df: pd.DataFrame) -> np.ndarray:
    """The flat grid-point index (grid order) of each row of ``df``: each axis's
    value looked up among its coordinates, the positions raveled (array work)."""
    axes = grid_axes(ds)
    if not axes:
        return np.zeros(len(df), dtype=int)
    where = []
    for a in axes:
        position = {python_value(v): k for k, v in enumerate(ds[a].values)}
        where.append(df[a].map({v: position[python_value(v)] for v in df[a].unique()}).to_numpy(dtype=np.int64))
    return np.ravel_multi_index(tuple(where), tuple(ds.sizes[a] for a in axes)).astype(int)


def finite_list(column) -> list[float | None]:
    """A column as Python floats, None where it holds no finite number (:func:`finite_float` of each)."""
    values = pd.to_numeric(pd.Series(column), errors="coerce").to_numpy(dtype=float)
    return np.where(np.isfinite(values), values.astype(object), None).tolist()


def exact_states_by_point(ds, points) -> dict[str, tuple[str, str]]:
    """The exact answer's state and its words at every point, read in one pass."""
    states, texts = exact_states(ds)
    return {point_key(ds, p): (str(s), str(t)) for p, s, t in zip(points, states.ravel(), texts.ravel())}
