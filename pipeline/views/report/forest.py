"""``forest.png``: each scalar headline per grid point with its interval."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from ...analysis import ALPHA, figure_words as words
from ..interval_words import intervals_of
from .grid import grid_axes


#: Rows a forest plot panel shows at most (grid points x labels): the first ones and every flagged one.
FOREST_ROWS = 96
#: Rows of one column of the forest plot: a longer headline continues in the next column.
COLUMN_ROWS = 36


def _shown_rows(t: pd.DataFrame, limit: int) -> pd.DataFrame:
    """At most ``limit`` rows of ``t`` in their order: every row the verdict
    flags (Holm-adjusted p < ALPHA), then the first others."""
    if len(t) <= limit:
        return t
    flagged = t["p_holm"].notna() & (t["p_holm"] < ALPHA)
    keep = flagged.copy()
    room = max(limit - int(flagged.sum()), 0)
    keep[t.index[~flagged][:room]] = True
    return t[keep].head(limit) if keep.sum() > limit else t[keep]


def forest_figure(ds, heads: pd.DataFrame, found: dict, out: Path) -> dict[str, str]:
    """``forest.png`` (+ SVG): each scalar headline per grid point (and seat),
    its 95% interval as a bar; with an exact value, as the relative error
    (estimate / exact - 1, %) with 0 marked; without, the estimate itself.
    Red: rows the verdict flags.  A panel with more than :data:`FOREST_ROWS`
    rows shows the first and the flagged ones, and the caption says so."""
    import matplotlib.pyplot as plt

    scalar = [n for n, e in found.items() if e.attrs["kind"] != "distribution"]
    table = heads[heads["headline"].isin(scalar)] if len(heads) else heads
    if table.empty:
        return {}
    axes = grid_axes(ds)
    names = list(dict.fromkeys(table["headline"]))
    shown = {n: _shown_rows(table[table["headline"] == n], FOREST_ROWS) for n in names}
    panels = [(n, t.iloc[i:i + COLUMN_ROWS], i) for n, t in shown.items() for i in range(0, len(t), COLUMN_ROWS)]
    tallest = max(len(t) for _, t, _ in panels)
    width = min(12.5, 5.6 * len(panels))  # the page's width: a long table in side-by-side columns, not one
    fig, axs = plt.subplots(1, len(panels), figsize=(width, 0.22 * tallest + 2.0), squeeze=False)
    for ax, (name, t, first) in zip(axs[0], panels):
        part = f" (rows {first + 1}-{first + len(t)} of {len(shown[name])})" if len(shown[name]) > len(t) else ""
        _panel(ax, t, name, axes, part)
    notes = [f"{n} shows {len(t)} of its {int((table['headline'] == n).sum())} rows (every flagged row, then the "
             "first ones)" for n, t in shown.items() if len(t) < int((table["headline"] == n).sum())]
    fig.tight_layout()
    fig.savefig(out / "forest.png", dpi=max(100, min(150, 1250 / fig.get_size_inches()[0])))
    fig.savefig(out / "forest.svg")
    plt.close(fig)
    grid = ", ".join(axes) or "the single point"
    return {"forest.png": _caption(grid, notes, intervals_of({n: found[n] for n in names}))}


def _panel(ax, t: pd.DataFrame, name: str, axes: list[str], part: str) -> None:
    """One column of the forest plot: ``t``'s rows, each estimate with its 95%
    interval (as the relative error where every row has an exact value)."""
    relative = bool(t["exact"].notna().all() and (t["exact"] != 0).all())
    if relative:
        x, lo, hi = (100 * (t[c] / t["exact"] - 1) for c in ("estimate", "low", "high"))
        ax.axvline(0, color="black", lw=1)
        ax.set_xlabel("(estimate / exact - 1), %  (0: the exact value)", fontsize=10)
    else:
        x, lo, hi = t["estimate"], t["low"], t["high"]
        ax.set_xlabel(f"{words(name)} (no exact value)", fontsize=10)
    flagged = (t["p_holm"].notna() & (t["p_holm"] < ALPHA)).to_numpy()
    y = np.arange(len(t))[::-1]
    ax.errorbar(x, y, xerr=[x - lo, hi - x], fmt="o", ms=4, color="#1f5f9f", ecolor="#1f5f9f", capsize=2)
    if flagged.any():
        ax.plot(np.asarray(x)[flagged], y[flagged], "o", ms=7, color="#c33")
    labels = [", ".join(str(r[a]) for a in axes) + (f" {r['label']}" if r["label"] else "")
              for r in t.to_dict("records")]
    ax.set_yticks(y, labels, fontsize=9)
    ax.set_ylim(-0.8, len(t) - 0.2)
    what = "relative error (estimate / exact - 1)" if relative else "estimate"
    ax.set_title("\n".join(textwrap.wrap(f"{words(name)}: {what} and its 95% interval{part}", 32)), fontsize=11)
    ax.set_ylabel(", ".join(map(words, axes)) + (" and label" if t["label"].astype(bool).any() else ""), fontsize=10)
    ax.tick_params(axis="x", labelsize=10)
    ax.grid(axis="x", color="#ddd")


def _caption(grid: str, notes: list[str], intervals: str) -> str:
    caption = ("Forest plot of the headline answers: one row per grid point (" + grid + ") and label, the "
               f"dot the estimate, the bar its 95% interval ({intervals}); where an exact value exists the axis is the "
               "relative error (estimate / exact - 1) and a bar that misses 0 misses the exact answer "
               "(about 1 in 20 do by chance: that alone is no disagreement). Red: a row the verdict flags, "
               f"its Holm-adjusted p below {ALPHA:.0%}. SVG: forest.svg.")
    if notes:
        caption += " Not every row fits: " + "; ".join(notes) + ". Every row is in headlines.csv."
    else:
        caption += " Every row of headlines.csv is shown."
    return caption
