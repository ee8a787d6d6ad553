"""``variance_ratio.png``: each label's replicate variance over its exact CLT variance."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...analysis import label_text
from ...words import python_value
from .grid import sel
from .panels import panel_layout, facet_grid, facet_title, save, field, left_out, facets_total


def variance_figure(ds, parts, out: Path) -> dict[str, str]:
    """``variance_ratio.png``: each label's measured replicate variance over
    the variance the exact CLT predicts, at the last checkpoint, per grid
    point; the grey band is the 90% range of one label's ratio,
    ``chi2(R-1)/(R-1)``, which is what each dot is (no median drawn against
    a band made for one label)."""
    import matplotlib.pyplot as plt
    from matplotlib import colors

    ratio, dim = parts["ratio"]["ratio"].isel(checkpoint=-1), parts["dim"]
    reps = parts["conv"].isel(checkpoint=-1)["replicates"]
    x, _, facets = panel_layout(ds)
    capped = len(facets)  # the facets the cap lets in (the empty ones among them are named apart)
    xvals = [python_value(v) for v in ds[x].values] if x else [None]
    labels = label_text(ds[dim])
    norm = colors.Normalize(0, max(len(xvals) - 1, 1))
    cmap = plt.get_cmap("viridis")
    empty = [facet_title(f) for f in facets if not np.isfinite(field(ratio, f, x, dim)).any()]
    facets = [f for f in facets if facet_title(f) not in empty]  # no empty panel: the caption names them
    if not facets:
        return {}
    fig, axs = facet_grid(len(facets), 6.0, 3.2)
    drawn, inside, total, rs = False, 0, 0, set()
    for ax, facet in zip(axs, facets):
        values = field(ratio, facet, x, dim)  # (labels, x values)
        r = np.ravel(sel(reps, facet).values)  # (x values,): replicates per point
        counts = _ratio_dots(ax, values, r, xvals, x, lambda j: cmap(norm(j)), rs)
        inside, total = inside + counts[0], total + counts[1]
        if counts[1]:
            drawn = True
            _ratio_axes(ax, labels, facet, x, rs)
        else:
            ax.set_visible(False)
            empty.append(facet_title(facet))
    if not drawn:
        plt.close(fig)
        return {}
    r_text = ", ".join(str(n) for n in sorted(rs))
    title = (f"Each label's replicate variance over the exact CLT variance, last checkpoint (grey: the 90% range "
             f"of one label's ratio, chi2(R-1)/(R-1), R = {r_text}; line: 1)")
    caption = (f"{title}. {inside} of {total} label ratios lie in the band (90% expected where the CLT variance "
               f"holds); each label's value is in variance.csv.") + left_out(capped, facets_total(ds, x), "variance.csv")
    if empty:
        caption += f" Left out, no theory or no finished replicates: {'; '.join(empty)}."
    return {save(fig, out, "variance_ratio.png", title): caption}


def _ratio_dots(ax, values: np.ndarray, r: np.ndarray, xvals: list, x: str | None, color,
                rs: set[int]) -> tuple[int, int]:
    """One panel's dots: each label's ratio per x value with at least 2
    replicates (their counts added to ``rs``); (dots inside the 90% band of
    ``chi2(R-1)/(R-1)``, dots drawn)."""
    from scipy.stats import chi2

    inside = total = 0
    for j, xv in enumerate(xvals):
        y = values[:, j]
        n = int(r[j]) if r.size > j and np.isfinite(r[j]) else 0
        good = np.isfinite(y) & (y > 0)
        if not good.any() or n < 2:
            continue
        lo, hi = chi2.ppf([0.05, 0.95], n - 1) / (n - 1)
        inside += int(((y[good] >= lo) & (y[good] <= hi)).sum())
        total += int(good.sum())
        rs.add(n)
        ax.plot(np.flatnonzero(good), y[good], "o", ms=3, color=color(j), label=f"{x}={xv}" if x else None)
    return inside, total


def _ratio_axes(ax, labels: list[str], facet: dict, x: str | None, rs: set[int]) -> None:
    """A drawn panel's bands (the 90% range for each replicate count in ``rs``), line at 1, axes and legend."""
    from scipy.stats import chi2

    for n in sorted(rs):
        lo, hi = chi2.ppf([0.05, 0.95], n - 1) / (n - 1)
        ax.axhspan(lo, hi, color="#ddd", zorder=0)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=90, fontsize=5)
    ax.set_ylabel("measured var / CLT var", fontsize=9)
    ax.set_title(facet_title(facet), fontsize=9)
    if x:
        ax.legend(fontsize=7, title=x, title_fontsize=7)
