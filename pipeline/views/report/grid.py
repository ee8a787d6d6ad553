"""Grid points as the report's tables and figures index them: keys, flat arrays, selections."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ...analysis import dataset
from ...store import metadata
from ...analysis.dataset import grid_points
from ...words import python_value


def point_key(ds: xr.Dataset, point: dict[str, Any]) -> str:
    """``axis=value,...`` of a grid point (all parameters when there is no grid)."""
    items = point if point else dataset.point_params(ds, {})
    return ",".join(f"{k}={v}" for k, v in items.items())


def _axes(ds) -> list[str]:
    return list(ds.attrs.get("grid_axes", []))


def _flat(da: xr.DataArray, axes: list[str], extra: list[str] | None = None) -> np.ndarray:
    """``da`` as an array (points in grid order, then ``extra`` dims)."""
    dims = [*axes, *(extra or [])]
    values = da.transpose(*dims).values if dims else da.values
    return values.reshape((-1, *values.shape[len(axes):])) if axes else values[None, ...]


def _sel(obj, point):
    return obj.sel(point) if point else obj


def _point_index(ds, df: pd.DataFrame) -> np.ndarray:
    """The flat grid-point index (grid order) of each row of ``df``."""
    axes = _axes(ds)
    if not axes:
        return np.zeros(len(df), dtype=int)
    where = {tuple(python_value(p[a]) for a in axes): i for i, p in enumerate(grid_points(ds))}
    return np.array([where[tuple(python_value(v) for v in row)] for row in df[axes].itertuples(index=False)], dtype=int)


def _exact_states(ds, points) -> dict[str, tuple[str, str]]:
    """:func:`metadata.exact_state` of every point, read in one pass."""
    states, texts = metadata.exact_states(ds)
    return {point_key(ds, p): (str(s), str(t)) for p, s, t in zip(points, states.ravel(), texts.ravel())}
