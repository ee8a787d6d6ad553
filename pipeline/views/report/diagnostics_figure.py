"""``diagnostics.png``: ArviZ's convergence plots of the few worst labels.

One row per label, the few whose R-hat on the equal-batch series is highest
beside its reference for the design's size (those above it first), in the
form of arviz-plots' ``plot_rank``, ``plot_ess`` (evolution), ``plot_mcse``
against draws and ``plot_autocorr``, drawn with matplotlib (arviz-plots is
not among the project's locked dependencies).  Bounded: at most
:data:`DIAG_LABELS` rows, from at most :data:`DIAG_POINTS` grid points
(evenly spaced where the grid has more).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from ...analysis import (LAGS, acf_limit, autocorrelation, ess_reference, grid_size, has_series, headline_diagnostics,
                        headline_draws)
from ...analysis import label_text
from .grid import grid_axes
from .panels import save
from .sample import sampled_axes

__all__ = ["DIAG_LABELS", "DIAG_POINTS", "diagnostics_figure", "worst_labels"]

#: Labels (rows) the figure draws at most.
DIAG_LABELS = 4
#: Grid points searched for the worst labels at most (an evenly spaced sub-grid beyond).
DIAG_POINTS = 24
#: Steps of the ESS and MCSE evolution (draws per chain from 4 to all of them).
EVOLUTION_STEPS = 10


def _searched(ds: xr.Dataset) -> xr.Dataset:
    """``ds``, or its evenly spaced sub-grid of at most :data:`DIAG_POINTS` points."""
    axes = grid_axes(ds)
    if grid_size(ds) <= DIAG_POINTS:
        return ds
    kept = sampled_axes(tuple(ds.sizes[a] for a in axes), DIAG_POINTS)
    return ds.isel({a: k for a, k in zip(axes, kept)})


def worst_labels(diag: xr.Dataset, most: int = DIAG_LABELS) -> list[dict]:
    """The positions (dim -> index) of the ``most`` labels with the highest
    ``rhat / rhat_limit`` in ``diag`` (:func:`headline_diagnostics`), those
    with ``rhat_high`` first; labels without R-hat left out."""
    ratio = (diag["rhat"] / diag["rhat_limit"]).values.ravel()
    high = np.nan_to_num(diag["rhat_high"].values.ravel(), nan=0.0)
    ok = np.flatnonzero(np.isfinite(ratio))
    order = ok[np.lexsort((-ratio[ok], -high[ok]))][:most]
    return [dict(zip(diag["rhat"].dims, np.unravel_index(i, diag["rhat"].shape))) for i in order]


def _name(diag: xr.Dataset, at: dict, axes: list[str]) -> str:
    """``axis=value, ..., label`` of a position in ``diag`` (``axes``: the grid axes)."""
    words = []
    for d, i in at.items():
        if d in axes or d not in diag.coords:
            words.append(f"{d}={diag[d].values[i]}" if d in diag.coords else f"{d}={i}")
        else:
            words.append(label_text(diag[d])[int(i)])
    return ", ".join(words) or "the headline"


def _headline(ds: xr.Dataset, name: str | None):
    """The game's headline ``name`` (else its first) whose draws the store keeps; None if none."""
    from ...analysis import game_of
    from ....core.games import headlines_of

    game = game_of(ds)
    heads = [h for h in headlines_of(game) if headline_draws(ds, h) is not None] if game is not None else []
    return next((h for h in heads if h.name == name), heads[0] if heads else None)


