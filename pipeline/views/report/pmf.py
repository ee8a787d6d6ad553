"""``<headline>.png``: a distribution over games per grid point against its exact pmf."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from ...analysis import grid_points
from ..interval_words import interval_name
from .grid import grid_axes
from .panels import facet_grid, facet_title, save, DRAWN_MASS


#: Grid points a distribution figure shows at most (one panel each).
PMF_PANELS = 36


def pmf_figure(ds, est: xr.Dataset, out: Path) -> dict[str, str]:
    """``<headline>.png`` (+ SVG): a distribution over games per grid point,
    the estimate (dots, its 95% interval as the table has it) against the exact pmf (line), titled
    with its goodness-of-fit p.  Each panel shows the bins holding
    :data:`DRAWN_MASS` of its estimate and exact mass; a last bin counting
    every larger value (``overflow_bin``) is written in the panel."""
    name, dim = est.attrs["name"], est.attrs["dim"]
    points = list(grid_points(ds))
    order = [*grid_axes(ds), dim]
    rows = {k: est[k].broadcast_like(est["estimate"]).transpose(*order).values.reshape(len(points), -1)
            for k in ("estimate", "low", "high", "exact")}
    p = est["gof_p"].transpose(*grid_axes(ds)).values.ravel() if grid_axes(ds) else est["gof_p"].values.ravel()
    labels = np.asarray(ds[dim].values)
    over = ds[dim].attrs.get("overflow_bin")
    rows_with = [i for i in range(len(points)) if np.isfinite(rows["estimate"][i]).any()]
    shown = rows_with[:PMF_PANELS]
    fig, axs = facet_grid(len(shown), 3.6, 2.6)
    fig.subplots_adjust(hspace=0.8, wspace=0.3)
    for ax, i in zip(axs, shown):
        title = facet_title(points[i]) if points[i] else "the single point"
        if np.isfinite(p[i]):
            title += f"\nchi-square p = {p[i]:.2g}"
        _pmf_panel(ax, {k: v[i] for k, v in rows.items()}, labels, over, dim)
        ax.set_title(title, fontsize=8)
    if shown:
        axs[0].legend(fontsize=7, loc="center right")
        axs[0].set_ylabel("share of games", fontsize=8)
    desc = est.attrs.get("description", name)
    fname = save(fig, out, f"{name}.png", f"{desc[0].upper()}{desc[1:]}: estimate vs exact")
    caption = (f"{desc[0].upper()}{desc[1:]}, one panel per grid point: dots the estimated share of games in "
               f"each {dim} bin with its 95% {interval_name(est)} (band), the line the exact distribution; the title "
               "gives the p-value of Pearson's chi-square goodness of fit of the pooled counts (bins merged to "
               "expected counts >= 5) before Holm's adjustment (the distributions table gives it adjusted). "
               f"Each panel's range holds {DRAWN_MASS:.1%} of its estimated and exact mass; the bins beyond it "
               "are left out of the figure"
               + (f", and the last bin, {over} or more {dim}, is written in the panel where it holds more than "
                  "0.1%" if over is not None else "") + ".")
    if len(rows_with) > len(shown):
        caption += (f" {len(shown)} of {len(rows_with)} grid points shown; every bin of every point is in "
                    "headlines.csv.")
    return {fname: caption}


def _pmf_panel(ax, row: dict[str, np.ndarray], labels: np.ndarray, over, dim: str) -> None:
    """One grid point's panel: the estimate with its 95% band (the table's ``low``/``high``) and the exact
    pmf over the body bins holding :data:`DRAWN_MASS` of the larger of both
    (no impossible bins); the overflow bin ``over`` written where it holds more than 0.1%."""
    mean, low, high, exact = row["estimate"], row["low"], row["high"], row["exact"]
    body = labels != over if over is not None else np.ones(len(labels), dtype=bool)
    mass = np.where(body, np.nan_to_num(np.fmax(mean, np.nan_to_num(exact))), 0.0)
    cum = np.cumsum(mass) / max(mass.sum(), 1e-300)
    first = int(np.argmax(mass > 0)) if (mass > 0).any() else 0
    last = int(np.searchsorted(cum, DRAWN_MASS - 1e-12)) + 1
    cut = np.arange(first, max(last, first + 1))
    cut = cut[(np.nan_to_num(mean[cut]) > 0) | (np.nan_to_num(exact[cut]) > 0)]
    x = labels[cut]
    ax.fill_between(x, np.where(np.isfinite(low[cut]), low[cut], mean[cut]),
                    np.where(np.isfinite(high[cut]), high[cut], mean[cut]), step="mid",
                    color="#a8c6e6", lw=0, label="95% interval")
    ax.plot(x, mean[cut], "o", ms=2, color="#1f5f9f", label="estimate")
    if np.isfinite(exact[cut]).any():
        ax.plot(x, exact[cut], "-", color="black", lw=0.8, label="exact")
    if over is not None and (np.nan_to_num(mean[~body]) > 1e-3).any():
        ax.text(0.98, 0.95, f"≥{over}: {float(mean[~body][0]):.3g}" + (
            f" (exact {float(exact[~body][0]):.3g})" if np.isfinite(exact[~body]).all() else ""),
                transform=ax.transAxes, ha="right", va="top", fontsize=7,
                bbox={"facecolor": "white", "alpha": 0.9, "edgecolor": "#999"})
    ax.tick_params(labelsize=7)
    ax.set_xlabel(dim, fontsize=8)
