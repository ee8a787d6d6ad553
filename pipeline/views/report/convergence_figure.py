"""``convergence.png``: the error (or spread) of one replicate against the steps it ran, log-log."""

from __future__ import annotations


import numpy as np

from .panels import _facet_grid, _colorbar, _facet_title, _save, _field


def _line_figures(ds, parts, out, x, facets, xvals) -> dict[str, str]:
    import matplotlib.pyplot as plt
    from matplotlib import cm, colors

    conv, dim = parts["conv"], parts["dim"]
    steps_name = conv.attrs.get("steps", "steps")
    norm = colors.Normalize(0, max(len(xvals) - 1, 1))
    cmap = plt.get_cmap("viridis")
    figs = {}
    has_err = bool(np.isfinite(conv["rms_error"].values).any())
    sd_rms = np.sqrt((conv["sd"] ** 2).mean(dim))
    specs = [("convergence.png", "RMS error of one replicate" if has_err else "RMS across-replicate sd",
              "Log-log convergence (dashed: across-replicate sd where no exact answer exists; dotted: the "
              "Monte Carlo rate, slope -1/2)")]
    for name, ylabel, title in specs:
        fig, axs = _facet_grid(len(facets), 4.2, 3.2)
        fig.subplots_adjust(wspace=0.45)
        drawn, empty = False, []
        for ax, facet in zip(axs, facets):
            all_steps = _field(conv["steps"], facet, x, "checkpoint").T
            all_err = _field(conv["rms_error"], facet, x, "checkpoint").T
            all_sd = _field(sd_rms, facet, x, "checkpoint").T
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
                    ax.plot(steps[good], y[good], style, color=cmap(norm(j)), lw=1.2, marker=".", ms=3,
                            label=f"{x}={xv}" if x else None)
                    drawn = here = True
            if name == "convergence.png" and here:  # the Monte Carlo rate, through the last point drawn
                lines = ax.get_lines()
                xs, ys = lines[-1].get_data()
                ref = np.array([xs[0], xs[-1]], float)
                ax.plot(ref, ys[-1] * np.sqrt(xs[-1] / ref), ":", color="black", lw=1,
                        label="slope -1/2" if not x else None)
            ax.set_title(_facet_title(facet), fontsize=9)
            ax.set_xlabel(f"{steps_name}, mean per replicate", fontsize=9)
            ax.set_ylabel(ylabel, fontsize=9)
            ax.tick_params(labelsize=8)
            if not here:  # no empty panel: the caption says which were left out
                ax.set_visible(False)
                empty.append(_facet_title(facet))
        if x and len(xvals) > 8:
            sm = cm.ScalarMappable(norm=colors.Normalize(min(xvals), max(xvals)), cmap=cmap) \
                if ds[x].dtype.kind in "iuf" else cm.ScalarMappable(norm=norm, cmap=cmap)
            _colorbar(fig, sm, x)
        elif x and drawn:
            next(ax for ax in axs if ax.get_visible()).legend(fontsize=8, title=x, title_fontsize=8)
        if not drawn:  # nothing to draw anywhere: no figure
            plt.close(fig)
            continue
        caption = title if not empty else (
            f"{title}. Left out, nothing to draw ({'no theory for these parameters or ' if 'ratio' in name else ''}"
            f"no finished replicates): {'; '.join(empty)}")
        figs[_save(fig, out, name, title)] = caption
    return figs
