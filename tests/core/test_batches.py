"""Batches from cumulative checkpoints and their effective degrees of freedom."""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.core.batches import effective_df, equal_ends, increments, with_series


def test_increments_sum_back_to_the_last_checkpoint():
    c = np.cumsum(np.random.default_rng(3).integers(0, 9, (4, 6, 2)), axis=1)
    d = increments(c, axis=1)
    assert np.array_equal(d.sum(axis=1), c[:, -1]) and np.array_equal(d[:, 0], c[:, 0])


def test_effective_df_is_batches_less_one_when_equal_and_fewer_when_not():
    assert effective_df(np.full(10, 7)) == 9
    assert effective_df(np.array([1, 1, 98])) == 0 + 1  # one batch dominates: at least 1
    assert effective_df(np.array([0, 5, 5, 0])) == 1
    assert effective_df(np.array([3])) == 1


def test_variance_interval_covers_the_true_variance_at_its_level():
    """Replicate means of a normal law, R = 4: the chi-square interval of
    their variance covers the truth in 95% of 2000 draws (binomial 99.9%)."""
    from scipy import stats as st

    from boardsweep.core.batches import variance_interval

    rng = np.random.default_rng(11)
    x = rng.normal(0.3, 2.0, (2000, 4))
    low, high = variance_interval(x.var(axis=1, ddof=1) / 4.0, np.full(2000, 3))
    covered = int(((low <= 1.0) & (1.0 <= high)).sum())
    assert st.binom.ppf(0.001, 2000, 0.95) <= covered <= st.binom.ppf(0.999, 2000, 0.95), covered


def test_heterogeneity_test_keeps_its_size_on_independent_batches():
    """Multinomial batches of one law (as independent games give): p < 5%
    in 5% of 1000 sweeps for a rare and a common label, binomial 99.9%."""
    from scipy import stats as st

    from boardsweep.core.batches import heterogeneity_test

    rng = np.random.default_rng(12)
    sizes = np.array([84, 63, 109, 190, 330, 575, 1002, 1743])
    p = np.array([[heterogeneity_test(np.stack([[rng.multinomial(m, [0.02, 0.2, 0.78]) for m in sizes]
                                                for _ in range(4)]), np.tile(sizes, (4, 1)))["p"]]
                  for _ in range(1000)]).reshape(1000, 3)
    alarms = (p < 0.05).sum(axis=0)
    assert (alarms >= st.binom.ppf(0.001, 1000, 0.05)).all() and (alarms <= st.binom.ppf(0.999, 1000, 0.05)).all()


def test_share_interval_covers_the_true_between_share_at_its_level():
    """Exact answers m_r (between-deck spread) and sampling errors e_r, both
    normal, R = 4, true share 0.6: the interval covers it in 95% of 2000."""
    from scipy import stats as st

    from boardsweep.core.batches import share_interval

    rng = np.random.default_rng(13)
    m = rng.normal(0.1, np.sqrt(1.5), (2000, 4))
    x = m + rng.normal(0.0, 1.0, (2000, 4))
    low, high = share_interval(m.var(axis=1, ddof=1), ((x - m) ** 2).mean(axis=1), np.full(2000, 4))
    covered = int(((low <= 0.6) & (0.6 <= high)).sum())
    assert st.binom.ppf(0.001, 2000, 0.95) <= covered <= st.binom.ppf(0.999, 2000, 0.95), covered


def test_share_interval_per_deck_order_covers_the_true_share():
    """R = 4 replicates of G = 4 deck orders: answers of the 16 orders
    normal (variance 2), a replicate's sampling error normal (variance 0.25):
    true share (2 / 4) / (2 / 4 + 0.25) = 2/3; the interval with R G - 1 df
    for the between part covers it in 95% of 2000 draws (binomial 99.9%)."""
    from scipy import stats as st

    from boardsweep.core.batches import share_interval

    rng = np.random.default_rng(14)
    decks = rng.normal(0.2, np.sqrt(2.0), (2000, 4, 4))
    m = decks.mean(axis=2)
    x = m + rng.normal(0.0, 0.5, (2000, 4))
    low, high = share_interval(decks.reshape(2000, 16).var(axis=1, ddof=1) / 4, ((x - m) ** 2).mean(axis=1),
                               np.full(2000, 4), df_between=np.full(2000, 15))
    covered = int(((low <= 2 / 3) & (2 / 3 <= high)).sum())
    assert st.binom.ppf(0.001, 2000, 0.95) <= covered <= st.binom.ppf(0.999, 2000, 0.95), covered


@pytest.mark.parametrize("true_share", [0.0, 0.3, 0.9])
def test_anova_share_covers_the_true_share(true_share):
    """R = 8 groups of K = 10 independent normal batches: the share of the
    group answers' variance in a group mean's is ``true_share``; the F
    interval covers it in 95% of 2000 draws (binomial 99.9%; at 0 the
    clipped lower end makes it 97.5%), and the estimate is unbiased in F."""
    from scipy import stats as st

    from boardsweep.core.batches import anova_share

    rng = np.random.default_rng(15)
    within = 1.0  # per batch; a group mean's sampling variance is 1 / 10
    between = true_share / (1 - true_share) * within / 10
    answers = rng.normal(0.0, np.sqrt(between), (2000, 8, 1, 1))
    y = 0.5 + answers + rng.normal(0.0, 1.0, (2000, 8, 10, 1))
    got = [anova_share(y[i], np.ones((8, 10))) for i in range(2000)]
    low = np.array([g["share_low"][0] for g in got])
    high = np.array([g["share_high"][0] for g in got])
    covered = int(((low <= true_share) & (true_share <= high)).sum())
    level = 0.975 if true_share == 0 else 0.95
    assert st.binom.ppf(0.001, 2000, level) <= covered <= st.binom.ppf(0.999, 2000, level), covered


def test_equal_ends_are_equal_batches_to_one_unit():
    for total, batches in ((64, 64), (100, 32), (3000, 64), (10**12 + 7, 64)):
        ends = equal_ends(total, batches)
        widths = np.diff(np.r_[0, ends])
        assert ends[-1] == total and len(ends) == batches and widths.min() >= 1
        assert widths.max() - widths.min() <= 1
    with pytest.raises(ValueError):
        equal_ends(10, 11)


@pytest.mark.parametrize("game", ["monopoly", "shut_the_box", "hk_monopoly", "chutes_ladders"])
def test_a_run_gives_the_same_integers_at_its_checkpoints_whatever_else_it_stops_at(game):
    """The store's series come from one run at the union of the log
    checkpoints and the equal batches' ends: each real kernel's counts at the
    log checkpoints are bit for bit those of a run at the log checkpoints alone."""
    from boardsweep.core.games import get_game, series_sources

    g = get_game(game)
    params = {p.name: p.default for p in g.params}
    run = dict(g.run_shape)
    log = g.default_checkpoints(run, 16)
    union, at, ends = with_series(log, 32)
    assert np.array_equal(union[at], log) and np.array_equal(union[ends], equal_ends(int(log[-1]), 32))
    alone, both = g.simulate(params, 11, run, log), g.simulate(params, 11, run, union)
    for name, values in alone.items():
        assert np.array_equal(np.asarray(values), np.asarray(both[name])[at]), name
    assert series_sources(g)
