"""The report's tables, each written as a CSV: grid points, frequencies, comparisons,
headlines, distributions, the verdict's tests, the deck decomposition and variance."""

from __future__ import annotations


import numpy as np
import pandas as pd

from ...analysis import ALPHA, frequencies, headline_summary, label_values, BETWEEN_DOMINATES, grid_size, label_variance
from ...analysis import (best_tests, compared_mean, comparison_figures, decomposition_figures, distribution_figures,
                         label_text, point_figures, point_ratios)
from ...words import count, finite_float, plural, python_value
from .columns import TABLE_COLUMNS
from .grid import point_key, grid_axes, flat_points, point_index, finite_list


def report_tables(ds, points, parts, meta) -> dict[str, pd.DataFrame]:
    return {
        "points": point_table(ds, points, parts),
        "frequencies": frequency_table(ds, points, parts),
        "comparisons": comparison_table(ds, parts, meta),
        "decomposition": _decomposition_table(ds, points, parts, meta),
    }


def point_table(ds, points, parts) -> pd.DataFrame:
    axes, dim = grid_axes(ds), parts["dim"]
    conv = parts["conv"]
    last = conv.isel(checkpoint=-1)
    labels = label_text(ds[dim])
    ref = flat_points(parts["reference"], axes, [dim])
    mean = flat_points(parts["mean"], axes, [dim])
    z = flat_points(parts["z"], axes, [dim])
    reps = flat_points(last["replicates"], axes)
    rate = parts["rate"]
    ratio = parts["ratio"]
    vr, bm = (None if r is None else flat_points(r, axes) for r in point_ratios(ratio, parts["batch"], axes, dim))
    slope, low, high, basis = ((flat_points(rate[k], axes) for k in ("slope", "slope_low", "slope_high", "basis"))
                               if rate is not None else (None,) * 4)
    rows = []
    for i, p in enumerate(points):
        key = point_key(ds, p)
        fig = point_figures(mean[i], ref[i], z[i])
        worst, order = fig["worst"], fig["top"]
        row = {**p, "replicates": int(reps[i]), "exact": parts["states"][key][0],
               "reference": parts["ref_kind"].get(key, ""),
               "max_abs_z": finite_float(fig["max_abs_z"]) if worst is not None else None,
               "worst_label": labels[worst] if worst is not None else "",
               "max_abs_error": finite_float(fig["max_abs_error"]) if fig["max_abs_error"] is not None else None,
               "tv_distance": finite_float(fig["tv_distance"]) if fig["tv_distance"] is not None else None,
               "slope": None, "slope_low": None, "slope_high": None, "basis": "", "variance_ratio": None, "batch_means_ratio": None,
               "modal": "", "top3": ""}
        if rate is not None:
            row.update(slope=finite_float(slope[i]), slope_low=finite_float(low[i]),
                       slope_high=finite_float(high[i]), basis=str(basis[i]))
        if vr is not None:
            row["variance_ratio"] = finite_float(vr[i])
        if bm is not None:
            row["batch_means_ratio"] = finite_float(bm[i])
        if reps[i]:
            row["top3"] = " ".join(labels[j] for j in order)
            if parts["modal"] is not None:
                row["modal"] = parts["modal"](np.asarray(mean[i], dtype=float))
        rows.append(row)
    return pd.DataFrame(rows, columns=[*axes, *TABLE_COLUMNS["points"]])


def _label_names(ds, dim) -> list[str]:
    name = f"{dim}_name"
    if name in ds.coords:
        return [str(x) for x in ds[name].values]
    return [str(x) for x in ds[dim].values]


