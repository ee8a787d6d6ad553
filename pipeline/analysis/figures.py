"""The answer figure: a headline against the axis it is studied along, with its
95% band and the exact curve, one panel per combination of the other axes.

Built on matplotlib alone (no report code), so that the report
(:mod:`boardsweep.pipeline.views.report`) and the accessor
(``ds.boardsweep.plot_answer()``, ``ds.boardsweep.plot(...)``) draw the same
figure from the same numbers (:func:`boardsweep.pipeline.analysis.headlines.estimates`).
It lives in the analysis folder because the accessor may not import the views.

Its shape follows the headline:

* a scalar (mean rolls) or one label of a headline (``[answer] label``): the
  estimate against the axis, the band its 95% interval (error bars where the
  axis is categorical), the exact answer as a dashed black curve;
* a few labels (seats): one line per label;
* many labels (41 locations): x is the label, one line per value of the
  axis, the exact answer as black ticks.

Grid points the spec asks (``[answer] at``) are drawn larger; the other axes
are restricted to the asked values, so every panel answers the question.
At most :data:`MAX_PANELS` panels are drawn (:func:`panel_choice`): a grid
with more combinations of its other axes draws that many, evenly spaced over
them, and says so (``fig.boardsweep_panels``: drawn, total); the figure reads
only the grid points it draws where it estimates them itself.
"""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import xarray as xr

from ..words import python_value
from .headtohead import HEAD_TO_HEAD_COLUMNS

__all__ = ["answer_figure", "headline_figure", "panel_choice", "panel_spread", "words", "FONT", "WIDTH", "MAX_PANELS"]

#: The figure's width in inches at 100 dpi (the report's 1200-pixel column) and its smallest font size (points).
WIDTH = 12.0
FONT = 11
#: Labels above which a labelled headline is drawn with the labels along x.
MANY_LABELS = 6
#: Panels per row.
COLUMNS = 3
#: Panels a figure draws at most (one per combination of the other grid axes): the rest are left out, said in words.
MAX_PANELS = 12


def words(name: str) -> str:
    """A snake_case name in words (``dice_sides`` -> ``dice sides``)."""
    return str(name).replace("_", " ")


def panel_choice(values: list[list], asked: list[list[bool]] | None = None,
                 limit: int = MAX_PANELS) -> tuple[list[tuple], int]:
    """At most ``limit`` combinations of the other axes' ``values`` (one list
    per axis; their product in grid order), and how many there are.

    The asked ones first (``asked``: per axis, which values the spec asks;
    a combination is asked where each of its values is), evenly spaced over
    them where they are more than ``limit``; then evenly spaced over the rest.
    Flat indices only: nothing per combination of a large grid is built.
    """
    if not values:
        return [()], 1
    shape = tuple(len(v) for v in values)
    total = int(np.prod(shape, dtype=np.int64))
    if total <= limit:
        flat = np.arange(total)
    else:
        asked = asked or [[True] * n for n in shape]
        inner = [np.flatnonzero(np.asarray(a, dtype=bool)) for a in asked]
        sub = tuple(len(i) for i in inner)
        picked = panel_spread(int(np.prod(sub, dtype=np.int64)), limit)
        first = np.ravel_multi_index(tuple(i[k] for i, k in zip(inner, np.unravel_index(picked, sub))), shape) \
            if picked.size else picked
        rest = np.setdiff1d(panel_spread(total, 4 * limit), first)
        flat = np.unique(np.concatenate([first, rest[panel_spread(rest.size, limit - first.size)]]))
    combos = [tuple(v[k] for v, k in zip(values, index)) for index in zip(*np.unravel_index(flat, shape))]
    return combos or [()], max(total, 1)


def panel_spread(n: int, k: int) -> np.ndarray:
    """``min(n, k)`` indices of ``range(n)`` evenly spaced, the first and the last among them."""
    if k <= 0 or n <= 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.linspace(0, n - 1, min(n, k)).round().astype(np.int64))


