"""A self-contained report of a sweep store: index.html, PNG figures, summary.json.

``build_report(store, out_dir)`` writes into ``out_dir``:

* ``index.html``: per grid point the convergence numbers, seed 003's two
  tables (every label with its count and relative frequency, sorted by
  frequency and in board order), the axis comparisons (Welch + Holm) and the
  shuffle variance decomposition where the game offers one;
* ``frequencies_<i>.png`` (bars, exact value marked), ``convergence.png``
  (log-log RMS error with the theoretical sigma/sqrt(N) band),
  ``variance_ratio.png`` (measured / CLT variance against steps);
* ``summary.json``: per grid point, keyed ``axis=value,...``: ``slope``,
  ``slope_basis``, ``variance_ratio``, ``batch_means_ratio``,
  ``max_abs_error``, ``total_variation``, ``replicates``, ``top3``, ``modal``
  (null where it does not apply);
* ``report.json``: the comparisons and decomposition behind the page.

Works for any game's store: what a game lacks (exact answers, theory, a
distribution variable) is reported as null, never a crash.
"""

from __future__ import annotations

import html
import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from boardsweep.pipeline import analysis
from boardsweep.pipeline.query import distribution_variables, frequencies, grid_points, open_sweep, top_k

__all__ = ["build_report", "pick_variable", "point_key"]

MAX_PANELS = 24  # grid points drawn in the multi-panel figures


def pick_variable(ds: xr.Dataset) -> str | None:
    """The distribution variable to report: ``counts``, else one over
    ``location``, else the first; None when the store has none."""
    dists = distribution_variables(ds)
    if not dists:
        return None
    if "counts" in dists:
        return "counts"
    return next((v for v, d in dists.items() if d == "location"), next(iter(dists)))


def point_key(ds: xr.Dataset, point: dict[str, Any]) -> str:
    """``axis=value,...`` of a grid point (all parameters when there is no grid)."""
    items = point if point else analysis.point_params(ds, {})
    return ",".join(f"{k}={v}" for k, v in items.items())


def _num(x: Any) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _sel(obj, point):
    return obj.sel(point) if point else obj


def build_report(store: str | xr.Dataset, out_dir: str | Path, variable: str | None = None) -> dict:
    """Write the report of ``store`` into ``out_dir``; return the summary dict."""
    import matplotlib

    matplotlib.use("Agg")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ds = open_sweep(str(store)) if not isinstance(store, xr.Dataset) else store
    ds = ds.load()
    variable = variable or pick_variable(ds)
    points = list(grid_points(ds))
    meta: dict[str, Any] = {"store": str(store) if not isinstance(store, xr.Dataset) else None,
                            "game": ds.attrs.get("game"), "sweep": ds.attrs.get("sweep"),
                            "variable": variable, "notes": []}
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells of unfinished points
        if variable is None:
            summary = {point_key(ds, p): _empty() for p in points}
            meta["notes"].append("the store has no distribution variable (checkpoint, DIM)")
            _write(out, summary, meta, _html_minimal(ds, summary, meta))
            return summary
        parts = _analyse(ds, variable, meta)
        summary = _summarise(ds, variable, points, parts)
        figures = _figures(ds, variable, points, parts, out)
        page = _html(ds, variable, points, parts, summary, figures, meta)
    _write(out, summary, meta, page)
    return summary


def _empty() -> dict:
    row = {k: None for k in ("slope", "slope_basis", "variance_ratio", "batch_means_ratio",
                             "max_abs_error", "total_variation", "replicates", "top3", "modal")}
    row["estimates"] = {}
    return row


