"""``summary.json``: one entry per grid point (keyed ``axis=value,...``)."""

from __future__ import annotations


import numpy as np
import pandas as pd

from ...words import finite_float, python_value
from ...analysis import grid_size
from .grid import point_key, grid_axes, finite_list, point_index


#: What summary.json says of each estimate.
_ESTIMATE = ("estimate", "se", "low", "high", "exact")


def empty_summary_row() -> dict:
    row = {k: None for k in ("slope", "slope_basis", "variance_ratio", "batch_means_ratio",
                             "max_abs_error", "total_variation", "max_abs_z", "worst_label", "exact",
                             "reference", "replicates", "top3", "modal")}
    row["estimates"] = {}
    return row


def summary_estimates(ds, points, heads: pd.DataFrame, summary: dict) -> None:
    """Every headline's estimates into ``summary`` per point: {headline: {label
    ("value" for a scalar): {estimate, se, low, high, exact}}}; one pass over
    the rows, their point keys and numbers made column by column."""
    if heads.empty:
        return
    entries = list(summary.values())  # in grid order, as the points
    keys = [entries[i] for i in point_index(ds, heads)] if len(entries) == grid_size(ds) else \
        [summary[k] for k in _row_keys(ds, heads)]
    numbers = zip(*(finite_list(heads[c]) for c in _ESTIMATE))
    texts: dict = {}  # each label's text once, not once a row
    labels = [texts.setdefault(lab, str(lab) or "value") for lab in heads["label"]] if "label" in heads \
        else ["value"] * len(heads)
    for entry, name, label, values in zip(keys, heads["headline"], labels, numbers):
        entry["estimates"].setdefault(name, {})[label] = dict(zip(_ESTIMATE, values))


def _row_keys(ds, heads: pd.DataFrame) -> list[str]:
    """:func:`point_key` of each row's grid point, from the text of each axis's values."""
    axes = grid_axes(ds)
    if not axes:
        return [point_key(ds, {})] * len(heads)
    texts = [heads[a].map({v: f"{a}={python_value(v)}" for v in heads[a].unique()}) for a in axes]
    return [",".join(parts) for parts in zip(*texts)]


def summarise(ds, points, parts, tables) -> dict:
    """summary.json's entry per grid point from the points and frequencies
    tables (rows in grid order; each point's top three labels by array work)."""
    pt, ft = tables["points"], tables["frequencies"]
    k = ds.sizes[parts["dim"]]
    estimate = ft["estimate"].to_numpy(dtype=float).reshape(len(pt), k)
    labels = ft["label"].to_numpy()[:k]
    top = np.argsort(-np.nan_to_num(estimate, nan=-np.inf), axis=1, kind="stable")[:, :3]
    own = parts["headline"] is None  # else the headlines' own estimates are added by summary_estimates
    columns = {c: finite_list(ft[c]) for c in _ESTIMATE} if own else {}
    summary = {}
    for i, (p, r) in enumerate(zip(points, pt.to_dict("records"))):
        row = empty_summary_row()
        row.update(slope=finite_float(r["slope"]), slope_basis=r["basis"] or None,
                   variance_ratio=finite_float(r["variance_ratio"]),
                   batch_means_ratio=finite_float(r["batch_means_ratio"]),
                   max_abs_error=finite_float(r["max_abs_error"]), total_variation=finite_float(r["tv_distance"]),
                   max_abs_z=finite_float(r["max_abs_z"]), worst_label=r["worst_label"] or None,
                   exact=r["exact"], reference=r["reference"] or None, replicates=int(r["replicates"]))
        if row["replicates"]:
            row["top3"] = [{"label": labels[j], "frequency": finite_float(estimate[i, j])} for j in top[i]]
            row["modal"] = r["modal"] or None
        if own:
            row["estimates"] = {"frequency": {
                lab: {c: columns[c][i * k + j] for c in _ESTIMATE} for j, lab in enumerate(labels)}}
        summary[point_key(ds, p)] = row
    return summary


def add_precision(ds, points, tables, summary) -> None:
    """With a [precision] target: a ``precision`` table and, per point of
    ``summary``, its replicates used, standard error reached and state."""
    from ...analysis import precision_columns

    columns = precision_columns(ds)
    if columns is None:
        return
    tables["precision"] = pd.DataFrame([{**p, **c} for p, c in zip(points, columns)])
    for p, c in zip(points, columns):
        summary[point_key(ds, p)]["precision"] = c
