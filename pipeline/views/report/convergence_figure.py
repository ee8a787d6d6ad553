"""``convergence.png``: the error (or spread) of one replicate against the steps it ran, log-log."""

from __future__ import annotations

import numpy as np

from .panels import facet_grid, colorbar, facet_title, save, field, left_out, facets_total

_TITLE = ("Log-log convergence (dashed: across-replicate sd where no exact answer exists; dotted: the "
          "Monte Carlo rate, slope -1/2)")


def line_figures(ds, parts, out, x, facets, xvals) -> dict[str, str]:
    """``convergence.png``: per facet, the RMS error of one replicate against
    the exact answer (else the RMS across-replicate sd) against the mean steps
    per replicate, one line per value of ``x``, with the Monte Carlo rate
    (slope -1/2) through the last point drawn; {} where nothing can be drawn."""
    import matplotlib.pyplot as plt
    from matplotlib import cm, colors

    conv = parts["conv"]
    norm = colors.Normalize(0, max(len(xvals) - 1, 1))
    cmap = plt.get_cmap("viridis")
    has_err = bool(np.isfinite(conv["rms_error"].values).any())
    ylabel = "RMS error of one replicate" if has_err else "RMS across-replicate sd"
    fig, axs = facet_grid(len(facets), 4.2, 3.2)
    fig.subplots_adjust(wspace=0.45)
    empty = []
    for ax, facet in zip(axs, facets):
        if not _convergence_panel(ax, parts, facet, x, xvals, lambda j: cmap(norm(j)), ylabel):
            ax.set_visible(False)  # no empty panel: the caption says which were left out
            empty.append(facet_title(facet))
    if len(empty) == len(facets):  # nothing to draw anywhere: no figure
        plt.close(fig)
        return {}
    if x and len(xvals) > 8:
        sm = cm.ScalarMappable(norm=colors.Normalize(min(xvals), max(xvals)), cmap=cmap) \
            if ds[x].dtype.kind in "iuf" else cm.ScalarMappable(norm=norm, cmap=cmap)
        colorbar(fig, sm, x)
    elif x:
        next(ax for ax in axs if ax.get_visible()).legend(fontsize=8, title=x, title_fontsize=8)
    caption = _TITLE if not empty else (
        f"{_TITLE}. Left out, nothing to draw (no finished replicates): {'; '.join(empty)}")
    more = left_out(len(facets), facets_total(ds, x), "points.csv")
    caption += f".{more}" if more else ""
    return {save(fig, out, "convergence.png", _TITLE): caption}


def _convergence_panel(ax, parts, facet: dict, x: str | None, xvals: list, color, ylabel: str) -> bool:
    """One facet's lines (an RMS error where finite, else the sd, dashed);
    whether anything was drawn."""
    conv, dim = parts["conv"], parts["dim"]
    all_steps = field(conv["steps"], facet, x, "checkpoint").T
    all_err = field(conv["rms_error"], facet, x, "checkpoint").T
    all_sd = field(np.sqrt((conv["sd"] ** 2).mean(dim)), facet, x, "checkpoint").T
    ax.set_yscale("log")
    ax.set_xscale("log")
    here = False
    for j, xv in enumerate(xvals):
        steps = all_steps[j]
        ok = np.isfinite(steps) & (steps > 0)
        err, sd = all_err[j], all_sd[j]
        y, style = (err, "-") if np.isfinite(err[ok]).any() else (sd, "--")
        good = ok & np.isfinite(y) & (y > 0)
        if good.any():
            ax.plot(steps[good], y[good], style, color=color(j), lw=1.2, marker=".", ms=3,
                    label=f"{x}={xv}" if x else None)
            here = True
    if here:  # the Monte Carlo rate, through the last point drawn
        xs, ys = ax.get_lines()[-1].get_data()
        ref = np.array([xs[0], xs[-1]], float)
        ax.plot(ref, ys[-1] * np.sqrt(xs[-1] / ref), ":", color="black", lw=1,
                label="slope -1/2" if not x else None)
    ax.set_title(facet_title(facet), fontsize=9)
    ax.set_xlabel(f"{conv.attrs.get('steps', 'steps')}, mean per replicate", fontsize=9)
    ax.set_ylabel(ylabel, fontsize=9)
    ax.tick_params(labelsize=8)
    return here
