"""boardsweep.core.stats (game-agnostic estimators) and the Monopoly CLT variance they check.

The Monopoly asymptotic variance (core/monopoly/variance.py) is tested here
because its reference is a statistic of this module: a long batch-means run.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from boardsweep.core.stats import (
    holm,
    loglog_slope,
    ratio_batch_variance,
    share_difference,
    variance_decomposition,
    welch_test,
)


def test_loglog_slope_exact_power_law_and_nan_skipped():
    x = np.geomspace(10, 1e6, 12)
    y = 3.0 * x**-0.5
    y[3] = np.nan
    x[5] = np.nan
    slope, se = loglog_slope(x, y)
    assert slope == pytest.approx(-0.5, abs=1e-12)
    assert se == pytest.approx(0.0, abs=1e-10)
    assert np.isnan(loglog_slope([1.0, 2.0], [1.0, np.nan])[0])


def test_ratio_batch_variance_equal_batches_is_classical_formula():
    rng = np.random.default_rng(1)
    c = rng.poisson(20.0, (50, 3)).astype(float)
    e = np.full(50, 60.0)
    R = c.sum(0) / e.sum()
    B = 50
    by_hand = B / (B - 1) * ((c - R * e[:, None]) ** 2).sum(0) / e.sum() ** 2
    np.testing.assert_allclose(ratio_batch_variance(c, e), by_hand, rtol=1e-12)
    c[7, 0] = np.nan  # a missing batch is skipped, not a zero
    assert np.isfinite(ratio_batch_variance(c, e)[0])


def test_ratio_batch_variance_unbiased_for_unequal_iid_batches():
    # iid Bernoulli(p) steps in batches of unequal length: Var(R) = p(1-p)/n.
    rng = np.random.default_rng(2)
    sizes = np.array([10, 30, 100, 300, 1000, 3000])
    p, reps = 0.2, 4000
    c = rng.binomial(sizes[None, :], p, (reps, sizes.size)).astype(float)
    est = ratio_batch_variance(c, sizes[None, :].repeat(reps, 0), axis=1)
    truth = p * (1 - p) / sizes.sum()
    se = est.std(ddof=1) / np.sqrt(reps)
    assert abs(est.mean() - truth) < 4 * se


def test_welch_matches_scipy():
    rng = np.random.default_rng(4)
    a, b = rng.normal(0, 1, 9), rng.normal(0.5, 2, 13)
    out = welch_test(a.mean(), a.var(ddof=1), a.size, b.mean(), b.var(ddof=1), b.size)
    ref = st.ttest_ind(a, b, equal_var=False)
    assert out["t"] == pytest.approx(ref.statistic, rel=1e-12)
    assert out["p"] == pytest.approx(ref.pvalue, rel=1e-10)
    assert np.isnan(welch_test(0.0, 1.0, 1, 0.0, 1.0, 5)["p"])


def test_holm_by_hand():
    p = np.array([0.01, 0.04, np.nan, 0.03, 0.2])
    # sorted finite: 0.01*4=0.04, 0.03*3=0.09, 0.04*2=0.08 -> 0.09 (monotone), 0.2*1=0.2
    np.testing.assert_allclose(holm(p), [0.04, 0.09, np.nan, 0.09, 0.2])


def test_variance_decomposition_recovers_known_parts():
    rng = np.random.default_rng(5)
    R = 20000
    env = rng.normal(0.0, 2.0, R)  # between variance 4
    x = env + rng.normal(0.0, 1.0, R)  # sampling variance 1
    out = variance_decomposition(x, env)
    assert out["total"] == pytest.approx(np.var(x, ddof=1))
    assert out["between"] == pytest.approx(np.var(env, ddof=1))
    assert out["sampling"] == pytest.approx(np.mean((x - env) ** 2))
    assert abs(out["between_share"] - 0.8) < 0.02  # sd of the share here is ~0.003


# --- Monopoly: exact CLT variance -------------------------------------------------

VARIANTS = [
    ("per_roll", "short", "standard"),
    ("per_landing", "long", "classic15"),
    ("per_turn", "long", "standard"),
]


@pytest.mark.parametrize("tally,jail,deck", VARIANTS)
def test_monopoly_branches_rebuild_the_exact_chain(tally, jail, deck):
    from boardsweep.core.monopoly.exact import build_chain
    from boardsweep.core.monopoly.rules import Rules
    from boardsweep.core.monopoly.variance import roll_branches

    rules = Rules(dice_sides=6, jail_strategy=jail, chance_deck=deck, tally=tally)
    chain, br = build_chain(rules), roll_branches(rules)
    np.testing.assert_allclose(br.transition_matrix(), chain.P.toarray(), atol=1e-15)
    np.testing.assert_allclose(br.expected_counts(), chain.C, atol=1e-15)


def test_monopoly_per_roll_variance_is_the_state_function_formula():
    from boardsweep.core.markov import asymptotic_variance as state_variance
    from boardsweep.core.markov import stationary
    from boardsweep.core.monopoly.exact import build_chain
    from boardsweep.core.monopoly.rules import Rules
    from boardsweep.core.monopoly.variance import asymptotic_variance

    rules = Rules(dice_sides=4, jail_strategy="long", tally="per_roll")
    chain = build_chain(rules)
    pi = stationary(chain.P)
    indicator = np.eye(41)[chain.location]
    expected = state_variance(chain.P.toarray(), pi, indicator)
    np.testing.assert_allclose(asymptotic_variance(rules)["variance"], expected, rtol=1e-10)


@pytest.mark.parametrize("tally,jail,deck", VARIANTS)
def test_monopoly_variance_matches_long_batch_means_run(tally, jail, deck):
    """sigma^2 per roll vs batch means of one 10-million-turn token.

    The batch-means estimate has relative standard error sqrt(2/(B-1)) (7% at
    B=400); every location must agree within z = 4.2, the two-sided
    Bonferroni bound for a family-wise error of 0.001 over 40 locations.
    """
    from boardsweep.core.monopoly.rules import Rules
    from boardsweep.core.monopoly.simulate import simulate_rules
    from boardsweep.core.monopoly.variance import asymptotic_variance

    rules = Rules(dice_sides=6, jail_strategy=jail, chance_deck=deck, tally=tally)
    theory = asymptotic_variance(rules)["variance"]
    B, T = 400, 10_000_000
    run = simulate_rules(rules, 2024, 1, 1, T, np.arange(T // B, T + 1, T // B))
    c = np.diff(run["counts"], axis=0, prepend=0)
    e = np.diff(run["events"], prepend=0)
    measured = ratio_batch_variance(c, e) * run["rolls"][-1]  # per roll
    counted = theory > 0  # G2J is never counted: f = 0 exactly, variance 0
    assert counted.sum() == 40 and np.all(measured[~counted] == 0)
    z = (measured[counted] / theory[counted] - 1) / np.sqrt(2 / (B - 1))
    assert np.max(np.abs(z)) < st.norm.isf(0.001 / 80)


def test_monopoly_variance_hook_through_the_game_interface():
    from boardsweep.core.games import get_game

    game = get_game("monopoly")
    params = game.resolve_params({})
    out = game.extras["asymptotic_variance"](params)
    assert out["per"] == "rolls" and out["per"] in game.variables
    assert out["variance"].shape == (41,) and np.all(out["variance"] >= 0)
    shuffled = game.extras["asymptotic_variance"]({**params, "deck_policy": "shuffled_cycle"})
    assert np.all(np.isnan(shuffled["variance"]))


# --- standard errors, intervals, tests -------------------------------------------------


def test_pooled_unit_stderr_is_the_sample_sd_of_the_units():
    from boardsweep.core.stats import pooled_unit_stderr

    x = np.random.default_rng(5).integers(1, 60, 1000)
    sd, se, df = pooled_unit_stderr(x.sum(), (x * x).sum(), x.size)
    assert np.isclose(sd, x.std(ddof=1)) and np.isclose(se, x.std(ddof=1) / np.sqrt(x.size))
    assert df == x.size - 1
    wins = np.array([1, 0, 0, 1, 1])  # a 0/1 outcome: squares = total
    assert np.isclose(pooled_unit_stderr(3, 3, 5)[0], wins.std(ddof=1))
    assert np.isnan(pooled_unit_stderr(3, 9, 1)[1])


def test_replicate_ratio_stderr_equal_denominators_is_sd_over_root_n():
    from boardsweep.core.stats import replicate_ratio_stderr

    rng = np.random.default_rng(6)
    c = rng.normal(50, 3, (4, 7))
    est, sd, se, df = replicate_ratio_stderr(c, np.full(4, 10.0), axis=0)
    assert np.allclose(est, c.mean(0) / 10)
    assert np.allclose(se, (c / 10).std(0, ddof=1) / 2) and np.allclose(sd, (c / 10).std(0, ddof=1))
    assert np.all(df == 3)
    c[1, :] = np.nan  # an unfinished replicate is skipped, not read as 0
    est, _, _, df = replicate_ratio_stderr(c, np.full(4, 10.0), axis=0)
    assert np.allclose(est, np.nanmean(c, 0) / 10) and np.all(df == 2)


def test_replicate_ratio_stderr_is_the_linearised_ratio_estimator():
    from boardsweep.core.stats import replicate_ratio_stderr

    c, e = np.array([10.0, 14.0, 9.0, 13.0]), np.array([100.0, 120.0, 95.0, 130.0])
    r = c.sum() / e.sum()
    want = np.sqrt(((c - r * e) ** 2).sum() / (4 * 3)) / e.mean()
    assert np.isclose(replicate_ratio_stderr(c, e)[2], want)


def test_t_interval_uses_student_t_with_the_given_df():
    from boardsweep.core.stats import t_interval

    low, high = t_interval(1.0, 0.5, 3)
    assert np.isclose(high - 1.0, st.t.ppf(0.975, 3) * 0.5)  # 3.18 s.e., not 1.96
    low, high = t_interval(np.array([0.0]), np.array([1.0]), np.array([1e6]), level=0.9)
    assert np.isclose(high[0], st.norm.ppf(0.95), atol=1e-5)
    assert np.isnan(t_interval(1.0, 0.5, 0)[0])


def test_t_test_p_value_and_missing_cases():
    from boardsweep.core.stats import t_test

    z, p = t_test(np.array([3.0, 1.0, 1.0]), np.array([1.0, 0.0, 1.0]), np.array([4, 4, 4]),
                  np.array([1.0, 1.0, np.nan]))
    assert np.isclose(z[0], 2.0) and np.isclose(p[0], 2 * st.t.sf(2.0, 4))
    assert np.isnan(p[1]) and np.isnan(p[2])


def test_chi2_gof_merges_sparse_bins_and_matches_scipy():
    from boardsweep.core.stats import chi2_gof

    probs = np.array([0.5, 0.3, 0.15, 0.04, 0.008, 0.002])
    counts = np.array([52, 27, 14, 5, 2, 0])
    stat, df, p = chi2_gof(counts, probs)
    # expected 50, 30, 15, 4 + 0.8 + 0.2 = 5: four groups
    o, e = np.array([52, 27, 14, 7]), np.array([50, 30, 15, 5.0])
    assert df == 3 and np.isclose(stat, ((o - e) ** 2 / e).sum())
    assert np.isclose(p, st.chisquare(o, e).pvalue)
    assert chi2_gof(np.array([5, 5, 0]), np.array([0.5, 0.5, 0.0]))[2] > 0.5  # an empty bin that expects 0
    assert chi2_gof(np.array([5, 5, 1]), np.array([0.5, 0.5, 0.0]))[2] == 0.0  # an impossible outcome seen
    assert chi2_gof(np.array([0, 10]), np.array([1.0, 0.0]))[2] == 0.0


def test_chi2_gof_false_alarm_rate_on_sparse_multinomials():
    """Multinomial samples of a long-tailed pmf: the merged test rejects at
    5% about 5% of the time (500 samples: binomial 99.9% band 2.3%..8.3%)."""
    from boardsweep.core.stats import chi2_gof

    rng = np.random.default_rng(640)
    probs = 0.8 ** np.arange(200) * 0.2
    probs /= probs.sum()
    rejected = sum(chi2_gof(rng.multinomial(300, probs), probs)[2] < 0.05 for _ in range(500))
    lo, hi = st.binom.ppf([0.0005, 0.9995], 500, 0.05)
    assert lo <= rejected <= hi


# --- power: what an "agree" could have missed ---------------------------------------------


def test_t_power_is_the_noncentral_t_tail_and_the_level_at_zero_bias():
    from boardsweep.core.power import t_power

    assert t_power(0.0, 1.0, 7, 0.05) == pytest.approx(0.05, rel=1e-9)
    c = st.t.ppf(1 - 0.01 / 2, 5)
    want = st.nct.sf(c, 5, 3.0) + st.nct.cdf(-c, 5, 3.0)
    assert t_power(0.6, 0.2, 5, 0.01) == pytest.approx(want, rel=1e-7)
    assert np.isnan(t_power(1.0, 1.0, 0, 0.05)) and np.isnan(t_power(1.0, np.nan, 5, 0.05))


@pytest.mark.parametrize("df", [3, 7, 15, 3999])
def test_detectable_bias_has_the_stated_power(df):
    from boardsweep.core.power import detectable_bias, t_power

    level = 0.01 / 240  # a Holm family of 240 tests at 1%
    d = detectable_bias(np.array([0.5, 2.0]), df, level)
    assert d[1] == pytest.approx(4 * d[0], rel=1e-8)  # in the estimate's units: proportional to the s.e.
    assert t_power(d, [0.5, 2.0], df, level) == pytest.approx([0.8, 0.8], abs=1e-6)
    # with many df it tends to the normal answer z(1 - level/2) + z(power)
    if df > 1000:
        assert d[0] / 0.5 == pytest.approx(st.norm.isf(level / 2) + st.norm.ppf(0.8), rel=2e-3)
    assert np.isnan(detectable_bias(np.nan, df, level)) and np.isnan(detectable_bias(1.0, 0, level))


@pytest.mark.parametrize("replicates", [4, 8, 16])
def test_a_planted_bias_at_the_stated_size_is_detected_80_percent_of_the_time(replicates):
    """Synthetic replicates (normal, fixed seed) of an estimator biased by
    the detectable bias its own s.e. states: the two-sided t test at Holm's
    least level rejects in about 80% of sweeps, within the binomial error.
    The s.e. stated is from the true spread; each sweep estimates its own."""
    from boardsweep.core.power import detectable_bias
    from boardsweep.core.stats import t_test

    level, sweeps, sd = 0.01 / 80, 4000, 3.0
    se_true = sd / np.sqrt(replicates)
    bias = float(detectable_bias(se_true, replicates - 1, level))
    x = np.random.default_rng(35 + replicates).normal(1.0 + bias, sd, (sweeps, replicates))
    se = x.std(axis=1, ddof=1) / np.sqrt(replicates)
    _, p = t_test(x.mean(axis=1), se, replicates - 1, 1.0)
    hits = int((p < level).sum())
    lo, hi = st.binom.ppf([0.0005, 0.9995], sweeps, 0.8)
    assert lo <= hits <= hi, (hits, bias)
    # and at zero bias it keeps its level
    x0 = np.random.default_rng(1).normal(1.0, sd, (sweeps, replicates))
    _, p0 = t_test(x0.mean(axis=1), x0.std(axis=1, ddof=1) / np.sqrt(replicates), replicates - 1, 1.0)
    assert (p0 < level).sum() <= st.binom.ppf(0.999, sweeps, level)


def test_replicates_for_bias_answers_the_reverse_question():
    from boardsweep.core.power import detectable_bias, replicates_for_bias

    level = 0.01 / 80
    r = replicates_for_bias(3.0, 1.0, level)
    assert float(detectable_bias(3.0 / np.sqrt(r), r - 1, level)) <= 1.0
    assert float(detectable_bias(3.0 / np.sqrt(r - 1), r - 2, level)) > 1.0
    assert replicates_for_bias(3.0, 1e-6, level, most=1000) is None
    with pytest.raises(ValueError):
        replicates_for_bias(0.0, 1.0, level)


# --- intervals of proportions (shares, histogram bins) ------------------------------------

#: Expected counts per bin of the coverage test's distribution at N_GAMES games
#: (most bins small: where Wald's interval fails and Wilson's dips).
EXPECTED = np.array([0.05, 0.1, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 10.0, 20.0, 50.0])
N_GAMES = 400
DRAWS = 4000


def _coverage_draws(seed: int = 35):
    """DRAWS multinomial histograms of N_GAMES games: the counts and the true bin probabilities."""
    p = np.append(EXPECTED / N_GAMES, 1.0 - EXPECTED.sum() / N_GAMES)
    counts = np.random.default_rng(seed).multinomial(N_GAMES, p, size=DRAWS)
    return counts, p


def test_proportion_interval_is_clopper_pearson():
    """The ends are scipy's exact binomial interval; 0 and all are handled."""
    from boardsweep.core.stats import proportion_interval

    k, n = np.array([0, 1, 3, 50, 99, 100, 4000]), np.array([100, 100, 10, 100, 100, 100, 4000])
    low, high = proportion_interval(k, n)
    for i in range(len(k)):
        ci = st.binomtest(int(k[i]), int(n[i])).proportion_ci(0.95, method="exact")
        assert low[i] == pytest.approx(ci.low, rel=1e-7, abs=1e-15)  # scipy solves to ~1e-9
        assert high[i] == pytest.approx(ci.high, rel=1e-7, abs=1e-15)
    assert low[0] == 0.0 < high[0] and low[5] < 1.0 == high[5]  # never [0, 0] or [1, 1]
    assert high[0] == pytest.approx(1 - 0.025 ** (1 / 100)) and low[6] == pytest.approx(0.025 ** (1 / 4000))
    assert np.isnan(proportion_interval(1, 0)[0]) and np.isnan(proportion_interval(np.nan, 10)[1])


