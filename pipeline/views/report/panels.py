"""What every figure is drawn on: the layout of grid axes into x and facets, a grid of
panels, heatmap panels, colour bars, titles and saving (PNG with an SVG copy)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import xarray as xr

from ...analysis import answer_of, MAX_PANELS, panel_choice, figure_words as words
from ...words import python_value
from .grid import grid_axes, sel


def panel_layout(ds) -> tuple[str | None, list[str], list[dict]]:
    """The x axis (numeric with most values, else most values), the facet axes
    and the facets: every combination of the facet axes' values, or where
    they are more than :data:`MAX_PANELS`, that many (:func:`panel_choice`:
    those the spec's ``[answer] at`` asks first, then evenly spaced);
    :func:`facets_total` says how many there are."""
    axes = grid_axes(ds)
    if not axes:
        return None, [], [{}]
    numeric = [a for a in axes if ds[a].dtype.kind in "iuf"]
    x = max(numeric or axes, key=lambda a: ds.sizes[a])
    others = [a for a in axes if a != x]
    values = [[python_value(v) for v in ds[a].values] for a in others]
    answer = answer_of(ds)
    at = answer.at if answer is not None else {}
    asked = [[a not in at or v in at[a] for v in vals] for a, vals in zip(others, values)]
    combos, _ = panel_choice(values, asked)
    return x, others, [dict(zip(others, vals)) for vals in combos]


def facets_total(ds, x: str | None) -> int:
    """Every combination of the grid axes other than ``x``: the facets a figure would draw without its cap."""
    return int(np.prod([ds.sizes[a] for a in grid_axes(ds) if a != x], dtype=np.int64))


def left_out(drawn: int, total: int, where: str) -> str:
    """The caption's sentence on the facets left out: ``drawn`` of ``total`` ("" where every one is drawn)."""
    if total <= drawn:
        return ""
    return (f" {drawn} of the {total:,} panels drawn (at most {MAX_PANELS}: the combinations the spec's "
            f"[answer] asks first, then evenly spaced); every grid point is in {where}.")


def facet_grid(n: int, w: float, h: float, ylabels: bool = True):
    """A grid of ``n`` panels (at most 4 per row), a colour-bar slot on the right.
    Fixed margins (no layout engine: it costs seconds per figure on big grids)."""
    import matplotlib.pyplot as plt

    cols = max(1, min(4, n, int((PAGE_IN - 1.6) // w)))  # the page's width: never shrunk below legibility
    rows = -(-n // cols)
    W, H = w * cols + 1.6, h * rows + 1.0
    fig, axs = plt.subplots(rows, cols, figsize=(W, H), squeeze=False)
    fig.subplots_adjust(left=(1.0 if ylabels else 0.6) / W, right=1 - 1.5 / W, bottom=0.75 / H,
                        top=1 - 0.75 / H, wspace=0.35 if ylabels else 0.3, hspace=0.75 * 3.2 / h)
    for ax in list(axs.flat)[n:]:
        ax.axis("off")
    return fig, list(axs.flat)[:n]


def colorbar(fig, img, label: str) -> None:
    W, H = fig.get_size_inches()
    cax = fig.add_axes((1 - 1.2 / W, 0.3, 0.18 / W, 0.4))
    fig.colorbar(img, cax=cax, label=label)


def facet_title(facet: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in facet.items()) or "all grid points"


#: The report's column in inches (at :data:`PAGE_PX` pixels): a figure wider than it is drawn smaller on the page.
PAGE_IN = 12.5
PAGE_PX = 1250
#: The smallest font a figure draws, in points (at the page's scale about 12 pixels).
MIN_FONT = 9


def _readable(fig) -> int:
    """Every panel in words and legible: ``axis=value`` titles as ``axis: value``
    wrapped to the panel's width (rows moved apart to hold them), snake_case
    axis labels in words, no text under :data:`MIN_FONT` points."""
    import re

    lines = 1
    for ax in fig.axes:
        title = ax.get_title()
        if title:
            size = max(ax.title.get_fontsize(), MIN_FONT + 1)
            chars = max(12, int(ax.get_position().width * fig.get_size_inches()[0] * 72 / (0.55 * size)))
            wrapped = [w for line in title.split("\n") for w in _wrapped(line, chars)]
            lines = max(lines, len(wrapped))
            ax.set_title("\n".join(wrapped), fontsize=size, y=1.0)  # placed, not searched for: a quarter of a draw
        for get, put in ((ax.get_xlabel, ax.set_xlabel), (ax.get_ylabel, ax.set_ylabel)):
            if re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", get()):
                put(words(get()))
        legend = ax.get_legend()
        for text in [*ax.get_xticklabels(), *ax.get_yticklabels(), ax.xaxis.label, ax.yaxis.label,
                     *ax.texts, *(legend.get_texts() if legend is not None else ())]:
            if text.get_fontsize() < MIN_FONT:
                text.set_fontsize(MIN_FONT)
    _room_for_labels(fig)
    if lines > 1 and len(fig.axes) > 1:
        height = fig.axes[0].get_position().height * fig.get_size_inches()[1]
        fig.subplots_adjust(hspace=fig.subplotpars.hspace + 0.2 * (lines - 1) / max(height, 0.5))
    return lines


def _wrapped(line: str, chars: int) -> list[str]:
    """One title line of ``axis=value`` items in words, wrapped to ``chars``
    between items (never inside one where it fits a line)."""
    import re

    items = [re.sub(r"^([a-z][a-z0-9_]*)=", lambda m: words(m[1]) + ": ", item)
             for item in re.split(r", (?=[a-z][a-z0-9_]*=)", line)]
    out: list[str] = []
    for item in items:
        if out and len(out[-1]) + 2 + len(item) <= chars:
            out[-1] += ", " + item
        else:
            out += textwrap.wrap(item, chars) or [item]
    return out


def _room_for_labels(fig) -> None:
    """A left margin wide enough for the longest y tick label (a square's
    name, "Jail/Just Visiting") and the axis label, estimated from their
    characters (measuring would cost a draw)."""
    width = fig.get_size_inches()[0]
    longest = max((len(t.get_text()) * 0.6 * t.get_fontsize() / 72 for ax in fig.axes
                   for t in ax.get_yticklabels()), default=0.0)
    need = longest + 0.55
    if fig.subplotpars.left * width < need < width / 3:
        fig.subplots_adjust(left=need / width)


def save(fig, out: Path, name: str, title: str) -> str:
    import matplotlib.pyplot as plt

    panel_lines = _readable(fig)
    width_in, height_in = fig.get_size_inches()
    lines = textwrap.wrap(title, max(int(width_in * 9), 30))  # characters that fit at 13 pt
    fig.suptitle("\n".join(lines), fontsize=13, y=1 - 0.12 / height_in, va="top")
    # the panels start below the title's lines and the first row's own titles
    top = 1 - (0.12 + 0.25 * len(lines) + 0.2 + 0.19 * panel_lines) / height_in
    if fig.subplotpars.top > top:
        fig.subplots_adjust(top=top)
    fig.savefig(out / name, dpi=max(100, min(150, PAGE_PX / width_in)))  # its width: the page's, 1:1
    fig.savefig((out / name).with_suffix(".svg"))  # the same figure as vector graphics, for print
    plt.close(fig)
    return name


#: Share of each point's mass that the heatmaps' leading labels cover.
DRAWN_MASS = 0.999


def trim_labels(values: np.ndarray, labels: list[str]) -> int:
    """How many leading labels to draw: enough to hold :data:`DRAWN_MASS` of
    every point's mean frequencies (a long tail, e.g. Shut the Box's rare
    long games, would otherwise fill the figure with empty rows)."""
    mass = np.nan_to_num(np.abs(values)).reshape(-1, len(labels))
    totals = mass.sum(1)
    rows = mass[totals > 0] / totals[totals > 0, None]
    if rows.size == 0:
        return len(labels)
    needed = (np.cumsum(rows, axis=1) < DRAWN_MASS - 1e-12).sum(1) + 1
    return int(min(len(labels), needed.max()))


#: The colour map of each heatmap (the captions' colour words are derived from it: :func:`colour_words`).
COLOUR_MAPS = {"frequency_heatmap": "viridis", "z_heatmap": "RdBu_r", "difference": "PuOr_r"}
#: The colour of a heatmap cell with no value (not computed yet, not significant, no exact answer).
MISSING = "#d9d9d9"


def _hue(rgb) -> str:
    """A colour's name from its hue (HSV): red, orange, yellow, green, cyan, blue, purple; grey where unsaturated."""
    import colorsys

    h, s, v = colorsys.rgb_to_hsv(*rgb[:3])
    if s < 0.15:
        return "grey"
    degrees = h * 360
    for top, name in ((15, "red"), (45, "orange"), (70, "yellow"), (170, "green"), (200, "cyan"), (260, "blue"),
                      (330, "purple")):
        if degrees < top:
            return name
    return "red"


def colour_words(cmap: str, end: float) -> tuple[str, str]:
    """The words for the colour map's colour at ``end`` (0: the low end, 1:
    the high end): ``darkest`` or ``brightest`` (its relative luminance
    ``0.2126 R + 0.7152 G + 0.0722 B`` against the other end's) and its hue's
    name, so that a caption says what the figure draws (viridis' top is the
    brightest, yellow)."""
    import matplotlib.pyplot as plt

    cm = plt.get_cmap(cmap)
    luminance = [float(np.dot(cm(e)[:3], (0.2126, 0.7152, 0.0722))) for e in (end, 1.0 - end)]
    return ("brightest" if luminance[0] > luminance[1] else "darkest"), _hue(cm(end))


def draw_heatmap(ax, data: np.ndarray, xvals, labels, cmap, vmin, vmax, xlabel, ylabel, first: bool = True):
    import matplotlib.pyplot as plt

    cm = plt.get_cmap(cmap).with_extremes(bad=MISSING)
    img = ax.imshow(np.ma.masked_invalid(data), aspect="auto", cmap=cm, vmin=vmin, vmax=vmax,
                    interpolation="nearest", origin="upper")
    step = max(1, -(-len(labels) // 42))
    if first:  # the labels once per row of panels
        ax.set_yticks(range(0, len(labels), step), labels[::step], fontsize=MIN_FONT)
        ax.set_ylabel(words(ylabel), fontsize=MIN_FONT + 1)
    else:
        ax.set_yticks([])
    xs = list(xvals)
    xstep = max(1, -(-len(xs) // 14))
    ax.set_xticks(range(0, len(xs), xstep), [str(v) for v in xs[::xstep]], fontsize=MIN_FONT)
    ax.set_xlabel(words(xlabel), fontsize=MIN_FONT + 1)
    return img


def field(da: xr.DataArray, facet: dict, x: str | None, dim: str) -> np.ndarray:
    """(labels, x values) array of one facet."""
    sub = sel(da, facet)
    return sub.transpose(dim, x).values if x else sub.values[:, None]