def diagnostics_figure(ds: xr.Dataset, name: str | None, out: Path) -> dict[str, str]:
    """``diagnostics.png`` (+ SVG) for headline ``name`` (default, or where it
    keeps no series: the game's first that does): per worst label
    (:func:`worst_labels`), its rank plot, bulk and tail ESS against draws,
    MCSE of the mean against draws and autocorrelation; {} where the store
    keeps no series or nothing has R-hat."""
    import matplotlib.pyplot as plt

    if not has_series(ds):
        return {}
    sub = _searched(ds)
    headline = _headline(sub, name)
    if headline is None:
        return {}
    diag = headline_diagnostics(sub, headline)
    y = headline_draws(sub, headline)
    if diag is None or y is None:
        return {}
    picks = worst_labels(diag)
    if not picks:
        return {}
    fig, axs = plt.subplots(len(picks), 4, figsize=(12.5, 2.9 * len(picks) + 1.0), squeeze=False)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.9 / (2.9 * len(picks) + 1.0), wspace=0.5,
                        hspace=0.75)
    shape, names = None, []
    for row, at in zip(axs, picks):
        x = np.asarray(y.isel({d: int(i) for d, i in at.items() if d in y.dims}).transpose("replicate", ...).values,
                       dtype=float)
        x = x[np.isfinite(x).all(axis=1)]
        shape = x.shape
        label = _name(diag, at, grid_axes(ds))
        names.append(label)
        rhat, limit = float(diag["rhat"].values[tuple(at.values())]), float(diag["rhat_limit"].values[tuple(at.values())])
        _rank_panel(row[0], x, f"{label}\nR-hat {rhat:.3f} (ref. {limit:.3f})")
        _ess_panel(row[1], x)
        _mcse_panel(row[2], x)
        _autocorr_panel(row[3], x)
    chains, draws = shape
    title = (f"Convergence diagnostics of {headline.name} on the equal-batch series, {len(picks)} labels with the "
             f"highest R-hat beside its reference ({chains} replicates x {draws} batches)")
    searched = grid_size(sub)
    caption = (f"{title}, those above it first, among {searched:,} grid point{'s' if searched != 1 else ''}"
               + (f" (evenly spaced, of {grid_size(ds):,})" if searched < grid_size(ds) else "")
               + ". One row per label, in ArviZ's plots: rank plot (each replicate's histogram of its batches' "
               f"ranks among all {chains * draws} draws; dashed: uniform, what agreeing replicates give); bulk and "
               "tail ESS against the draws used (the first n batches of every replicate; dashed: ESS = draws, "
               "independent draws; grey bar: the 90% range of independent draws' bulk ESS at all draws; dotted: "
               "400); MCSE of the mean against the draws (dotted: slope -1/2 through the last point); "
               f"autocorrelation at lags 0-{LAGS} (bars: mean over replicates; grey lines: each replicate; "
               "dashed: the 99% bound of the mean for independent batches). Every label's R-hat, ESS, tau and "
               f"lag-1 autocorrelation: ds.boardsweep.diagnostics(). Drawn: {'; '.join(names)}.")
    return {save(fig, out, "diagnostics.png", title): caption}