def _try(meta: dict, what: str, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # report what failed, keep going
        meta["notes"].append(f"{what}: not available ({type(exc).__name__}: {exc})")
        return None


def _analyse(ds, variable, meta) -> dict:
    parts: dict[str, Any] = {}
    parts["conv"] = conv = analysis.convergence(ds, variable)
    parts["ratios"] = _try(meta, "estimates with intervals", analysis.ratio_estimates, ds) or {}
    parts["rate"] = _try(meta, "convergence rate", analysis.convergence_rate, conv) if "steps" in conv else None
    parts["ratio"] = _try(meta, "variance ratio", analysis.variance_ratio, ds, variable)
    parts["batch"] = _try(meta, "batch means", analysis.batch_means, ds, variable)
    parts["theory"] = _try(meta, "theoretical variance", analysis.theoretical_variance, ds, variable)
    parts["decomp"] = _try(meta, "shuffle decomposition", analysis.shuffle_decomposition, ds, variable)
    parts["compare"] = _try(meta, "axis comparisons", analysis.axis_comparisons, ds, variable) or {}
    game = analysis.game_of(ds)
    parts["modal"] = game.extras.get("modal") if game is not None else None
    if parts["decomp"] is None and analysis.game_of(ds) is not None and \
            "replicate_exact" in analysis.game_of(ds).extras:
        meta["notes"].append("shuffle decomposition skipped: too many exact solves or games per "
                             "replicate for the game's replicate_exact")
    return parts


def _summarise(ds, variable, points, parts) -> dict:
    conv, dim = parts["conv"], parts["conv"].attrs["dim"]
    summary = {}
    for point in points:
        row = _empty()
        c = _sel(conv, point)
        last = c.isel(checkpoint=-1)
        row["replicates"] = int(last["replicates"])
        if parts["rate"] is not None:
            r = _sel(parts["rate"], point)
            row["slope"] = _num(r["slope"])
            row["slope_basis"] = str(r["basis"].values) or None
        if parts["ratio"] is not None:
            row["variance_ratio"] = _num(_sel(parts["ratio"]["ratio"], point).isel(checkpoint=-1).median(dim))
        if parts["batch"] is not None and "ratio" in parts["batch"]:
            row["batch_means_ratio"] = _num(_sel(parts["batch"]["ratio"], point).mean())
        row["max_abs_error"] = _num(last["max_abs_error"])
        row["total_variation"] = _num(last["total_variation"])
        if row["replicates"]:
            row["top3"] = [{"label": str(k), "frequency": _num(v)} for k, v in top_k(last["mean"], 3, dim)]
            modal = parts["modal"]
            if modal is not None:
                row["modal"] = modal(np.asarray(last["mean"].values, dtype=float))
        row["estimates"] = _point_estimates(ds, point, parts["ratios"])
        summary[point_key(ds, point)] = row
    return summary


def _point_estimates(ds, point, ratios) -> dict:
    """{ratio: {label: {estimate, low, high, exact}}} of one grid point; only the
    first ``players`` seats where the ratio has a seat dimension."""
    out = {}
    params = analysis.point_params(ds, point)
    for name, est in ratios.items():
        e = _sel(est, point)
        extra = [d for d in e["estimate"].dims]
        labels = [str(x) for x in e[extra[0]].values] if extra else ["value"]
        if extra and extra[0] == "seat" and isinstance(params.get("players"), int):
            labels = labels[: params["players"]]
        entry = {}
        for j, label in enumerate(labels):
            pick = (lambda a: a.isel({extra[0]: j})) if extra else (lambda a: a)
            entry[label] = {k: _num(pick(e[k]).values) for k in ("estimate", "low", "high", "exact")
                            if k in e}
        out[name] = entry
    return out


# --- figures -----------------------------------------------------------------------------


def _figures(ds, variable, points, parts, out: Path) -> dict:
    import matplotlib.pyplot as plt

    conv, dim = parts["conv"], parts["conv"].attrs["dim"]
    labels = [str(x) for x in ds[dim].values]
    figs: dict[str, Any] = {"frequencies": {}}
    for i, point in enumerate(points):
        last = _sel(conv, point).isel(checkpoint=-1)
        if int(last["replicates"]) == 0:
            continue
        fig, ax = plt.subplots(figsize=(max(6, 0.22 * len(labels)), 3.2))
        x = np.arange(len(labels))
        ax.bar(x, last["mean"].values, yerr=np.nan_to_num(2 * last["stderr"].values), color="#7aa6c2",
               label="simulated (mean, 2 s.e.)")
        exact = last["exact"].values
        if np.isfinite(exact).any():
            ax.scatter(x, exact, marker="_", s=120, color="black", zorder=3, label="exact")
        ax.set_xticks(x, labels, rotation=90, fontsize=6)
        ax.set_ylabel("relative frequency")
        ax.set_title(point_key(ds, point) or ds.attrs.get("sweep", ""), fontsize=8)
        ax.legend(fontsize=7)
        fig.tight_layout()
        name = f"frequencies_{i}.png"
        fig.savefig(out / name, dpi=90)
        plt.close(fig)
        figs["frequencies"][i] = name
    if "steps" in conv:
        figs["convergence"] = _panels(ds, points, parts, out, "convergence.png", _draw_convergence)
        if parts["ratio"] is not None:
            figs["variance_ratio"] = _panels(ds, points, parts, out, "variance_ratio.png", _draw_ratio)
    return figs


def _panels(ds, points, parts, out, name, draw) -> str | None:
    import matplotlib.pyplot as plt

    shown = points[:MAX_PANELS] or [{}]
    cols = min(4, len(shown))
    rows = -(-len(shown) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.9 * rows), squeeze=False)
    for ax, point in zip(axes.flat, shown):
        draw(ax, ds, point, parts)
        ax.set_title(point_key(ds, point), fontsize=6)
        ax.tick_params(labelsize=6)
    for ax in list(axes.flat)[len(shown):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(out / name, dpi=90)
    plt.close(fig)
    return name


def _draw_convergence(ax, ds, point, parts) -> None:
    conv = _sel(parts["conv"], point)
    dim = parts["conv"].attrs["dim"]
    steps = conv["steps"].values
    ok = np.isfinite(steps) & (steps > 0)
    err = conv["rms_error"].values
    if np.isfinite(err[ok]).any():
        ax.loglog(steps[ok], err[ok], "o-", ms=3, label="RMS error (one replicate)")
    sd = np.sqrt((conv["sd"] ** 2).mean(dim, skipna=False)).values
    if np.isfinite(sd[ok]).any():
        ax.loglog(steps[ok], sd[ok], "s--", ms=3, label="RMS across-replicate sd")
    theory = parts["theory"]
    if theory is not None:
        sig2 = _sel(theory, point).values
        per = ds[theory.attrs["per"]].astype(float)
        n = _sel(per, point).mean("replicate").values
        if np.isfinite(sig2).any() and np.isfinite(n[ok]).any():
            lo = np.sqrt(np.nanmin(sig2[sig2 > 0]) / n[ok])
            hi = np.sqrt(np.nanmax(sig2) / n[ok])
            ax.fill_between(steps[ok], lo, hi, color="orange", alpha=0.25, label="sigma/sqrt(N), all labels")
            ax.loglog(steps[ok], np.sqrt(np.nanmean(sig2) / n[ok]), color="orange", label="theory RMS")
    ax.set_xlabel(parts["conv"].attrs.get("steps", "steps"), fontsize=7)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=5)


