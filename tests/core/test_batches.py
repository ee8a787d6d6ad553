"""Batches from cumulative checkpoints and their effective degrees of freedom."""

from __future__ import annotations

import numpy as np

from boardsweep.core.batches import effective_df, increments


def test_increments_sum_back_to_the_last_checkpoint():
    c = np.cumsum(np.random.default_rng(3).integers(0, 9, (4, 6, 2)), axis=1)
    d = increments(c, axis=1)
    assert np.array_equal(d.sum(axis=1), c[:, -1]) and np.array_equal(d[:, 0], c[:, 0])


def test_effective_df_is_batches_less_one_when_equal_and_fewer_when_not():
    assert effective_df(np.full(10, 7)) == 9
    assert effective_df(np.array([1, 1, 98])) == 0 + 1  # one batch dominates: at least 1
    assert effective_df(np.array([0, 5, 5, 0])) == 1
    assert effective_df(np.array([3])) == 1