def _rank_panel(ax, x: np.ndarray, title: str) -> None:
    """ArviZ's rank plot: per chain (one band each) the histogram of its draws'
    ranks among all draws (average ranks for ties), dashed at the uniform count."""
    from scipy.stats import rankdata

    chains, draws = x.shape
    ranks = rankdata(x.ravel()).reshape(x.shape)
    bins = np.linspace(0.5, chains * draws + 0.5, max(4, min(16, draws // 4)) + 1)
    expected = draws / (len(bins) - 1)
    for c in range(chains):
        counts, _ = np.histogram(ranks[c], bins)
        ax.bar(bins[:-1], 0.8 * counts / (2 * expected), width=np.diff(bins), bottom=c, align="edge",
               color=f"C{c % 10}", edgecolor="white", lw=0.3)
        ax.axhline(c + 0.4, color="black", ls="--", lw=0.6)
    ax.set_yticks(np.arange(chains) + 0.4)
    ax.set_yticklabels([str(c) for c in range(chains)], fontsize=9)
    ax.set_ylabel("replicate", fontsize=9)
    ax.set_xlabel("rank (all draws)", fontsize=9)
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=9)


def _evolution(x: np.ndarray) -> np.ndarray:
    """Draws per chain at which the evolution is computed: 4 to all, :data:`EVOLUTION_STEPS` steps."""
    return np.unique(np.linspace(4, x.shape[1], EVOLUTION_STEPS).astype(int))


def _ess_panel(ax, x: np.ndarray) -> None:
    """ArviZ's ESS evolution: bulk and tail ESS on the first n draws of every chain, against R n."""
    from arviz_stats.base import array_stats

    steps = _evolution(x)
    total = steps * x.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        bulk = [float(array_stats.ess(x[:, :n], method="bulk")) for n in steps]
        tail = [float(array_stats.ess(x[:, :n], method="tail", prob=(0.05, 0.95))) for n in steps]
    ax.plot(total, bulk, "o-", ms=3, lw=1.2, label="bulk")
    ax.plot(total, tail, "s-", ms=3, lw=1.2, label="tail")
    ax.plot(total, total, "--", color="grey", lw=0.8, label="ESS = draws")
    ax.axhline(400, color="black", ls=":", lw=0.8)
    low, high = ess_reference(*x.shape)
    ax.errorbar([total[-1] * 1.04], [(low + high) / 2], yerr=[[(high - low) / 2]], color="0.4", lw=2.5, capsize=4,
                zorder=0)
    ax.set_xlabel("draws (replicates x batches)", fontsize=9)
    ax.set_ylabel("ESS", fontsize=9)
    ax.set_title("ESS against draws", fontsize=9)
    ax.legend(fontsize=8)
    ax.tick_params(labelsize=9)


def _mcse_panel(ax, x: np.ndarray) -> None:
    """MCSE of the mean on the first n draws of every chain against R n, log-log, with the slope -1/2."""
    from arviz_stats.base import array_stats

    steps = _evolution(x)
    total = steps * x.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        mcse = np.array([float(array_stats.mcse(x[:, :n], method="mean")) for n in steps])
    good = np.isfinite(mcse) & (mcse > 0)
    power = int(np.floor(np.log10(np.nanmax(mcse[good])))) if good.any() else 0
    mcse = mcse / 10.0**power  # the axis in units of 10^power: short tick labels
    ax.plot(total[good], mcse[good], "o-", ms=3, lw=1.2)
    if good.any():
        from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

        last = np.flatnonzero(good)[-1]
        ax.plot(total, mcse[last] * np.sqrt(total[last] / total), ":", color="black", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(ScalarFormatter())
            axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("draws (replicates x batches)", fontsize=9)
    ax.set_ylabel(f"MCSE of the mean (x 1e{power})", fontsize=9)
    ax.set_title("MCSE against draws", fontsize=9)
    ax.tick_params(labelsize=9)


def _autocorr_panel(ax, x: np.ndarray) -> None:
    """ArviZ's autocorrelation: each chain's (grey), their mean (bars), the 99% bound of the mean."""
    lags = min(LAGS, x.shape[1] - 1)
    each = autocorrelation(x[:, None, :], lags)  # (chains, lags + 1): each chain alone
    mean = autocorrelation(x, lags)
    for c in range(x.shape[0]):
        ax.plot(np.arange(lags + 1), each[c], color="grey", lw=0.5, alpha=0.6)
    ax.bar(np.arange(lags + 1), mean, width=0.6, color="C0")
    ax.axhline(0, color="black", lw=0.6)
    ax.axhline(acf_limit(*x.shape), color="black", ls="--", lw=0.8)
    ax.set_ylim(min(-0.3, float(np.nanmin(each)) - 0.05), 1.05)
    ax.set_xticks(np.arange(0, lags + 1, 2))
    ax.set_xlabel("lag (batches)", fontsize=9)
    ax.set_ylabel("autocorrelation", fontsize=9)
    ax.set_title("autocorrelation", fontsize=9)
    ax.tick_params(labelsize=9)