def _draw_ratio(ax, ds, point, parts) -> None:
    dim = parts["conv"].attrs["dim"]
    steps = _sel(parts["conv"]["steps"], point).values
    ratio = _sel(parts["ratio"]["ratio"], point)
    med = ratio.median(dim).values
    q1, q3 = ratio.quantile(0.25, dim).values, ratio.quantile(0.75, dim).values
    ok = np.isfinite(steps) & (steps > 0) & np.isfinite(med)
    if ok.any():
        ax.semilogx(steps[ok], med[ok], "o-", ms=3, label="median over labels")
        ax.fill_between(steps[ok], q1[ok], q3[ok], alpha=0.3, label="quartiles")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xlabel(parts["conv"].attrs.get("steps", "steps"), fontsize=7)
    ax.set_ylabel("measured var / CLT var", fontsize=7)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=5)


# --- HTML --------------------------------------------------------------------------------

_STYLE = """body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}
table{border-collapse:collapse;font-size:12px;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#eee}td.l{text-align:left}details{margin:.4em 0}img{max-width:100%}"""


def _fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "&ndash;"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return html.escape(str(x))


def _table(header: list[str], rows: list[list[Any]], left: int = 1) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td{' class=l' if j < left else ''}>{_fmt(v)}</td>" for j, v in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _html(ds, variable, points, parts, summary, figures, meta) -> str:
    conv, dim = parts["conv"], parts["conv"].attrs["dim"]
    h = [f"<h1>{html.escape(str(ds.attrs.get('sweep', 'sweep')))}: {html.escape(str(ds.attrs.get('game')))}</h1>",
         f"<p>Variable <b>{html.escape(variable)}</b> over <b>{html.escape(dim)}</b>; steps = "
         f"<b>{html.escape(str(conv.attrs.get('steps')))}</b>; spec SHA-256 "
         f"<code>{html.escape(str(ds.attrs.get('spec_sha256', ''))[:16])}</code>, git "
         f"<code>{html.escape(str(ds.attrs.get('git_revision', ''))[:12])}</code>.</p>"]
    h.append("<h2>Convergence per grid point</h2><p>slope: log-log slope of the RMS error of one "
             "replicate (or of the across-replicate sd where no exact answer exists) against steps, "
             "fitted on the upper half of the log-step range; -1/2 expected. variance ratio: median "
             "over labels of the measured across-replicate variance over the Markov-chain CLT "
             "variance at the last checkpoint (1 expected; with R replicates a sample variance is a "
             "chi-square(R-1)/(R-1) multiple of the true one, whose median is below 1: 0.91 "
             "for R = 8, 0.96 for R = 16, so a median ratio near that value is on target). batch means: mean ratio of each "
             "replicate's own batch-means variance (checkpoint increments as batches; few effective "
             "batches, so only the mean is meaningful) to the CLT variance.</p>")
    rows = [[k, v["replicates"], v["slope"], v["slope_basis"], v["variance_ratio"], v["batch_means_ratio"],
             v["max_abs_error"], v["total_variation"], v["modal"],
             ", ".join(t["label"] for t in v["top3"] or [])] for k, v in summary.items()]
    h.append(_table(["grid point", "replicates", "slope", "basis", "variance ratio", "batch means ratio",
                     "max |error|", "TV distance", "modal", "top 3"], rows))
    for name, title in (("convergence", "Log-log convergence"), ("variance_ratio", "Variance ratio")):
        if figures.get(name):
            h.append(f"<h2>{title}</h2><img src='{figures[name]}' alt='{title}'>")
    h.append(_estimates_html(summary))
    h.append(_comparisons_html(parts, dim, meta))
    h.append(_decomposition_html(ds, points, parts, dim, meta))
    h.append("<h2>Landing frequencies per grid point</h2>")
    counts = ds[variable].isel(checkpoint=-1)
    labels = [str(x) for x in ds[dim].values]
    for i, point in enumerate(points):
        key = point_key(ds, point)
        c = _sel(counts, point).sum("replicate", min_count=1).values
        total = np.nansum(c)
        last = _sel(conv, point).isel(checkpoint=-1)
        exact = last["exact"].values
        table = [[lab, _int(c[j]), _ratio(c[j], total), _num(last["stderr"].values[j]), _num(exact[j])]
                 for j, lab in enumerate(labels)]
        by_freq = sorted(table, key=lambda r: -(r[2] if r[2] is not None else -1))
        hdr = [dim, "count", "relative frequency", "s.e.", "exact"]
        img = figures["frequencies"].get(i)
        h.append(f"<details{' open' if i == 0 else ''}><summary>{html.escape(key)} "
                 f"({_int(total) or 0} counted, {int(last['replicates'])} replicates)</summary>"
                 + (f"<img src='{img}' alt='frequencies {html.escape(key)}'>" if img else "")
                 + "<h4>Sorted by frequency</h4>" + _table(hdr, by_freq)
                 + "<h4>Board order</h4>" + _table(hdr, table) + "</details>")
    if meta["notes"]:
        h.append("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in meta["notes"]) + "</ul>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(str(ds.attrs.get('sweep')))}"
            f" report</title><style>{_STYLE}</style></head><body>{''.join(h)}</body></html>")


