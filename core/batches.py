"""Batches from cumulative checkpoints: the increments between consecutive
checkpoints of one replicate are disjoint stretches of its run, so every
(replicate, increment) pair is one batch.  Where a checkpoint counts
independent games the batches are independent; where it counts turns of one
long game they are consecutive stretches of one chain.

Pure numpy: no dask, xarray or zarr.
"""

from __future__ import annotations

import numpy as np

__all__ = ["increments", "effective_df"]


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