def test_per_bin_intervals_cover_at_the_stated_level_even_for_small_counts():
    """4,000 histograms of 400 games over 15 bins (expected counts 0.05 to 50,
    eleven of them 5 or less), seed 35: every bin's exact binomial 95% interval
    covers its true probability in at least 95% of draws, within 4 binomial
    s.e. of the coverage estimate (sqrt(0.95 x 0.05 / 4000) = 0.0034); Wald's
    (estimate -+ 1.96 s.e.) does not where the count is small."""
    from boardsweep.core.stats import proportion_interval, pooled_unit_stderr

    counts, p = _coverage_draws()
    low, high = proportion_interval(counts, N_GAMES)
    covered = (low <= p) & (p <= high)
    tol = 4 * np.sqrt(0.95 * 0.05 / DRAWS)
    per_bin = covered.mean(axis=0)
    assert np.all(per_bin >= 0.95 - tol), per_bin
    small = EXPECTED <= 5
    assert covered[:, :-1][:, small].mean() >= 0.95 - tol / np.sqrt(small.sum())
    _, se, _ = pooled_unit_stderr(counts, counts, N_GAMES)
    est = counts / N_GAMES
    wald = (est - 1.96 * se <= p) & (p <= est + 1.96 * se)
    assert wald[:, :-1][:, small].mean() < 0.85  # Wald: 0 of the draws where a bin stayed empty
    assert per_bin[-2] <= 0.975  # not needlessly wide once the count is large (50 expected)


