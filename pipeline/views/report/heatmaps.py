"""The report variable's heatmaps: frequencies, z against the exact answer, and the
differences between rule variants (significant labels only)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...analysis import ALPHA, CLT_MIN_COUNT
from ...analysis import exact_state
from ...words import count, plural, python_value
from ..interval_words import test_kind
from .grid import grid_axes
from .panels import (COLOUR_MAPS, colour_words, panel_layout, facet_grid, colorbar, facet_title, save, DRAWN_MASS, trim_labels, draw_heatmap, field,
                     facets_total, left_out)
from .convergence_figure import line_figures


def report_figures(ds, parts, out: Path, meta: dict, heatmaps: bool = True) -> dict[str, str]:
    """The figures of the report variable: heatmaps per label and grid point
    (unless ``heatmaps`` is False: a distribution drawn as one, see
    :func:`_pmf_figure`), then its convergence and variance ratio."""
    x, others, facets = panel_layout(ds)
    meta["layout"] = {"x": x, "facets": others, "panels_per_figure": len(facets)}
    if facets_total(ds, x) > len(facets):
        meta["layout"]["panels_total"] = facets_total(ds, x)
    xvals = [python_value(v) for v in ds[x].values] if x else ["-"]
    if not heatmaps:
        return line_figures(ds, parts, out, x, facets, xvals) if "steps" in parts["conv"] else {}
    dim = parts["dim"]
    labels = [str(v) for v in ds[dim].values]
    keep = trim_labels(parts["mean"].values, labels)
    h = max(3.2, 0.15 * min(keep, 60) + 1.2)  # a 9-point label per row
    trimmed = "" if keep == len(labels) else (
        f" Rows: the first {keep} of {len(labels)} {dim} labels, holding {DRAWN_MASS:.1%} of every "
        "point's frequency; the rest are left out.")
    w = max(2.6, min(6.0, 0.16 * len(xvals) + 1.8))
    layout = (x, xvals, x or "(single grid point)", facets, labels[:keep], keep, w, h)
    figs = _frequency_figure(ds, parts, out, layout, others, trimmed)
    if np.isfinite(parts["z"].values).any():  # where an exact answer applies (parts: not where the verdict voids it)
        figs.update(_z_figure(ds, parts, out, meta, layout, trimmed))
    else:  # no exact answer anywhere: no figure of empty panels
        meta["notes"].append("z_heatmap.png left out: no grid point has both an exact answer and a finished "
                             "replicate")
    for axis in [a for a in others if ds.sizes[a] >= 2]:
        figs.update(_difference_figure(ds, parts, out, meta, layout, axis))
    if "steps" in parts["conv"]:
        figs.update(line_figures(ds, parts, out, x, facets, xvals))
    return figs


def _frequency_figure(ds, parts, out: Path, layout: tuple, others: list[str], trimmed: str) -> dict[str, str]:
    """``frequency_heatmap.png``: the mean frequency per label and axis value, one panel per facet."""
    x, xvals, xlabel, facets, labels_k, keep, w, h = layout
    dim = parts["dim"]
    fig, axs = facet_grid(len(facets), w, h)
    mean = parts["mean"]
    vmax, above = _colour_top(mean, dim)
    img = None
    for i, (ax, facet) in enumerate(zip(axs, facets)):
        img = draw_heatmap(ax, field(mean, facet, x, dim)[:keep], xvals, labels_k, COLOUR_MAPS["frequency_heatmap"], 0, vmax,
                       xlabel, dim, _first_column(axs, i))
        ax.set_title(facet_title(facet), fontsize=10)
    how = "ratio of sums over the finished replicates"
    colorbar(fig, img, f"relative frequency (scale ends at {vmax:.3g})")
    name = save(fig, out, "frequency_heatmap.png",
                 f"Relative frequencies of the {plural(dim)} ({how}, last checkpoint)")
    light, hue = colour_words(COLOUR_MAPS["frequency_heatmap"], 1.0)
    scale = (f" The colour scale ends at {vmax:.3g}, the 99th percentile of every other {dim}, so that it shows "
             f"their differences: {', '.join(above)} {'is' if len(above) == 1 else 'are'} above it, in the "
             f"{light} colour, {hue} (values in frequencies.csv).") if above else ""
    low_light, low_hue = colour_words(COLOUR_MAPS["frequency_heatmap"], 0.0)
    return {name: f"Relative frequency ({how}) per {dim} (rows) and {xlabel} (columns); "
                  f"{count(len(facets), 'panel')}, one per combination of {', '.join(others) or 'the grid'}. "
                  f"Larger frequencies are {light[:-3]}er ({hue}), smaller ones {low_light[:-3]}er ({low_hue}); "
                  "grey: not computed yet." + scale + trimmed + left_out(len(facets), facets_total(ds, x), "frequencies.csv")}


def _colour_top(mean, dim: str) -> tuple[float, list[str]]:
    """The colour scale's top: the 99th percentile of the labels but the ones
    far above the rest (Monopoly's IN_JAIL), which would spend the scale on
    themselves; and those labels."""
    if not np.isfinite(mean.values).any():
        return 1.0, []
    peak = mean.max([d for d in mean.dims if d != dim]).values
    order = np.argsort(-np.nan_to_num(peak, nan=-np.inf))
    labels = [str(python_value(v)) for v in mean[dim].values]
    above: list[str] = []
    for j in order[:3]:  # at most a few stand apart
        rest = np.delete(peak, [*[labels.index(a) for a in above], j])
        if not np.isfinite(rest).any() or peak[j] < 1.5 * np.nanmax(rest):
            break
        above.append(labels[j])
    kept = mean.drop_sel({dim: [mean[dim].values[labels.index(a)] for a in above]}) if above else mean
    return float(np.nanpercentile(kept.values, 99)), above


def _difference_figure(ds, parts, out: Path, meta: dict, layout: tuple, axis: str) -> dict[str, str]:
    """``difference_<axis>.png``: the first two values of ``axis`` compared per label, in
    standard errors of the difference, labels not significant after Holm masked (grey)."""
    x, xvals, xlabel, facets, labels_k, keep, w, h = layout
    dim, mean = parts["dim"], parts["mean"]
    a, b = (python_value(v) for v in ds[axis].values[:2])
    res = parts["compare"].get((axis, a, b))
    diff = mean.sel({axis: a}) - mean.sel({axis: b})
    rest = list({facet_title(g): g for g in ({**f, axis: a} for f in facets)}.values())  # each facet's a
    fig, axs = facet_grid(len(rest), w, h)
    t_stat = res["t"] if res is not None else diff * np.nan
    shown = t_stat.where(res["p_holm"] < ALPHA) if res is not None else t_stat
    finite = np.abs(shown.values[np.isfinite(shown.values)])
    if not finite.size:  # no label differs anywhere: a figure of empty panels says nothing
        import matplotlib.pyplot as plt

        plt.close(fig)
        meta["notes"].append(f"difference_{axis}.png left out: no label differs between {axis}={a} and "
                             f"{axis}={b} (Welch, Holm-adjusted p < {ALPHA:.0%}; see the comparisons "
                             "table)")
        return {}
    lim = float(np.percentile(finite, 95))  # one outlier must not whiten the rest
    for i, (ax, facet) in enumerate(zip(axs, rest)):
        sub = {k: v for k, v in facet.items() if k != axis}
        data = field(shown, sub, x, dim)[:keep]
        img = draw_heatmap(ax, np.clip(data, -lim, lim), xvals, labels_k, COLOUR_MAPS["difference"], -lim, lim, xlabel, dim,
                       _first_column(axs, i))
        if not np.isfinite(data).any():
            ax.text(0.5, 0.5, f"no label differs\n(Welch, Holm {ALPHA:.0%})", transform=ax.transAxes,
                    ha="center", va="center", fontsize=9,
                    bbox={"facecolor": "white", "alpha": 0.9, "edgecolor": "#999"})
        ax.set_title(facet_title(sub), fontsize=10)
    colorbar(fig, img, f"({a} - {b}) / s.e. of the difference (clipped at ±{lim:.3g})")
    name = save(fig, out, f"difference_{axis}.png",
                 f"{axis}: {a} minus {b} in standard errors, significant labels only "
                 f"(Welch, Holm-adjusted p < {ALPHA:.0%})")
    return {name: (f"Difference of mean frequencies between {axis}={a} and {axis}={b}, every other axis "
                   "equal, in standard errors of the difference (Welch's t); labels whose difference is not "
                   f"significant at the verdict's level (Holm-adjusted p < {ALPHA:.0%}, Holm over "
                   f"the labels of the panel) are grey; {colour_words(COLOUR_MAPS['difference'], 1.0)[1]}: {a} "
                   f"above {b}, {colour_words(COLOUR_MAPS['difference'], 0.0)[1]}: below; the colour "
                   "scale is symmetric about 0 (differences, relative differences and t in the comparisons table)."
                   + left_out(len(rest), facets_total(ds, x) // ds.sizes[axis], "comparisons.csv"))}


def _z_words(parts) -> str:
    """The s.e. and the law of the z map, as the estimates' ``test`` attribute names them."""
    t = "t with R-1 degrees of freedom: with few replicates |z| of 3-5 happen by chance"
    if "est" not in parts or test_kind(parts["est"]) != "z":
        return t
    return (f"the s.e. the verdict tests with: the exact CLT s.e., z against the normal, where a label expects at "
            f"least {CLT_MIN_COUNT} pooled counts, else the replicates' s.e. and {t}")


def _z_figure(ds, parts, out: Path, meta: dict, layout: tuple, trimmed: str) -> dict[str, str]:
    """``z_heatmap.png``: z per label and axis value, a panel without an exact answer saying why."""
    x, xvals, xlabel, facets, labels_k, keep, w, h = layout
    dim, z, figs = parts["dim"], parts["z"], {}
    drawn = [f for f in facets if np.isfinite(field(z, f, x, dim)).any()]
    for facet in facets:  # no panel where no exact answer applies: the caption says why
        if facet not in drawn:
            meta.setdefault("panels_without_exact", {})[facet_title(facet)] = _facet_reason(ds, parts, facet)
    if not drawn:  # no panel has a z: no figure (it had no rows to draw)
        return figs
    fig, axs = facet_grid(len(drawn), w, h)
    for i, (ax, facet) in enumerate(zip(axs, drawn)):
        data = field(z, facet, x, dim)[:keep]
        img = draw_heatmap(ax, np.clip(data, -6, 6), xvals, labels_k, COLOUR_MAPS["z_heatmap"], -6, 6, xlabel, dim,
                       _first_column(axs, i))
        ax.set_title(facet_title(facet), fontsize=10)
    colorbar(fig, img, "z = (estimate - exact) / s.e. (clipped at ±6)")
    below, above = (colour_words(COLOUR_MAPS["z_heatmap"], end)[1] for end in (0.0, 1.0))
    name = save(fig, out, "z_heatmap.png",
                 f"Standardised error by {dim}: {below} below, {above} above the exact answer")
    figs[name] = (f"z = (estimate - exact) / standard error per {dim} and {xlabel}, {below} below and {above} above "
                  f"the exact answer ({_z_words(parts)}; the "
                  f"verdict judges with Holm-adjusted p-values, see the tests table); {count(len(drawn), 'panel')}, one per "
                  "combination of the other axes where an exact answer applies; grey cells have none." + trimmed
                  + left_out(len(facets), facets_total(ds, x), "frequencies.csv"))
    left = meta.get("panels_without_exact", {})
    if left:
        figs[name] += " No panel for " + "; ".join(f"{k} ({v})" for k, v in left.items()) + "."
    return figs


def _first_column(axs, i: int) -> bool:
    """Whether panel ``i`` starts a row (its labels are drawn once per row)."""
    return round(axs[i].get_position().x0, 3) == round(axs[0].get_position().x0, 3)


def _facet_reason(ds, parts, facet) -> str:
    states = [exact_state(ds, {**facet, **({} if not p else p)})
              for p in ([{}] if not [a for a in grid_axes(ds) if a not in facet] else
                        [dict(zip([a for a in grid_axes(ds) if a not in facet], [python_value(ds[a].values[0])
                                                                            for a in grid_axes(ds) if a not in facet]))])]
    state, text = states[0]
    if state == "pending":
        return "exact answer not computed yet"
    if state == "stored" and "done" in ds and bool(ds["done"].sel(facet).any()):  # finished, none tested
        void = parts["est"].attrs.get("exact_void_text") if "est" in parts else None
        return void or "no label testable: every s.e. 0 or too few counts"
    if state == "stored":
        return "no finished replicates yet"
    return text.split(":")[0] + ": " + text.split(":", 1)[1].split(";")[0] if ":" in text else text
