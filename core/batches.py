"""Batches from cumulative checkpoints: the increments between consecutive
checkpoints of one replicate are disjoint stretches of its run, so every
(replicate, increment) pair is one batch.  Where a checkpoint counts
independent games the batches are independent; where it counts turns of one
long game they are consecutive stretches of one chain.

Pure numpy: no dask, xarray or zarr.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .stats import loglog_slope

__all__ = ["increments", "effective_df", "slope_interval"]


def increments(cumulative: np.ndarray, axis: int = 1) -> np.ndarray:
    """The batches of cumulative results: ``x_k - x_{k-1}`` along ``axis``
    (``x_{-1} = 0``), so that summing them along ``axis`` gives the last
    checkpoint again.

    Parameters
    ----------
    cumulative : ndarray
        Cumulative results, checkpoints along ``axis``.
    axis : int
        The checkpoint axis.

    Returns
    -------
    ndarray
        The same shape and dtype: the increment of each checkpoint.
    """
    c = np.asarray(cumulative)
    first = np.take(c, [0], axis=axis)
    return np.concatenate([first, np.diff(c, axis=axis)], axis=axis)


def effective_df(sizes: np.ndarray) -> int:
    """Degrees of freedom of a variance pooled over batches of unequal
    ``sizes`` ``m_b`` (Satterthwaite, each batch's squared deviation weighing
    ``m_b``): ``floor((sum m)^2 / sum m^2) - 1``, at least 1; ``B - 1`` for
    ``B`` equal batches.  Integer arithmetic: the same on every CPU.

    Parameters
    ----------
    sizes : ndarray
        The batch sizes (units per batch, integers >= 0).

    Returns
    -------
    int
    """
    m = [int(v) for v in np.ravel(sizes) if int(v) > 0]
    if len(m) < 2:
        return 1
    return max(1, sum(m) ** 2 // sum(v * v for v in m) - 1)


def slope_interval(x: np.ndarray, y: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float, float]:
    """Least-squares slope of ``log y`` on ``log x`` with its s.e., degrees
    of freedom (points - 2) and ``level`` interval ``slope -+ t(df) se``.

    The s.e. is the ordinary one (:func:`boardsweep.core.stats.loglog_slope`):
    it holds where the points' errors are independent, as for batches
    (increments), not for nested cumulative checkpoints.  All NaN with
    fewer than 3 usable points.

    Returns
    -------
    slope, stderr, df, low, high : float
    """
    slope, se = loglog_slope(x, y)
    ok = np.isfinite(np.asarray(x, float)) & np.isfinite(np.asarray(y, float))
    ok &= (np.asarray(x, float) > 0) & (np.asarray(y, float) > 0)
    df = float(ok.sum() - 2)
    if not (np.isfinite(slope) and np.isfinite(se)) or df < 1:
        return slope, se, np.nan, np.nan, np.nan
    half = float(special.stdtrit(df, 0.5 + level / 2)) * se
    return slope, se, df, slope - half, slope + half