def test_proportion_test_reads_a_share_every_game_had_exactly():
    """One-player Chutes and Ladders: every game is won, the exact share is
    0.9999999999999973 (24 ulps below 1): not flagged (p = 1, z = 0).  Against a
    share of 0.99, 4,000 wins of 4,000 are impossible (p = 2 x 0.99^4000)."""
    from boardsweep.core.stats import proportion_test, same_value

    z, p = proportion_test([4000, 4000, 0, 0], 4000, 0.0, 3999, [0.9999999999999973, 0.99, 1e-300, 0.01])
    assert p[0] == 1.0 and z[0] == 0.0 and p[2] == 1.0 and z[2] == 0.0
    assert p[1] == pytest.approx(2 * 0.99**4000) and z[1] > 8 and z[3] < -8
    z, p = proportion_test(30, 100, np.sqrt(0.3 * 0.7 / 100), 99, 0.3)  # s.e. > 0: the t test
    assert z == pytest.approx(0.0, abs=1e-12) and p == pytest.approx(1.0)
    assert same_value(1.0, 0.9999999999999973) and not same_value(1.0, 1 - 1e-12)
    assert not same_value(np.nan, np.nan) and same_value(0.0, 0.0)


# --- variance per label: the paired deck test, the effective sample size -------------------


