"""core/stats.py against scipy.stats: the same numbers (to 1e-10 relative).

core/stats.py computes with scipy.special (the functions scipy.stats itself
calls) because importing scipy.stats takes about 1.5 s of every command's
start; these tests hold each hand-written formula to scipy.stats' own:
Welch's t test (``ttest_ind_from_stats``), the t interval
(``t.interval``), the t test (``t.sf``), Clopper-Pearson
(``binomtest(...).proportion_ci(method="exact")``), the exact binomial
test's doubled smaller tail (``binom``), Pearson's chi-square
(``chisquare`` on the merged bins) and Holm (the definition, step by step)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from boardsweep.core import stats


def test_welch_is_scipys():
    rng = np.random.default_rng(1)
    m1, m2 = rng.normal(size=50), rng.normal(size=50)
    v1, v2 = rng.uniform(0.1, 3, 50), rng.uniform(0.1, 3, 50)
    n1, n2 = rng.integers(2, 40, 50), rng.integers(2, 40, 50)
    mine = stats.welch_test(m1, v1, n1, m2, v2, n2)
    theirs = st.ttest_ind_from_stats(m1, np.sqrt(v1), n1, m2, np.sqrt(v2), n2, equal_var=False)
    assert np.allclose(mine["t"], theirs.statistic, rtol=1e-10)
    assert np.allclose(mine["p"], theirs.pvalue, rtol=1e-9)


def test_t_interval_and_test_are_scipys():
    rng = np.random.default_rng(2)
    est, se = rng.normal(size=40), rng.uniform(0.1, 2, 40)
    df = rng.choice([1.0, 3.0, 7.0, 30.0, 1e6], 40)
    low, high = stats.t_interval(est, se, df, 0.95)
    a, b = st.t.interval(0.95, df, loc=est, scale=se)
    assert np.allclose(low, a, rtol=1e-10) and np.allclose(high, b, rtol=1e-10)
    ref = est + rng.normal(0, 3, 40) * se
    z, p = stats.t_test(est, se, df, ref)
    assert np.allclose(p, 2 * st.t.sf(np.abs((est - ref) / se), df), rtol=1e-9)


@pytest.mark.parametrize("n", [1, 7, 40, 400])
def test_clopper_pearson_and_the_binomial_test_are_scipys(n):
    k = np.arange(n + 1)
    low, high = stats.proportion_interval(k, n, 0.95)
    for i in k:
        ci = st.binomtest(int(i), n).proportion_ci(0.95, method="exact")
        assert low[i] == pytest.approx(ci.low, rel=1e-9, abs=1e-15)
        assert high[i] == pytest.approx(ci.high, rel=1e-9, abs=1e-15)
    p0 = 0.3
    _, p = stats.proportion_test(k, n, np.nan, np.nan, p0)
    tails = np.minimum(st.binom.cdf(k, n, p0), st.binom.sf(k - 1, n, p0))
    assert np.allclose(p, np.minimum(1.0, 2 * tails), rtol=1e-9, atol=1e-300)


def test_chi_square_fit_is_scipys_on_the_merged_bins():
    probs = np.array([0.01, 0.02, 0.2, 0.3, 0.27, 0.15, 0.04, 0.01])
    counts = np.random.default_rng(3).multinomial(200, probs)
    stat, df, p = stats.chi2_gof(counts, probs)
    e = probs * 200  # expected 2, 4, 40, 60, 54, 30, 8, 2: merged [2 + 4], 40, 60, 54, 30, [8 + 2]
    go = np.array([counts[:2].sum(), *counts[2:6], counts[6:].sum()])
    ge = np.array([e[:2].sum(), *e[2:6], e[6:].sum()])
    theirs = st.chisquare(go, ge)
    assert df == 5 and stat == pytest.approx(theirs.statistic, rel=1e-12) and p == pytest.approx(theirs.pvalue,
                                                                                                     rel=1e-9)


def test_holm_is_the_definition():
    """Holm's adjusted p: the k-th smallest times (m - k + 1), never below the one before, capped at 1;
    NaN left out of the family and left NaN."""
    rng = np.random.default_rng(4)
    for _ in range(200):
        p = rng.uniform(0, 1, 12) ** 3
        p[rng.uniform(size=12) < 0.2] = np.nan
        ok = np.flatnonzero(np.isfinite(p))
        order = ok[np.argsort(p[ok], kind="stable")]
        want, top = np.full(12, np.nan), 0.0
        for i, j in enumerate(order):
            top = max(top, min(1.0, (len(ok) - i) * p[j]))
            want[j] = top
        assert np.array_equal(np.isnan(stats.holm(p)), np.isnan(want))
        assert np.allclose(stats.holm(p)[ok], want[ok], rtol=1e-15)
    rows = rng.uniform(0, 1, (5, 9, 7)) ** 2
    rows[rows > 0.8] = np.nan
    along = stats.holm(rows, axis=1)  # each (i, :, j) its own family, vectorised (no Python loop)
    for i in range(5):
        for j in range(7):
            assert np.allclose(along[i, :, j], stats.holm(rows[i, :, j]), rtol=1e-15, equal_nan=True)
    assert np.isnan(stats.holm(np.array([np.nan, np.inf]))).all() and stats.holm(np.zeros(0)).shape == (0,)
