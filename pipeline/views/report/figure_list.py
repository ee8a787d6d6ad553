"""The report's figures in the page's order."""

from __future__ import annotations

from pathlib import Path

from .diagnostics_figure import diagnostics_figure
from .forest import forest_figure
from .parts import attempt
from .pmf import pmf_figure
from .variance_figure import variance_figure


def all_figures(ds, parts, heads, found: dict, shown_as_pmf, out: Path, meta: dict, figures: dict) -> dict:
    """Every figure (file -> caption) in the page's order: the answer first,
    then the validation figures (distributions, heatmaps, variance, convergence diagnostics, forest)."""
    if parts is not None and parts.get("ratio") is not None:
        figures.update(attempt(meta, "variance ratio per label", variance_figure, ds, parts, out) or {})
    figures.update(attempt(meta, "convergence diagnostics", diagnostics_figure, ds,
                           (parts or {}).get("headline"), out) or {})
    forest = attempt(meta, "forest plot", forest_figure, ds, heads, found, out) or {}
    pmf = {}
    for name in shown_as_pmf:
        pmf.update(attempt(meta, f"{name} figure", pmf_figure, ds, found[name], out) or {})
    first = meta["answer"] or {}
    return {**({first["figure"]: first["caption"]} if first.get("figure") else {}), **pmf, **figures, **forest}