def frequency_table(ds, points, parts) -> pd.DataFrame:
    axes, dim = grid_axes(ds), parts["dim"]
    labels = label_text(ds[dim])
    names = _label_names(ds, dim)
    mean, se = flat_points(parts["mean"], axes, [dim]), flat_points(parts["se"], axes, [dim])
    ref, z = flat_points(parts["reference"], axes, [dim]), flat_points(parts["z"], axes, [dim])
    df = flat_points(parts["df"].broadcast_like(parts["mean"]), axes, [dim])
    low, high = flat_points(parts["low"], axes, [dim]), flat_points(parts["high"], axes, [dim])
    n, k = mean.shape
    point, label = np.repeat(np.arange(n), k), np.tile(np.arange(k), n)
    where = np.unravel_index(point, [ds.sizes[a] for a in axes]) if axes else ()
    grid = {a: ds[a].values[w] if ds[a].dtype.kind in "biuf" else _categorical([python_value(v) for v in ds[a].values], w)
            for a, w in zip(axes, where)}
    kinds = _categorical([parts["ref_kind"].get(point_key(ds, p), "") for p in points], point)
    df = pd.DataFrame({**grid, "label": _categorical(labels, label), "name": _categorical(names, label),
                       "estimate": mean.ravel(), "se": se.ravel(), "low": low.ravel(),
                       "high": high.ravel(), "df": df.ravel(), "exact": ref.ravel(),
                       "reference": kinds, "z": z.ravel()})
    return df


def _categorical(values: list, index: np.ndarray) -> pd.Categorical:
    """``values[index]`` as a categorical column: each distinct text held once, not once a row."""
    cat = pd.Categorical(values)
    return pd.Categorical.from_codes(cat.codes[index], cat.categories)


def comparison_table(ds, parts, meta) -> pd.DataFrame:
    """One row per comparison of two values of an axis and combination of the
    other axes (:func:`comparisons.axis_comparisons`): the labels tested and
    significant (Holm, ALPHA), the largest difference, its label, relative
    difference and t.  Array work over every combination at once."""
    dim = parts["dim"]
    rows, meta["comparisons"] = [], []
    freq = frequencies(ds, parts["variable"]).isel(checkpoint=-1)
    for (axis, a, b), res in parts["compare"].items():
        others = [x for x in res["p"].dims if x != dim]
        fb = compared_mean(freq, axis, b).transpose(*others, dim).values
        got = _comparison_rows(res, fb.reshape(-1, fb.shape[-1]), others, dim, f"{axis}: {a} vs {b}")
        rows += got
        meta["comparisons"] += [{**row, "axis": axis, "a": a, "b": b, "significant_labels": sig}
                                for row, sig in zip(got, _significant_labels(res, others, dim))]
    if not rows:
        return pd.DataFrame()
    df = pd.DataFrame(rows)
    front = [c for c in df.columns if c not in TABLE_COLUMNS["comparisons"]]
    return df[["comparison", *front, *TABLE_COLUMNS["comparisons"][1:]]]


def _by_cell(res, name: str, others: list[str], dim: str) -> np.ndarray:
    """``res[name]`` as (combinations of ``others`` in their order, labels)."""
    values = res[name].transpose(*others, dim).values
    return values.reshape(-1, values.shape[-1])


def _significant_labels(res, others: list[str], dim: str) -> list[list[str]]:
    """Per combination of ``others``: the labels whose Holm-adjusted p is below ALPHA."""
    labels = np.array([str(v) for v in res[dim].values], dtype=object)
    return [labels[row].tolist() for row in _by_cell(res, "p_holm", others, dim) < ALPHA]


def _comparison_rows(res, base: np.ndarray, others: list[str], dim: str, comparison: str) -> list[dict]:
    """The comparison table's rows of one comparison ``res``: one per combination of ``others``;
    ``base``: the mean frequency at the compared value, (combinations, labels)."""
    pick = comparison_figures(*(_by_cell(res, k, others, dim) for k in ("p", "p_holm", "t", "difference")), base)
    has, j, lowest = pick["has"], pick["j"], pick["lowest"]
    n = np.arange(len(j))
    labels = [str(v) for v in res[dim].values]
    where = [[python_value(v) for v in res[x].values] for x in others]
    cells = zip(*np.unravel_index(n, tuple(len(w) for w in where))) if others else [()] * len(n)
    tested, significant = pick["tested"], pick["significant"]
    return [{**{x: where[k][c] for k, (x, c) in enumerate(zip(others, cell))}, "comparison": comparison,
             "labels_tested": int(tested[i]), "significant": int(significant[i]),
             "min_p_holm": finite_float(lowest[i]),
             "max_abs_difference": finite_float(pick["abs"][i]) if has[i] else None,
             "at_label": labels[j[i]] if has[i] else "",
             "relative_difference": finite_float(pick["diff"][i] / pick["base"][i])
             if has[i] and pick["base"][i] > 0 else None,
             "t_at_label": finite_float(pick["t"][i]) if has[i] else None}
            for i, cell in enumerate(cells)]