def answer_figure(ds: xr.Dataset, found: dict | None = None, title: bool = True):
    """The figure that answers the spec's question (:func:`boardsweep.pipeline.analysis.answer.answer_of`),
    titled with it unless ``title`` is False (the report writes it above);
    None where its headline cannot be estimated."""
    from .answer import answer_of

    from .headtohead import head_to_head  # pandas tables: imported where an answer is drawn

    answer = answer_of(ds)
    if answer is None:
        return None
    versus = head_to_head(ds, answer.axis)
    if versus is not None:
        return versus_figure(versus, answer.question if title else "")
    return headline_figure(ds, answer.headline, answer.axis, answer.label, answer.at,
                           answer.question if title else "", found)


def headline_figure(ds: xr.Dataset, name: str, axis: str | None = None, label: str | None = None,
                    at: dict[str, tuple] | None = None, title: str | None = None, found: dict | None = None):
    """Headline ``name`` against grid axis ``axis`` (a matplotlib Figure; None
    where the store has no such headline).

    Parameters
    ----------
    label : str, optional
        One label of the headline's dimension (e.g. ``IN_JAIL``).
    at : dict, optional
        Grid axis -> values asked: the other axes are restricted to them, and
        the asked points along ``axis`` are drawn larger.
    title : str, optional
        The figure's title (default: the headline's description; ``""``: none).
    """
    from .headlines import estimates

    at, full = dict(at or {}), ds
    if found is None:  # estimate only the grid points drawn
        ds = _drawn_part(ds, axis, at)
        found = estimates(ds)
    if name not in found:
        return None
    est = found[name]
    dim = est.attrs.get("dim") or None
    if dim and label is not None:
        est = est.sel({dim: _stored(est, dim, label)})
        label = _label_name(ds, dim, label)
        dim = None
    axes = [a for a in ds.attrs.get("grid_axes", []) if a in est.dims]
    axis = axis if axis in axes else (axes[0] if axes else None)
    many = dim is not None and est.sizes[dim] > MANY_LABELS
    series = _series_axis(est, [a for a in axes if a != axis], at) if dim is None else None
    others = [a for a in axes if a not in (axis, series)]
    panels, total = panel_choice(_facet_values(full, others, at))  # of the whole grid: est may hold the drawn only
    # many labels: a residual panel only where there are a few panels (41 rotated labels each cost ~0.1 s to draw)
    residual = ((dim is None or (many and len(panels) <= RESIDUAL_PANELS)) and "z" in est
                and bool(np.isfinite(est["z"].values).any()))
    fig, axs, below = _panels(len(panels), many, residual)
    fig.boardsweep_panels = (len(panels), total)  # drawn, and every combination of the other axes
    fig.boardsweep_series = series  # the axis overlaid in each panel (one colour per value), or None
    fig.boardsweep_residual = residual  # a panel of (estimate - exact) / s.e. under each
    ylabel = _ylabel(est, name, label)
    for k, (ax, values) in enumerate(zip(axs, panels)):
        cell = est.sel(dict(zip(others, values))) if others else est
        _draw_panel(ax, below[k] if residual else None, cell, (dim, axis, series, many), at, label or name)
        ax.set_title(_facet_title(others, values), fontsize=FONT + 1, y=1.0)  # placed: no search at each draw
        ax.set_ylabel(ylabel, fontsize=FONT)
        for a in [ax, *([below[k]] if residual else [])]:
            a.tick_params(labelsize=FONT - 1)
            a.grid(color="#e4e4e4", lw=0.8)
    for ax in [*axs[len(panels):], *below[len(panels):]]:
        ax.set_visible(False)
    heading = f"{words(name).capitalize()}: {est.attrs.get('description', '')}" if title is None else title
    _legend(fig, [*axs[:len(panels)], *below[:len(panels)]], "lower" if heading else "upper")  # not over the title
    if heading:
        fig.suptitle("\n".join(textwrap.wrap(heading, 110)), fontsize=FONT + 2)
    return fig


