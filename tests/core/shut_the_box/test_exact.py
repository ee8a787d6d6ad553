"""Exact Shut the Box: reference values, Bellman optimality, chain moments and pmf."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from boardsweep.core.shut_the_box import rules, solve


def _brute_force_value(n: int, sweeps: int = 5000) -> float:
    """Plain-Python value iteration of V(s) = 1 + mean_o min_a V(s ^ bit a)."""
    goal = (1 << (2 * n)) - 1
    V = [0.0] * (goal + 1)
    rolls = list(itertools.product(range(1, n + 1), repeat=2))
    for _ in range(sweeps):
        delta = 0.0
        for s in range(goal):
            new = 1.0 + sum(
                min(V[s ^ (1 << (a - 1))] for a in (x, y, x + y)) for x, y in rolls
            ) / len(rolls)
            delta = max(delta, abs(new - V[s]))
            V[s] = new
        if delta < 1e-13:
            break
    return V[0]


def test_four_card_coin_check():
    # two fair coins, x, y in {1, 2}, cards 1..4: the PE640 write-up's checkpoint
    assert round(solve.solve_optimal(2).value[0], 6) == 5.673651


def test_pe640_answer():
    assert round(solve.solve_optimal(6).value[0], 6) == 50.317928


@pytest.mark.parametrize("n", [2, 3])
def test_matches_plain_value_iteration(n):
    assert solve.solve_optimal(n).value[0] == pytest.approx(_brute_force_value(n), abs=1e-10)


@pytest.mark.parametrize("n", [2, 4, 6, 8])
def test_bellman_equation_holds(n):
    sol = solve.solve_optimal(n)
    assert sol.value[-1] == 0.0
    assert solve.bellman_residual(n) < 1e-12 * sol.value.max()


@pytest.mark.parametrize("n", [3, 6])
def test_policy_table_is_admissible_and_consistent(n):
    sol = solve.solve_optimal(n)
    cand = rules.candidates(n)
    assert sol.policy.shape == (rules.n_states(n), n * n)
    assert np.all((sol.policy[:, :, None] == cand[None]).any(axis=2))
    # the table's own value is the optimal value
    mean, _ = solve.moments(n, "optimal")
    np.testing.assert_allclose(mean, sol.value[:-1], rtol=1e-11, atol=0)


@pytest.mark.parametrize("n", [3, 6, 8])
def test_policy_does_not_depend_on_the_last_bits_of_the_values(n):
    """Another CPU's rounding moves V by a few ulps; the table must not move."""
    sol = solve.solve_optimal(n)
    V = sol.value
    rng = np.random.default_rng(n)
    for ulps in (1, 4, 64):
        shift = rng.integers(-ulps, ulps + 1, V.shape)
        perturbed = V + shift * np.spacing(V)
        assert not np.array_equal(perturbed, V)
        np.testing.assert_array_equal(solve.decide_policy(n, perturbed), sol.policy)


def test_exact_ties_go_to_the_greedy_preference():
    """n = 3, cards 1..6 with 1, 2, 3 on (state 7): after rolling (1, 2) turning
    on 3 or 2 leads to states of exactly equal value; the rule takes x+y = 3."""
    sol = solve.solve_optimal(3)
    V = sol.value
    outcome = 1  # (x, y) = (1, 2)
    assert tuple(rules.candidates(3)[outcome]) == (3, 2, 1)
    assert abs(V[7 ^ (1 << 2)] - V[7 ^ (1 << 1)]) <= solve.TIE_RTOL * V.max()
    assert sol.policy[7, outcome] == 3


@pytest.mark.parametrize("n", [3, 5, 6])
def test_optimal_beats_the_baselines_everywhere(n):
    opt = solve.moments(n, "optimal")[0]
    for policy in ("greedy", "random"):
        assert np.all(opt <= solve.moments(n, policy)[0] * (1 + 1e-12))


def test_iterative_solver_agrees_with_direct(monkeypatch):
    n = 5  # 1023 transient states: solved directly by default
    direct = {p: solve.moments(n, p) for p in solve.POLICIES}
    solve.moments.cache_clear()
    monkeypatch.setattr(solve, "DIRECT_MAX_STATES", 0)
    try:
        for p in solve.POLICIES:
            m, v = solve.moments(n, p)
            np.testing.assert_allclose(m, direct[p][0], rtol=1e-11)
            np.testing.assert_allclose(v, direct[p][1], rtol=1e-9)
    finally:
        solve.moments.cache_clear()


@pytest.mark.parametrize(
    "n, policy",
    [(n, p) for n in (2, 3, 4, 6) for p in ("optimal", "greedy")] + [(2, "random"), (3, "random"), (4, "random")],
)
def test_pmf_sums_to_one_and_matches_moments(n, policy):
    pmf, tail = solve.rolls_pmf(n, policy)
    assert tail < 1e-12
    assert np.all(pmf >= 0)
    assert pmf.sum() + tail == pytest.approx(1.0, abs=1e-13)
    t = np.arange(pmf.shape[0])
    mean, var = solve.moments(n, policy)
    # the truncated tail (mass < 1e-12 beyond the horizon) moves the mean by < 1e-8
    assert (t * pmf).sum() == pytest.approx(mean[0], abs=1e-8 * max(1.0, mean[0]))
    pmf_var = (t * t * pmf).sum() - (t * pmf).sum() ** 2
    assert pmf_var == pytest.approx(var[0], rel=1e-8)
    # no game shorter than the number of cards, and parity: T = 2n (mod 2)
    assert np.all(pmf[: 2 * n] == 0)
    assert np.all(pmf[1::2] == 0)


def test_binned_pmf_has_overflow_bin():
    b = solve.binned_pmf(4, "random", 64)
    pmf, _ = solve.rolls_pmf(4, "random")
    assert b.shape == (64,)
    np.testing.assert_allclose(b[:63], pmf[:63], rtol=1e-9, atol=1e-15)
    assert b.sum() == pytest.approx(1.0, abs=1e-13)
    assert b[-1] == pytest.approx(pmf[63:].sum(), abs=1e-12)


def test_quantiles():
    pmf = np.array([0.0, 0.5, 0.25, 0.25])
    np.testing.assert_array_equal(solve.quantiles(pmf, np.array([0.5, 0.6, 1.0])), [1, 2, 3])
    assert np.isnan(solve.quantiles(pmf[:2], np.array([0.9])))[0]


@pytest.mark.parametrize("n", [1, 9])
def test_exact_limits(n):
    with pytest.raises(ValueError):
        solve.solve_optimal(n)
