"""Fresh histograms of a real store drawn from the game's exact law: games
are independent, so a histogram of ``m`` games is multinomial with the exact
pmf; the truth of every statistic of such draws is known."""

from __future__ import annotations

import numpy as np


def draw(ds, rng, shift: dict | None = None):
    """``ds`` with its ``hist`` replaced by draws from ``exact_pmf``,
    cumulative at the store's checkpoints, and its ``series_hist`` (where
    it has one) by the same games' counts per equal batch; ``shift``: {replicate: (from bin,
    to bin, share)} moves that share of one bin's probability to another in
    one replicate (a planted heterogeneity)."""
    p = ds["exact_pmf"].values.ravel()
    p = p / p.sum()
    cp = ds["checkpoint"].values.astype(np.int64)
    series = "series_hist" in ds  # a store of format 7: its equal batches drawn from the same games
    ends = ds["batch"].values.astype(np.int64) if series else cp[-1:]
    union = np.union1d(cp, ends)
    sizes = np.diff(np.r_[0, union])
    hist = ds["hist"].copy()
    rows = []
    for r in range(hist.sizes["replicate"]):
        q = p.copy()
        if shift and r in shift:
            src, dst, share = shift[r]
            q[dst] += share * q[src]
            q[src] -= share * q[src]
        rows.append([rng.multinomial(m, q) for m in sizes])
    cum = np.cumsum(np.stack(rows), axis=1)  # (replicate, union, bins)
    hist.values = cum[:, np.searchsorted(union, cp)].reshape(hist.shape)
    if not series:
        return ds.assign(hist=hist)
    at = cum[:, np.searchsorted(union, ends)]
    draws = ds["series_hist"].copy()
    draws.values = np.diff(at, axis=1, prepend=0).reshape(draws.shape)
    return ds.assign(hist=hist, series_hist=draws)
