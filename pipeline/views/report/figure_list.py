"""The report's figures in the page's order."""

from __future__ import annotations

from pathlib import Path

from .forest import _forest
from .parts import _try
from .pmf import _pmf_figure
from .variance_figure import _variance_figure


def _all_figures(ds, parts, heads, found: dict, shown_as_pmf, out: Path, meta: dict, figures: dict) -> dict:
    """Every figure (file -> caption) in the page's order: the answer first,
    then the validation figures (distributions, heatmaps, variance, forest)."""
    if parts is not None and parts.get("ratio") is not None:
        figures.update(_try(meta, "variance ratio per label", _variance_figure, ds, parts, out) or {})
    forest = _try(meta, "forest plot", _forest, ds, heads, found, out) or {}
    pmf = {}
    for name in shown_as_pmf:
        pmf.update(_try(meta, f"{name} figure", _pmf_figure, ds, found[name], out) or {})
    first = meta["answer"] or {}
    return {**({first["figure"]: first["caption"]} if first.get("figure") else {}), **pmf, **figures, **forest}
