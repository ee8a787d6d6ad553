"""Fresh histograms of a real store drawn from the game's exact law: games
are independent, so a histogram of ``m`` games is multinomial with the exact
pmf; the truth of every statistic of such draws is known."""

from __future__ import annotations

import numpy as np


def draw(ds, rng, shift: dict | None = None):
    """``ds`` with its ``hist`` replaced by draws from ``exact_pmf``,
    cumulative at the store's checkpoints; ``shift``: {replicate: (from bin,
    to bin, share)} moves that share of one bin's probability to another in
    one replicate (a planted heterogeneity)."""
    p = ds["exact_pmf"].values.ravel()
    p = p / p.sum()
    cp = ds["checkpoint"].values.astype(np.int64)
    sizes = np.diff(np.r_[0, cp])
    hist = ds["hist"].copy()
    rows = []
    for r in range(hist.sizes["replicate"]):
        q = p.copy()
        if shift and r in shift:
            src, dst, share = shift[r]
            q[dst] += share * q[src]
            q[src] -= share * q[src]
        rows.append([rng.multinomial(m, q) for m in sizes])
    hist.values = np.cumsum(np.stack(rows), axis=1).reshape(hist.shape)
    return ds.assign(hist=hist)