def summary_table(ds, found: dict) -> pd.DataFrame:
    """:func:`headlines.summary` under the column names every table uses
    (``estimate``, ``se``), without bins that nothing fell in and whose exact
    value is 0 (e.g. 0 rolls)."""
    table = headline_summary(ds, found=found) if found else pd.DataFrame(columns=["headline", "estimate"])
    if table.empty:
        return table
    return table[table["estimate"].notna() & ~((table["estimate"] == 0) & ~(table["exact"] > 0))]


def pmf_headlines(found: dict) -> list[str]:
    """Distributions over independent games (histograms with a goodness of
    fit): drawn as distributions, one panel per grid point, not as rows."""
    return [n for n, e in found.items() if e.attrs["kind"] == "distribution" and "gof_p" in e]


def with_p_holm(ds, heads: pd.DataFrame, tests: pd.DataFrame) -> pd.DataFrame:
    """``heads`` with ``p_holm``: the verdict's Holm-adjusted p of each row's test
    (a histogram's rows: its goodness of fit's, in the distributions table)."""
    heads = heads.copy()
    heads["p_holm"] = np.nan
    if heads.empty or tests is None or tests.empty:
        return heads
    key = pd.Series(list(zip(tests["point"], tests["headline"], tests["label"].astype(str))))
    holm = dict(zip(key, tests["p_holm"]))
    idx = point_index(ds, heads)
    heads["p_holm"] = [holm.get((i, h, str(lab)), np.nan)
                       for i, h, lab in zip(idx, heads["headline"], heads["label"])]
    return heads


def headline_table(heads: pd.DataFrame, found: dict) -> pd.DataFrame:
    """Every row of the headline answers (scalars first, then each label of a
    distribution): the CSV behind the page's compact tables."""
    if heads.empty:
        return heads
    kinds = {name: est.attrs["kind"] for name, est in found.items()}
    order = heads["headline"].map(lambda h: kinds.get(h) == "distribution")
    return heads.assign(_d=order).sort_values("_d", kind="stable").drop(columns="_d")


def distribution_table(ds, heads: pd.DataFrame, found: dict, tests: pd.DataFrame) -> pd.DataFrame:
    """One row per grid point and distribution headline: its three most
    frequent labels, the label furthest from its exact value (largest |z|)
    and the test the verdict makes of it (a goodness of fit, or the smallest
    p of the per-label t tests), with its Holm-adjusted p.  Grouped array
    work: no pass over the rows per point."""
    frames = [f for _, f in distribution_frames(ds, heads, found, tests)]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if not df.empty and df["test"].eq("").all():
        df = df.drop(columns=TEST_COLUMNS)
    return df


#: The distributions table's columns of the verdict's test, left out where no point has one.
TEST_COLUMNS = ["test", "statistic", "test_df", "p", "p_holm", "worst_exact", "max_abs_z"]