def _estimates_html(summary: dict) -> str:
    """One table per declared ratio: estimate [95% interval] per label, exact beside."""
    names = sorted({n for row in summary.values() for n in row.get("estimates", {})})
    if not names:
        return ""
    h = ["<h2>Estimates with 95% intervals</h2><p>Pooled over the done replicates at the last "
         "checkpoint: shares with Wilson intervals, means with normal intervals from the "
         "spread of the replicates.</p>"]
    for name in names:
        rows = []
        for key, row in summary.items():
            for label, e in row.get("estimates", {}).get(name, {}).items():
                bounds = ["-" if e.get(b) is None else f"{e[b]:.4g}" for b in ("low", "high")]
                rows.append([key, label, e.get("estimate"), f"[{bounds[0]}, {bounds[1]}]", e.get("exact")])
        h.append(f"<h3>{html.escape(name)}</h3>"
                 + _table(["grid point", "label", "estimate", "95% interval", "exact"], rows, left=2))
    return "".join(h)


def _int(x) -> int | None:
    return None if x is None or not np.isfinite(x) else int(x)


def _ratio(a, b) -> float | None:
    return None if not (np.isfinite(a) and b) else float(a / b)


def _comparisons_html(parts, dim, meta) -> str:
    comps = parts["compare"]
    meta["comparisons"] = []
    if not comps:
        return ""
    h = ["<h2>Do rule variants differ?</h2><p>Welch t-test per label of the replicate means at the "
         "last checkpoint, between two values of one axis with every other axis equal; p-values "
         "Holm-Bonferroni adjusted over the labels of each pair (unadjusted, about 5% of labels "
         "would differ by chance alone). Replicates of the two sides are independent.</p>"]
    rows = []
    for (axis, a, b), res in comps.items():
        others = [d for d in res["p"].dims if d != dim]
        for idx in np.ndindex(*(res.sizes[d] for d in others)):
            sub = res.isel(dict(zip(others, idx))) if others else res
            where = ",".join(f"{d}={sub[d].values.item()}" for d in others)
            sig = [str(lab) for lab, s in zip(sub[dim].values, sub["significant"].values) if s]
            record = {"axis": axis, "a": a, "b": b, "at": where, "labels": int(sub["p"].notnull().sum()),
                      "significant": sig, "min_p_holm": _num(sub["p_holm"].min())}
            meta["comparisons"].append(record)
            rows.append([f"{axis}: {a} vs {b}", where, record["labels"], len(sig), record["min_p_holm"],
                         ", ".join(sig[:12]) + (" ..." if len(sig) > 12 else "")])
    h.append(_table(["comparison", "at", "labels tested", "significant (Holm 5%)", "min adjusted p",
                     "labels"], rows, left=2))
    return "".join(h)