def test_paired_test_is_scipys_paired_t_and_ignores_the_between_spread():
    """Replicates whose environments differ widely (between s.d. 1) but each
    estimate its own within 0.01: the paired t sees a 0.01 bias that the
    total spread hides; it equals scipy's ttest_rel."""
    from boardsweep.core.stats import paired_test

    rng = np.random.default_rng(35)
    own = rng.normal(0.0, 1.0, size=(8, 3))  # each replicate's exact answer (its deck order)
    est = own + 0.01 + rng.normal(0.0, 0.002, size=own.shape)
    res = paired_test(est, own, axis=0)
    ref = st.ttest_rel(est, own, axis=0)
    assert np.allclose(res["t"], ref.statistic, rtol=1e-12) and np.allclose(res["p"], ref.pvalue, rtol=1e-9)
    assert np.all(res["df"] == 7) and np.allclose(res["sd"], (est - own).std(axis=0, ddof=1))
    assert np.all(res["p"] < 1e-4)  # the bias is seen
    total_z = (est.mean(0) - own.mean(0)) / (est.std(0, ddof=1) / np.sqrt(8))
    assert np.all(np.abs(total_z) < 3)  # dividing by the total replicate s.d. would not see it
    assert np.isnan(paired_test([1.0], [0.5])["t"]) and np.isnan(paired_test([1.0, np.nan], [0.5, 0.5])["sd"])