def distribution_frames(ds, heads: pd.DataFrame, found: dict, tests: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(headline, its rows of :func:`distribution_table`) of each distribution headline with rows."""
    dists = [n for n, e in found.items() if e.attrs["kind"] == "distribution"]
    if heads.empty or not dists:
        return []
    idx = point_index(ds, heads)
    used = [*grid_axes(ds), "label", "estimate", "exact", "z"]  # only the columns it reads: heads is large
    frames = []
    for name in dists:
        mine = (heads["headline"] == name).to_numpy()
        frames.append((name, _distribution_rows(ds, heads.loc[mine, used].assign(_i=idx[mine]), name,
                                                found[name].attrs["dim"], tests)))
    return [(name, f) for name, f in frames if len(f)]


def _distribution_rows(ds, g: pd.DataFrame, name: str, dim: str, tests: pd.DataFrame) -> pd.DataFrame:
    """:func:`distribution_table`'s rows of headline ``name`` (``g``: its rows, ``_i`` their grid point)."""
    if g.empty:
        return pd.DataFrame()
    # as every table writes labels (a histogram's last bin counting every larger value: >=N)
    texts = dict(zip(label_values(ds, dim), label_text(ds[dim]))) if dim else {}
    first = g.drop_duplicates("_i")
    order = pd.Index(first["_i"])
    fig = distribution_figures(g, order)
    top, rows, worst, worst_z = fig["top"], fig["worst_rows"], fig["worst"], fig["max_abs_z"]
    texts_of = {i: [] for i in top["_i"]}  # each point's top labels in words, in their order
    for i, lab, v in zip(top["_i"], top["label"], top["estimate"]):
        texts_of[i].append(f"{texts.get(str(lab), str(lab))}: {v:.3g}")
    top_text = pd.Series({i: ", ".join(t) for i, t in texts_of.items()}, dtype=object)
    worst_text = pd.Series([texts.get(str(lab), str(lab)) for lab in rows["label"]], index=rows["_i"], dtype=object)
    out = first[[*grid_axes(ds)]].reset_index(drop=True)
    out["headline"] = name
    out["labels"] = fig["labels"]
    out["top3"] = top_text.reindex(order).to_numpy()
    out["worst_label"] = worst_text.reindex(order).fillna("").to_numpy()
    out["worst_estimate"], out["worst_exact"] = finite_list(worst["estimate"]), finite_list(worst["exact"])
    out["max_abs_z"] = finite_list(worst_z)
    return pd.concat([out, _distribution_tests(tests, name, order)], axis=1)


def _distribution_tests(tests: pd.DataFrame, name: str, order: pd.Index) -> pd.DataFrame:
    """Per grid point of ``order``: the verdict's test of headline ``name``
    (its smallest p among the labels' tests, how many), "" where it has none."""
    out = pd.DataFrame({"test": [""] * len(order), "statistic": None, "test_df": None, "p": None, "p_holm": None})
    mine = tests[tests["headline"] == name] if tests is not None and len(tests) else pd.DataFrame()
    if mine.empty:
        return out
    n, best = best_tests(mine, order)
    has = n.notna().to_numpy() & best["p"].notna().to_numpy()
    out["test"] = ["chi2" if t == "chi2" else f"{t}, {int(k)} {plural('label', int(k))}" if ok else ""
                   for t, k, ok in zip(best["test"], n.fillna(0), has)]
    for col, key in (("statistic", "statistic"), ("test_df", "df"), ("p", "p"), ("p_holm", "p_holm")):
        out[col] = [v if ok else None for v, ok in zip(finite_list(best[key]), has)]
    return out


def verdict_tests_table(ds, points, tests: pd.DataFrame) -> pd.DataFrame:
    """Every test of the verdict, smallest p first, with its grid point."""
    if tests is None or tests.empty:
        return pd.DataFrame()
    axes = grid_axes(ds)
    where = pd.DataFrame([{a: p[a] for a in axes} for p in points]) if axes else None
    t = tests.sort_values("p", kind="stable").reset_index(drop=True)
    front = where.iloc[t["point"].to_numpy()].reset_index(drop=True) if where is not None else pd.DataFrame()
    return pd.concat([front, t.drop(columns="point")], axis=1)


def _decomposition_table(ds, points, parts, meta) -> pd.DataFrame | None:
    """Shuffled decks, per grid point and label: total = between-deck +
    sampling variance, and the paired deck test (each replicate against its
    own decks).  ``meta["decomposition"]``: per point, the label with the
    largest between-deck share, and the labels where more turns will not
    shrink the error."""
    dec, dim = parts["decomp"], parts["dim"]
    meta["decomposition"] = {}
    if dec is None:
        return None
    axes, labels = grid_axes(ds), label_text(ds[dim])
    cols = {k: flat_points(dec[k], axes, [dim]) for k in ("total", "between", "sampling", "between_share",
                                                     "between_share_low", "between_share_high")}
    kinds = flat_points(dec["between_share_interval"].broadcast_like(dec["between_share"]), axes, [dim])
    pairs = parts.get("pairs")
    paired = {k: flat_points(pairs[k], axes, [dim]) for k in ("sd", "t", "p")} if pairs is not None else {}
    rows = []
    for i, p in enumerate(points):
        between, share = cols["between"][i], cols["between_share"][i]
        fig = decomposition_figures(cols["total"][i], between, share)
        if fig is None:
            continue  # independent decks: every replicate plays the same chain
        worst, median = fig
        stuck = [labels[j] for j in np.flatnonzero(share >= BETWEEN_DOMINATES)]
        meta["decomposition"][point_key(ds, p)] = {
            "label": labels[worst], "between_share": finite_float(share[worst]),
            "median_between_share": finite_float(median), "labels_between_dominates": stuck,
            "total_var": finite_float(cols["total"][i][worst]), "between_var": finite_float(between[worst]),
            "sampling_var": finite_float(cols["sampling"][i][worst])}
        for j, label in enumerate(labels):
            if not np.isfinite(cols["total"][i][j]):
                continue
            rows.append({**p, "label": label, "total_var": finite_float(cols["total"][i][j]),
                         "between_var": finite_float(between[j]), "sampling_var": finite_float(cols["sampling"][i][j]),
                         "between_share": finite_float(share[j]),
                         **{k: finite_float(cols[k][i][j]) for k in ("between_share_low", "between_share_high")},
                         "between_share_interval": str(kinds[i][j]),
                         **{f"paired_{k}": finite_float(v[i][j]) for k, v in paired.items()}})
    return pd.DataFrame(rows) if rows else None


#: The per-label variance table (variance.csv: about 10 KB of memory a grid point while it is made) up to this many points.
MAX_VARIANCE_POINTS = 20_000


def variance_table(ds, found: dict, parts, meta: dict | None = None) -> pd.DataFrame | None:
    """:func:`analysis.label_variance`: every headline label's replicate
    s.d., MCSE, ESS, exact CLT variance and deck parts (variance.csv); left
    out, said in ``meta``'s notes, above :data:`MAX_VARIANCE_POINTS` points."""
    if not found:
        return None
    points = grid_size(ds)
    if points > MAX_VARIANCE_POINTS:
        if meta is not None:
            meta["notes"].append(f"variance per label (variance.csv) left out: it is made for grids of at most "
                                 f"{MAX_VARIANCE_POINTS:,} points (this one has {points:,}); "
                                 "ds.boardsweep.variance() gives it for a selection of the store")
        return None
    if parts is None:
        return label_variance(ds, found)
    return label_variance(ds, found, parts.get("ratio"), parts.get("decomp"), parts["variable"],
                                   parts.get("theory"))


def variance_words(meta: dict) -> str:
    """Where more turns will not shrink an error, in one sentence (the page's summary)."""
    dec = meta.get("decomposition") or {}
    stuck = {k: v for k, v in dec.items() if v["labels_between_dominates"]}
    if not stuck:
        return ""
    key, worst = max(stuck.items(), key=lambda kv: kv[1]["between_share"] or 0.0)
    return (f"More turns will not shrink the error at {count(len(stuck), 'point')} with shuffled decks: each "
            f"replicate plays one deck order for all its turns, and the variance between deck orders is at "
            f"least half of the replicate variance for {count(len(worst['labels_between_dominates']), 'label')} "
            f"at {key} (largest: {worst['between_share']:.2f} at {worst['label']}); only more replicates "
            f"(deck orders) shrink it. Per label: decomposition.csv, variance.csv.")