def _decomposition_html(ds, points, parts, dim, meta) -> str:
    dec = parts["decomp"]
    if dec is None:
        return ""
    h = ["<h2>Where the replicate variance comes from</h2><p>Each replicate plays its own "
         "environment (deck shuffles); its exact answer is known. total = between-environment "
         "+ sampling; shares are medians over labels.</p>"]
    rows, meta["decomposition"] = [], {}
    for point in points:
        d = _sel(dec, point)
        row = {k: _num(d[k].median(dim)) for k in ("total", "between", "sampling", "between_share")}
        meta["decomposition"][point_key(ds, point)] = row
        rows.append([point_key(ds, point), row["total"], row["between"], row["sampling"], row["between_share"]])
    h.append(_table(["grid point", "total var", "between-shuffle var", "sampling var", "between share"], rows))
    return "".join(h)


def _html_minimal(ds, summary, meta) -> str:
    rows = [[k] for k in summary]
    return (f"<!doctype html><html><head><meta charset='utf-8'><style>{_STYLE}</style></head><body>"
            f"<h1>{html.escape(str(ds.attrs.get('sweep')))}</h1><p>{html.escape('; '.join(meta['notes']))}</p>"
            + _table(["grid point"], rows) + "</body></html>")


def _write(out: Path, summary: dict, meta: dict, page: str) -> None:
    (out / "index.html").write_text(page)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    (out / "report.json").write_text(json.dumps(meta, indent=2, default=str))
