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

    answer = answer_of(ds)
    if answer is None:
        return None
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
    others = [a for a in axes if a != axis]
    panels, total = panel_choice(_facet_values(full, others, at))  # of the whole grid: est may hold the drawn only
    many = dim is not None and est.sizes[dim] > MANY_LABELS
    fig, axs = _panels(len(panels), many)
    fig.boardsweep_panels = (len(panels), total)  # drawn, and every combination of the other axes
    ylabel = _ylabel(est, name, label)
    for ax, values in zip(axs, panels):
        cell = est.sel(dict(zip(others, values))) if others else est
        if many:
            _draw_labels(ax, cell, dim, axis, at)
        else:
            _draw_axis(ax, cell, dim, axis, at, label or name)
        ax.set_title(_facet_title(others, values), fontsize=FONT + 1, y=1.0)  # placed: no search at each draw
        ax.set_ylabel(ylabel, fontsize=FONT)
        ax.tick_params(labelsize=FONT - 1)
        ax.grid(color="#e4e4e4", lw=0.8)
    for ax in axs[len(panels):]:
        ax.set_visible(False)
    heading = f"{words(name).capitalize()}: {est.attrs.get('description', '')}" if title is None else title
    _legend(fig, axs[:len(panels)], "lower" if heading else "upper")  # not over the title
    if heading:
        fig.suptitle("\n".join(textwrap.wrap(heading, 110)), fontsize=FONT + 2)
    return fig


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


def _panels(n: int, many: bool):
    import matplotlib.pyplot as plt

    cols = min(n, 2) if many or n == 4 else min(n, COLUMNS)
    rows = -(-n // cols)
    height = (3.6 if many else 3.3) * rows + 1.2
    fig, axs = plt.subplots(rows, cols, figsize=(WIDTH, height), squeeze=False, layout="constrained")
    return fig, list(axs.ravel())


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


def _draw_axis(ax, cell: xr.Dataset, dim: str | None, axis: str | None, at: dict, name: str) -> None:
    """The estimate (one line per label where there are a few) against ``axis``, its 95% band, the exact curve."""
    import matplotlib.pyplot as plt

    if axis is None:
        cell = cell.expand_dims(point=[0])
        axis = "point"
    xs = cell[axis].values
    x = xs if _numeric(xs) else np.arange(len(xs))
    labels = [None] if dim is None else [v for v in cell[dim].values if np.isfinite(cell["estimate"].sel({dim: v})).any()]
    colours = plt.get_cmap("tab10")
    for k, lab in enumerate(labels):
        c = cell if lab is None else cell.sel({dim: lab})
        est, low, high = (np.asarray(c[v].transpose(axis).values, dtype=float) for v in ("estimate", "low", "high"))
        if not _numeric(xs):  # labels side by side at each category, their bars apart
            x = np.arange(len(xs)) + (k - (len(labels) - 1) / 2) * min(0.08, 0.6 / len(labels))
        colour = colours(k % 10)
        text = f"{dim} {python_value(lab)}" if lab is not None else f"{words(name)} (estimate)"
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