def test_effective_sample_size_of_independent_units_is_their_number():
    """400 replicates of 1,000 independent 0/1 units (seed 35): arviz's ess =
    f (1 - f) / mcse^2 estimates the 400,000 units within the sampling error of
    a variance from 400 replicates (relative s.e. sqrt(2 / 399) = 7%)."""
    from boardsweep.core.stats import effective_sample_size

    reps = np.random.default_rng(35).binomial(1000, 0.3, size=400) / 1000
    mcse = reps.std(ddof=1) / np.sqrt(400)
    ess = float(effective_sample_size(0.3 * 0.7, mcse))
    assert abs(ess / 400_000 - 1) < 3 * np.sqrt(2 / 399)
    assert np.isnan(effective_sample_size(0.21, 0.0)) and np.isnan(effective_sample_size(np.nan, 0.1))


def test_the_exact_share_test_keeps_its_size_with_few_expected_wins():
    """The size of the share test at nominal 1%, computed exactly (the sum of
    the binomial pmf over the counts it rejects), for 10 to 4,000 games and
    0.5 to 20 expected wins: at most 1% everywhere.  The z test on the pooled
    s.e. that it replaces rejected far too often there (7.3% measured)."""
    from boardsweep.core.stats import pooled_unit_stderr, proportion_test, t_test

    worst_old = 0.0
    for n in (10, 50, 200, 1000, 4000):
        for expected in (0.5, 1, 2, 5, 20):
            p0 = expected / n
            if p0 >= 1:
                continue
            k = np.arange(n + 1)
            pmf = st.binom.pmf(k, n, p0)
            _, p = proportion_test(k, n, np.nan, n - 1, p0)
            assert pmf[p < 0.01].sum() <= 0.01 + 1e-12, (n, expected)
            assert np.all(p[np.isclose(k, n * p0)] == 1.0)  # the expected count itself agrees
            _, se, df = pooled_unit_stderr(k, k, n)
            _, p_old = t_test(k / n, se, df, p0)
            worst_old = max(worst_old, pmf[np.nan_to_num(p_old, nan=1.0) < 0.01].sum())
    assert worst_old > 0.03  # the z test (where k > 0): over 3x its nominal size where few wins are expected


