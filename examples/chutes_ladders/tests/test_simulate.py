"""Monte Carlo against the exact chain (5 standard errors, fixed seeds) and the
reproducibility promises of the per-game streams."""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.core.games import get_game
from chutes_ladders import exact

GAME = get_game("chutes_ladders")
MB = "milton_bradley"


def run(players: int, overshoot: str, games: int, seed: int, checkpoints=None):
    params = GAME.resolve_params({"players": players, "overshoot": overshoot})
    cps = np.array(checkpoints or [games], np.int64)
    return GAME.simulate(params, seed, {"games": games}, cps)


def test_one_player_exact_landing_mean_spins_within_5_se_of_the_chain():
    games = 20_000
    sim = run(1, "stay", games, seed=11)
    total, sq = sim["rounds_sum"][-1], sim["rounds_sq_sum"][-1]
    mean = total / games
    se = np.sqrt((sq / games - mean**2) / (games - 1))
    assert abs(mean - exact.expected_spins(MB, 6, "stay")) < 5 * se
    assert sim["wins"][-1, 0] == games and sim["capped"][-1] == 0


@pytest.mark.parametrize("overshoot", ["bounce", "any"])
def test_three_players_win_shares_and_length_distribution_within_5_se(overshoot):
    games = 20_000
    sim = run(3, overshoot, games, seed=5)
    shares = exact.win_shares(MB, 6, overshoot, 3)
    won = sim["wins"][-1, :3] / games
    assert np.all(np.abs(won - shares) < 5 * np.sqrt(shares * (1 - shares) / games))
    assert sim["wins"][-1, 3:].sum() == 0
    # the cdf of the game length at a few rounds, each a binomial share
    cdf_exact = np.cumsum(exact.rounds_pmf(MB, 6, overshoot, 3))
    cdf_sim = np.cumsum(sim["hist"][-1]) / games
    for r in (10, 15, 20, 30, 45):
        p = cdf_exact[r]
        assert abs(cdf_sim[r] - p) < 5 * np.sqrt(p * (1 - p) / games), r
    mean = sim["rounds_sum"][-1] / games
    se = np.sqrt((sim["rounds_sq_sum"][-1] / games - mean**2) / (games - 1))
    assert abs(mean - exact.expected_rounds(MB, 6, overshoot, 3)) < 5 * se


def test_same_seed_same_bits_and_checkpoints_do_not_change_the_games():
    a = run(4, "stay", 3000, seed=3)
    b = run(4, "stay", 3000, seed=3, checkpoints=[10, 500, 3000])
    c = run(4, "stay", 3000, seed=4)
    for name in a:
        assert a[name].dtype == np.int64
        assert np.array_equal(a[name][-1], b[name][-1]), name
    assert not np.array_equal(a["hist"], c["hist"])
    first = run(4, "stay", 500, seed=3)  # game g's stream depends on g only
    assert np.array_equal(first["hist"][-1], b["hist"][1])
