"""The per-point figures of the report's tables, computed from a headline's or
a variable's estimates: a point's largest |z| and its label, its three most
frequent labels, its distance from the exact distribution; a comparison's
largest difference; a distribution's top labels and worst test.
:mod:`boardsweep.pipeline.views.report.tables` only lays them out."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .ranking import largest_z, ranked

__all__ = ["point_figures", "point_ratios", "compared_mean", "comparison_figures", "distribution_figures",
           "best_tests", "decomposition_figures", "TOP_LABELS"]

#: The most frequent labels a table names per grid point.
TOP_LABELS = 3


def point_figures(mean: np.ndarray, ref: np.ndarray, z: np.ndarray) -> dict[str, Any]:
    """One grid point's figures over its labels j: ``worst`` = argmax_j |z_j|
    (None where no z is finite) and ``max_abs_z``; ``top``: the
    :data:`TOP_LABELS` labels of the largest mean; where every label has a
    reference, ``max_abs_error`` = max_j |mean_j - ref_j| and ``tv_distance`` =
    1/2 sum_j |mean_j - ref_j| (else None)."""
    err = mean - ref
    has_ref = bool(np.isfinite(err).all())
    worst = largest_z(z)
    return {"worst": worst, "max_abs_z": abs(float(z[worst])) if worst is not None else None,
            "top": ranked(mean)[:TOP_LABELS],
            "max_abs_error": float(np.abs(err).max()) if has_ref else None,
            "tv_distance": float(0.5 * np.abs(err).sum()) if has_ref else None}


def point_ratios(ratio: Any, batch: Any, axes: list[str], dim: str) -> tuple[Any, Any]:
    """Per grid point: the median over labels of the last checkpoint's
    variance ratio, and the mean over labels (and all but the grid's axes) of
    the batch-means ratio; each None where not computed."""
    vr = ratio["ratio"].isel(checkpoint=-1).median(dim) if ratio is not None else None
    bm = (batch["ratio"].mean([d for d in batch["ratio"].dims if d not in axes])
          if batch is not None and "ratio" in batch else None)
    return vr, bm


def compared_mean(freq: Any, axis: str, value: Any) -> Any:
    """The mean over replicates of the frequencies at ``axis = value``."""
    return freq.sel({axis: value}).mean("replicate")


def comparison_figures(p: np.ndarray, holm: np.ndarray, t: np.ndarray, diff: np.ndarray,
                       base: np.ndarray) -> dict[str, np.ndarray]:
    """Per combination (rows; labels as columns): ``has`` (any finite
    difference), ``j`` = argmax_j |diff_j| (0 where none), the difference,
    its absolute value, t and base mean at ``j``; ``lowest``: min_j Holm p
    (NaN where none); ``tested``: labels with a p; ``significant``: labels with Holm p < ALPHA."""
    from .headlines import ALPHA

    absdiff = np.abs(diff)
    has = np.isfinite(absdiff).any(1)
    j = np.where(has, np.nanargmax(np.where(np.isfinite(absdiff), absdiff, -np.inf), axis=1), 0)
    n = np.arange(len(j))
    with np.errstate(all="ignore"):
        lowest = np.where(np.isfinite(holm).any(1), np.nanmin(np.where(np.isfinite(holm), holm, np.inf), axis=1),
                          np.nan)
    return {"has": has, "j": j, "abs": absdiff[n, j], "diff": diff[n, j], "t": t[n, j], "base": base[n, j],
            "lowest": lowest, "tested": np.isfinite(p).sum(1), "significant": (holm < ALPHA).sum(1)}


def distribution_figures(g: pd.DataFrame, order: pd.Index) -> dict[str, Any]:
    """Per grid point ``_i`` of ``g`` (a headline's rows; in ``order``): ``top``,
    the rows of its :data:`TOP_LABELS` largest estimates (by point, then estimate);
    ``worst``, the row of its largest |z|, and ``worst_rows`` the same in
    ``g``'s order; ``max_abs_z``; ``labels``: its rows."""
    top = g.sort_values(["_i", "estimate"], ascending=[True, False], kind="stable").groupby("_i").head(TOP_LABELS)
    z = g["z"].abs()
    rows = g.loc[z[z.notna()].groupby(g["_i"][z.notna()]).idxmax()]
    return {"top": top, "worst_rows": rows, "worst": rows.set_index("_i").reindex(order),
            "max_abs_z": z[z.notna()].groupby(g["_i"][z.notna()]).max().reindex(order),
            "labels": g.groupby("_i").size().reindex(order).to_numpy()}


def best_tests(mine: pd.DataFrame, order: pd.Index) -> tuple[pd.Series, pd.DataFrame]:
    """Per grid point of ``order``: how many of ``mine`` (a headline's tests)
    were made there, and the one of smallest p."""
    n = mine.groupby("point").size().reindex(order)
    best = mine.loc[mine.dropna(subset=["p"]).groupby("point")["p"].idxmin()].set_index("point").reindex(order)
    return n, best


def decomposition_figures(total: np.ndarray, between: np.ndarray, share: np.ndarray) -> tuple[int, float] | None:
    """One point's shuffled-deck figures over its labels: (argmax_j of the
    between-deck share, the median share); None where the decks are
    independent (no finite total, or no between-deck variance above 0)."""
    if not np.isfinite(total).any() or not np.nanmax(np.nan_to_num(between, nan=0.0)) > 0:
        return None
    return int(np.nanargmax(np.where(np.isfinite(share), share, -np.inf))), float(np.nanmedian(share))