def test_a_spread_of_round_off_is_read_as_zero():
    """Two replicates with equal counts and events: ``c - R_hat e`` is float
    round-off for about one count in seven (1e-12 of a count, an s.e. of
    ~1e-17 and z ~ 1e14 before); it is exactly 0 now.  So is the per-game
    variance of games that all took 7 rolls.  A real spread of one count
    in 10^12 stays."""
    from boardsweep.core.stats import ROUNDOFF, pooled_unit_stderr, replicate_ratio_stderr

    counts = np.arange(1.0, 20000.0)
    num, den = np.stack([counts, counts]), np.array([100000.0, 100000.0])
    old = np.abs(counts - (2 * counts) / 200000.0 * 100000.0)
    assert (old > 0).sum() > 1000  # round-off, where the old s.e. was positive
    _, _, se, df = replicate_ratio_stderr(num, den, axis=0)
    assert (se == 0).all() and (df == 1).all()
    est, _, se, _ = replicate_ratio_stderr(np.array([1e12, 1e12 + 1]), np.array([1e13, 1e13]))
    assert se > ROUNDOFF * est  # a real spread of one count in 10^12
    n = np.arange(2.0, 5000.0)
    sd, se, _ = pooled_unit_stderr(7 * n, 49 * n, n)
    assert (sd == 0).all() and (se == 0).all()
    sd, _, _ = pooled_unit_stderr(7 * n + 1, 49 * n + 15, n + 1)  # one game of 8 rolls among 7s
    assert (sd > 0).all()