def versus_figure(table, title: str = ""):
    """Strategies head to head (:func:`boardsweep.pipeline.analysis.headtohead.head_to_head`):
    one row per pair, the difference of win shares (A - B, A the one with
    the larger share) with its interval, a line at 0 (no difference), and
    the share of games the cap ended beside each pair."""
    import matplotlib.pyplot as plt

    others = [c for c in table.columns if c not in HEAD_TO_HEAD_COLUMNS]
    flip = table["difference"].to_numpy() < 0
    a = np.where(flip, table["b"], table["a"])
    b = np.where(flip, table["a"], table["b"])
    d = np.abs(table["difference"].to_numpy())
    low = np.where(flip, -table["high"].to_numpy(), table["low"].to_numpy())
    high = np.where(flip, -table["low"].to_numpy(), table["high"].to_numpy())
    y = np.arange(len(table))[::-1]
    fig, ax = plt.subplots(figsize=(WIDTH, 1.2 + 0.55 * len(table) + 1.0), layout="constrained")
    ax.axvline(0, color="black", lw=1, label="no difference")
    ax.errorbar(d, y, xerr=[d - low, high - d], fmt="o", ms=6, capsize=4, lw=1.6, color="#1f5f9f",
                label=f"A - B with its {table.attrs['level']:.0%} interval")
    where = [", ".join(f"{words(o)} {row[o]}" for o in others) for _, row in table.iterrows()]
    capped = [f"{share:.0%} of games ended at the cap" for share in table["capped_share"]]
    ax.set_yticks(y, [f"{x} vs {z}" + (f" ({w})" if w else "") + f"\n{c}" for x, z, w, c in zip(a, b, where, capped)])
    ax.set_xlabel("difference of win shares, A - B (A: the strategy that wins more)", fontsize=FONT)
    ax.set_ylim(-0.7, len(table) - 0.3)
    ax.tick_params(labelsize=FONT)
    ax.grid(axis="x", color="#e4e4e4", lw=0.8)
    _legend(fig, [ax], "lower" if title else "upper")
    if title:
        fig.suptitle("\n".join(textwrap.wrap(title, 110)), fontsize=FONT + 2)
    fig.boardsweep_panels = (1, 1)
    fig.boardsweep_versus = True
    return fig


def _draw_panel(ax, under, cell: xr.Dataset, how: tuple, at: dict, name: str) -> None:
    """One panel: ``how`` = (label dimension, x axis, the axis overlaid or
    None, many labels along x); ``under``: its residual panel, or None."""
    dim, axis, series, many = how
    keys = cell[series].values.tolist() if series else [None]
    for j, key in enumerate(keys):
        part = cell if key is None else cell.sel({series: key})
        if many:
            _draw_labels(ax, part, dim, axis, at)
            if under is not None:
                _draw_label_residual(under, part, dim, axis)
        else:
            _draw_axis(ax, part, dim, axis, at, f"{words(series)} {python_value(key)}" if series else name, j,
                       len(keys))
            if under is not None:
                _draw_residual(under, part, dim, axis, j, len(keys))
    if under is not None:
        ax.tick_params(labelbottom=False)  # the panel under it, sharing x, names the ticks
        ax.set_xlabel("")
        if not np.isfinite(cell["z"].values).any():
            under.text(0.5, 0.5, "no exact answer here", transform=under.transAxes, ha="center", va="center",
                       fontsize=FONT, bbox={"facecolor": "white", "edgecolor": "#999"})


def _drawn_part(ds: xr.Dataset, axis: str | None, at: dict) -> xr.Dataset:
    """``ds`` restricted to the grid points :func:`headline_figure` draws:
    the asked values of the other axes, and of those the combinations
    :func:`panel_choice` picks (each axis to the values they use)."""
    axes = [a for a in ds.attrs.get("grid_axes", []) if a in ds.dims]
    axis = axis if axis in axes else (axes[0] if axes else None)
    others = [a for a in axes if a != axis]
    values = _facet_values(ds, others, at)
    panels, _ = panel_choice(values)
    return ds.sel({a: sorted(set(col), key=values[k].index) for k, (a, col) in enumerate(zip(others, zip(*panels)))})


