"""The numbers the one-screen tables show per grid point, computed from a
headline's estimates (:func:`headlines.estimates`): its arrays flat in grid
order, the labels ranked, the largest |z|, a row's largest half-width and
s.e., the most likely bin, and whether a point's tests pass the verdict.
:mod:`boardsweep.pipeline.views.overview` and :mod:`~boardsweep.pipeline.views.every_label`
only word them."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["flat_estimate", "flat_label", "half_width", "row_largest", "largest_z", "ranked", "playing",
           "most_likely", "tested_z", "point_agreement", "point_replicates"]


def flat_estimate(est: Any, name: str, axes: list[str], dim: str) -> np.ndarray:
    """``est[name]`` as (points, labels) in grid order (labels 1 for a scalar)."""
    da = est[name].broadcast_like(est["estimate"]) if dim else est[name]
    dims = [*axes, *([dim] if dim else [])]
    values = np.asarray(da.transpose(*dims).values if dims else da.values, dtype=float)
    return values.reshape(-1, est.sizes[dim] if dim else 1)


def flat_label(est: Any, name: str, dim: str) -> np.ndarray:
    """``est[name]`` at one grid point as a flat array over the labels of ``dim``."""
    da = est[name]
    return np.asarray(da.transpose(..., dim).values if dim in da.dims else
                      np.broadcast_to(da.values, est.sizes[dim]), dtype=float).reshape(-1)


def half_width(low: np.ndarray, estimate: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The larger side of an interval, max(high - x, x - low) (a t interval's
    half-width; the wider side of an exact binomial one)."""
    with np.errstate(invalid="ignore"):
        return np.fmax(np.asarray(high) - estimate, np.asarray(estimate) - low)


def row_largest(values: np.ndarray) -> float:
    """max_j values[j] over the finite values of a row; NaN where none is finite."""
    return float(np.nanmax(values)) if np.isfinite(values).any() else np.nan


def largest_z(z: np.ndarray) -> int | None:
    """argmax_j |z_j| over the finite z of a row; None where none is finite."""
    if not np.isfinite(z).any():
        return None
    return int(np.nanargmax(np.abs(z)))


def ranked(values: np.ndarray) -> list[int]:
    """The labels of a row by value, largest first (stable: ties in label
    order; NaN last)."""
    return np.argsort(-np.nan_to_num(values, nan=-np.inf), kind="stable").tolist()


def playing(values: np.ndarray) -> list[int]:
    """The labels (columns of ``values``, points x labels) with a finite value at one of its rows."""
    return [j for j in range(values.shape[1]) if np.isfinite(values[:, j]).any()]


def most_likely(values: np.ndarray) -> int | None:
    """argmax_j values[j] (the most likely bin), None where none is finite."""
    return int(np.nanargmax(values)) if np.isfinite(values).any() else None


def tested_z(z: np.ndarray, p: np.ndarray) -> np.ndarray:
    """z where a test was made (its p finite), else NaN."""
    return np.where(np.isfinite(p), z, np.nan)


def point_agreement(verdict: dict, headline: str, points: int) -> list[str]:
    """Per grid point, whether the headline's tests there pass the verdict's
    family-wise level: ``yes`` (min Holm-adjusted p >= alpha), ``NO`` or ``-`` (nothing tested)."""
    table = verdict["p_holm"]
    out = ["-"] * points
    if not len(table):
        return out
    mine = table[table["headline"] == headline]
    worst = mine.groupby("point")["p_holm"].min()
    for i, p in worst.items():
        out[int(i)] = "yes" if p >= verdict["alpha"] else "NO"
    return out


def point_replicates(est: Any, axes: list[str], picked: list[int]) -> list[int] | None:
    """The replicates each of the ``picked`` grid points used, where they differ; None where all used as many."""
    reps = np.asarray(est["replicates"].transpose(*axes).values if axes else est["replicates"].values).ravel()
    if len(set(reps[picked].tolist())) > 1:
        return [int(reps[i]) for i in picked]
    return None