def test_share_difference_by_hand():
    """Two seat orders of 10 and 20 games: d = mean of (a - b)/n, se from the per-game variance."""
    out = share_difference(np.array([6, 8]), np.array([3, 10]), np.array([10, 20]))
    d1, d2 = 0.3, -0.1
    v1 = (0.9 - d1 ** 2) * 10 / 9 / 10
    v2 = (0.9 - d2 ** 2) * 20 / 19 / 20
    assert out["difference"] == pytest.approx((d1 + d2) / 2)
    assert out["se"] == pytest.approx(np.sqrt(v1 + v2) / 2)
    assert out["df"] == 28
    assert out["z"] == pytest.approx(out["difference"] / out["se"])


def test_share_difference_covers_a_planted_difference():
    """Games drawn with planted shares (A 0.45, B 0.35, tie 0.2 in one seat order;
    A 0.40, B 0.40 in the other: true difference 0.05): over 4,000 experiments
    the 95% interval covers 0.05 at its level, z of the truth is N(0, 1) and
    the test of 0 rejects at its power, each within 5 standard errors."""
    rng = np.random.default_rng(53)
    trials, n = 4000, np.array([300, 500])
    first = rng.multinomial(n[0], [0.45, 0.35, 0.20], size=trials)
    second = rng.multinomial(n[1], [0.40, 0.40, 0.20], size=trials)
    a = np.stack([first[:, 0], second[:, 0]], axis=-1)
    b = np.stack([first[:, 1], second[:, 1]], axis=-1)
    out = share_difference(a, b, np.broadcast_to(n, a.shape))
    truth = (0.10 + 0.0) / 2
    covered = np.mean((out["low"] <= truth) & (truth <= out["high"]))
    assert abs(covered - 0.95) < 5 * np.sqrt(0.95 * 0.05 / trials)
    z = (out["difference"] - truth) / out["se"]
    assert abs(z.mean()) < 5 / np.sqrt(trials)
    assert abs(z.std() - 1) < 5 / np.sqrt(2 * trials)
    # the test of no difference rejects as often as its power at the true s.e. says
    true_se = np.sqrt((0.80 - 0.10 ** 2) / 300 + 0.80 / 500) / 2
    power = st.norm.cdf(truth / true_se - st.norm.ppf(0.975)) + st.norm.cdf(-truth / true_se - st.norm.ppf(0.975))
    rejected = np.mean(out["p"] < 0.05)
    assert abs(rejected - power) < 5 * np.sqrt(power * (1 - power) / trials)
