"""A replicate without events has no ratio: it is left out of the standard
error instead of counting as a ratio without spread, so a grid point is never
"met" with a standard error of 0 while its other replicates vary."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from boardsweep.core import stats
from boardsweep.pipeline.plan import precision


def test_a_replicate_without_events_is_left_out():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 1000, (6, 4))
    b = rng.integers(4000, 5000, 6)
    with_none = a.copy()
    with_none[2] = 0
    b_none = b.copy()
    b_none[2] = 0
    got = precision.stderr_squared(with_none, b_none)
    keep = [0, 1, 3, 4, 5]
    assert got is not None and got > 0
    _, _, se, _ = stats.replicate_ratio_stderr(with_none.astype(float), b_none.astype(float)[:, None], axis=0)
    assert math.isclose(math.sqrt(float(got)), float(se.max()), rel_tol=1e-12)  # skips b = 0 too
    assert got == precision.stderr_squared(a[keep], b[keep])


def test_fewer_than_two_replicates_with_events_is_not_known():
    a = np.array([[0, 0], [3, 4], [0, 0]])
    assert precision.stderr_squared(a, np.array([0, 7, 0])) is None
    assert precision.stderr_squared(a, np.array([0, 0, 0])) is None


def test_an_unknown_stderr_is_never_met():
    done = np.ones(16, bool)
    d = precision.decide(lambda n: None, done, 4, 0.01, 16, 4)
    assert (d.state, d.n) == ("capped", 16) and math.isnan(d.stderr)  # 4 -> 8 -> 16, never met
    # known once enough replicates have events: met by the measured spread, not by zero
    c = Fraction(1, 10**6)
    d = precision.decide(lambda n: None if n < 8 else c, done, 4, 0.01, 16, 4)
    assert (d.state, d.n) == ("met", 8) and d.stderr > 0