def _facet_values(ds: xr.Dataset, others: list[str], at: dict) -> list[list]:
    """Each other axis's values a panel may have: the asked ones (``at``, in its order), else all."""
    return [list(at[a]) if a in at else ds[a].values.tolist() for a in others]


def _label_name(ds: xr.Dataset, dim: str, label: str) -> str:
    """A label's full name where the store names its codes (``location_name``: IN_JAIL -> "In Jail")."""
    names = ds.get(f"{dim}_name")
    if names is None:
        return str(label)
    texts = [str(python_value(v)) for v in ds[dim].values]
    if str(label) not in texts:
        return str(label)
    return str(python_value(names.values[texts.index(str(label))])).split(" (")[0]  # "In Jail (held in jail, ...)"


def _legend(fig, axs: list, side: str) -> None:
    """One legend for every panel (their series are the same), on the figure's
    ``side`` ("upper" or "lower") outside the panels, never over the data."""
    entries: dict[str, Any] = {}
    for ax in axs:
        for handle, text in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(text, handle)
    if entries:
        fig.legend(list(entries.values()), list(entries), loc=f"outside {side} center", frameon=False,
                   ncols=min(len(entries), 7), fontsize=FONT)


def _stored(est: xr.Dataset, dim: str, label: str) -> Any:
    """The stored coordinate value whose text is ``label``."""
    texts = [str(python_value(v)) for v in est[dim].values]
    return est[dim].values[texts.index(str(label))]


#: Panels of many labels up to which each gets a residual panel under it (the z heatmap shows the rest).
RESIDUAL_PANELS = 4
#: Axes overlaid in one panel (one colour per value) where they have at most this many values.
SERIES = 6


def _series_axis(est: xr.Dataset, others: list[str], at: dict) -> str | None:
    """The other axis drawn as one line per value in each panel (a scalar
    headline's comparison, e.g. Shut the Box's policies): the first with at
    most :data:`SERIES` values drawn, else None (panels, as before)."""
    for a in others:
        if 1 < len(at.get(a, est[a].values)) <= SERIES:
            return a
    return None


def _panels(n: int, many: bool, residual: bool = False):
    """``n`` panels (and, with ``residual``, a short panel under each): the figure, the panels, the ones under."""
    import matplotlib.pyplot as plt

    cols = min(n, 2) if many or n == 4 else min(n, COLUMNS)
    rows = -(-n // cols)
    height = (3.6 if many else 3.3) * rows + 1.2 + (1.3 * rows if residual else 0)
    if not residual:
        fig, axs = plt.subplots(rows, cols, figsize=(WIDTH, height), squeeze=False, layout="constrained")
        return fig, list(axs.ravel()), []
    fig, grid = plt.subplots(2 * rows, cols, figsize=(WIDTH, height), squeeze=False, layout="constrained",
                             gridspec_kw={"height_ratios": [3, 1.2] * rows})
    for r in range(rows):
        for c in range(cols):
            grid[2 * r + 1, c].sharex(grid[2 * r, c])
            grid[2 * r + 1, c].boardsweep_under = True  # a residual panel, under its panel: not counted as one
    return fig, list(grid[0::2].ravel()), list(grid[1::2].ravel())


def _draw_residual(ax, cell: xr.Dataset, dim: str | None, axis: str | None, k: int = 0, n: int = 1) -> None:
    """``z = (estimate - exact) / s.e.`` against ``axis`` (its colour ``k`` of
    ``n`` series), the band ``|z| < 1.96`` where 95% of a correct simulator's
    points fall: the uncertainty seen whatever the scale of the estimate."""
    import matplotlib.pyplot as plt

    if axis is None:
        cell = cell.expand_dims(point=[0])
        axis = "point"
    xs = cell[axis].values
    x = _positions(xs, k, n)
    z = np.asarray(cell["z"].transpose(axis).values, dtype=float) if dim is None else None
    if z is None:
        return
    if k == 0:
        ax.axhspan(-1.96, 1.96, color="#dddddd", lw=0, zorder=0, label="|z| < 1.96 (95% of a correct simulator)")
        ax.axhline(0, color="black", lw=1)
    ax.plot(x, z, "o", color=plt.get_cmap("tab10")(k % 10), ms=4)
    ax.set_ylabel("(estimate - exact)\n/ s.e.", fontsize=FONT - 1)
    top = float(np.nanmax(np.abs(z), initial=0.0)) if np.isfinite(z).any() else 0.0
    ax.set_ylim(-max(3.0, 1.15 * top), max(3.0, 1.15 * top))
    ax.set_xlabel(words(axis), fontsize=FONT)


def _draw_label_residual(ax, cell: xr.Dataset, dim: str, axis: str | None) -> None:
    """:func:`_draw_residual` of many labels along x: z per label, one colour
    per value of ``axis`` (as :func:`_draw_labels` draws them)."""
    import matplotlib.pyplot as plt

    keys = [None] if axis is None else cell[axis].values.tolist()
    x = np.arange(cell.sizes[dim])
    width = 0.8 / max(len(keys), 1)
    ax.axhspan(-1.96, 1.96, color="#dddddd", lw=0, zorder=0, label="|z| < 1.96 (95% of a correct simulator)")
    ax.axhline(0, color="black", lw=1)
    top = 3.0
    for k, key in enumerate(keys):
        z = np.asarray((cell if key is None else cell.sel({axis: key}))["z"].values, dtype=float)
        ax.plot(x + (k - (len(keys) - 1) / 2) * width, z, "o", ms=3.5, color=plt.get_cmap("tab10")(k % 10))
        top = max(top, 1.15 * float(np.nanmax(np.abs(z), initial=0.0)) if np.isfinite(z).any() else top)
    ax.set_ylim(-top, top)
    ax.set_ylabel("(estimate - exact)\n/ s.e.", fontsize=FONT - 1)
    ax.set_xticks(x, [str(python_value(v)) for v in cell[dim].values], rotation=90)
    ax.set_xlabel(words(dim), fontsize=FONT)


def _positions(xs: np.ndarray, k: int, n: int) -> np.ndarray:
    """x of series ``k`` of ``n``: the values on a numeric axis, else the
    category's index, the series side by side so their bars stay apart."""
    if _numeric(xs):
        return np.asarray(xs, dtype=float)
    return np.arange(len(xs)) + (k - (n - 1) / 2) * min(0.08, 0.6 / n)


def _ylabel(est: xr.Dataset, name: str, label: str | None) -> str:
    """The y axis in words: the headline's description (and the label), wrapped."""
    if label is not None:
        text = f"{words(name)} of {label}"
    else:
        text = (est.attrs.get("description") or words(name)).split(" (")[0]
    return "\n".join(textwrap.wrap(text[:1].upper() + text[1:], 36))


def _facet_title(others: list[str], values: tuple) -> str:
    """``axis: value`` per other axis, on one line where it fits, else one line each."""
    parts = [f"{words(a)}: {python_value(v)}" for a, v in zip(others, values)]
    text = ", ".join(parts)
    return text if len(text) <= 44 else "\n".join(parts)  # one grid point: no title


def _numeric(values: np.ndarray) -> bool:
    return np.issubdtype(np.asarray(values).dtype, np.number)


def _draw_axis(ax, cell: xr.Dataset, dim: str | None, axis: str | None, at: dict, name: str,
               first: int = 0, series: int = 1) -> None:
    """The estimate (one line per label where there are a few) against ``axis``, its 95% band, the exact curve;
    ``first``: the colour of the first line (series ``first`` of ``series`` overlaid in the panel)."""
    import matplotlib.pyplot as plt

    if axis is None:
        cell = cell.expand_dims(point=[0])
        axis = "point"
    xs = cell[axis].values
    labels = [None] if dim is None else [v for v in cell[dim].values if np.isfinite(cell["estimate"].sel({dim: v})).any()]
    colours = plt.get_cmap("tab10")
    for k, lab in enumerate(labels, start=first):
        c = cell if lab is None else cell.sel({dim: lab})
        est, low, high = (np.asarray(c[v].transpose(axis).values, dtype=float) for v in ("estimate", "low", "high"))
        x = _positions(xs, k, max(series, len(labels)))  # categories: labels or series side by side, bars apart
        colour = colours(k % 10)
        text = f"{dim} {python_value(lab)}" if lab is not None else (name if series > 1 else f"{words(name)} (estimate)")
        ax.plot(x, est, "o-" if _numeric(xs) else "o", color=colour, lw=1.8, ms=5, label=text)  # categories: no line
        if _numeric(xs):
            ax.fill_between(x, low, high, color=colour, alpha=0.22, lw=0)
        else:
            ax.errorbar(x, est, yerr=[est - low, high - est], fmt="none", ecolor=colour, capsize=4, lw=1.4)
        asked = np.array([v in at.get(axis, ()) for v in (python_value(v) for v in xs)])
        if asked.any():
            ax.plot(x[asked], est[asked], "o", ms=11, mfc="none", mec="#c33", mew=2)
        if "exact" in c and np.isfinite(c["exact"]).any():
            exact = np.asarray(c["exact"].transpose(axis).values, float)
            if _numeric(xs):
                ax.plot(x, exact, "k--", lw=1.3, label="exact" if k == 0 else None)
            else:  # a tick at each category: a lone exact value is seen too
                ax.hlines(exact, x - 0.04, x + 0.04, colors="black", lw=2, zorder=3, label="exact" if k == 0 else None)
    finite = np.asarray(cell["estimate"].values, float)
    finite = finite[np.isfinite(finite) & (finite > 0)]
    if finite.size and finite.max() / finite.min() > 50:
        ax.set_yscale("log")
    ax.set_xticks(xs if _numeric(xs) else np.arange(len(xs)), [str(python_value(v)) for v in xs])
    ax.set_xlabel(words(axis), fontsize=FONT)


def _draw_labels(ax, cell: xr.Dataset, dim: str, axis: str | None, at: dict) -> None:
    """Many labels along x (41 locations): one line per value of ``axis`` with its 95% bars; exact as ticks."""
    import matplotlib.pyplot as plt

    keys = [None] if axis is None else cell[axis].values.tolist()
    x = np.arange(cell.sizes[dim])
    colours = plt.get_cmap("tab10")
    width = 0.8 / max(len(keys), 1)
    for k, key in enumerate(keys):
        c = cell if key is None else cell.sel({axis: key})
        est, low, high = (np.asarray(c[v].values, dtype=float) for v in ("estimate", "low", "high"))
        asked = key is not None and python_value(key) in at.get(axis, ())
        shift = (k - (len(keys) - 1) / 2) * width
        text = "estimate" if key is None else f"{words(axis)} {python_value(key)}" + (" (asked)" if asked else "")
        ax.errorbar(x + shift, est, yerr=[est - low, high - est], fmt="o", ms=5 if asked else 3.5,
                    color=colours(k % 10), capsize=2, lw=1.2, label=text)
        if "exact" in c and np.isfinite(c["exact"]).any():
            ax.hlines(np.asarray(c["exact"].values, float), x + shift - width / 2, x + shift + width / 2,
                      colors="black", lw=1.6, zorder=3, label="exact" if k == 0 else None)
    ax.set_xticks(x, [str(python_value(v)) for v in cell[dim].values], rotation=90)
    ax.set_xlim(-0.6, len(x) - 0.4)
    ax.set_xlabel(words(dim), fontsize=FONT)
