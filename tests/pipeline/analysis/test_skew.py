"""Per-game means of skewed games from few games (pipeline/analysis/skew.py),
against the truth: the games' own kernels, one call each with a checkpoint
every N games, so that its increments are independent batches of N games,
and the exact expected length.

With 10,000 batches a coverage is known to about 0.24 points (binomial
s.d.); each claim below is at least 3 s.d. inside what was measured."""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.core import stats
from boardsweep.core.games import game_names, get_game
from boardsweep.pipeline.analysis import skew

BATCHES = 10_000
GAMES = {  # game -> (params, sum, exact mean, exact variance or None)
    "shut_the_box": ({"dice_sides": 6, "policy": "optimal"}, "rolls_sum", "exact_expected_rolls",
                     "exact_variance_rolls"),
    "chutes_ladders": ({"players": 1}, "rounds_sum", "exact_expected_rounds", None),
}


def _batches(name: str, n: int, seed: int) -> dict[str, np.ndarray]:
    """``BATCHES`` independent batches of ``n`` games: each batch's histogram, sum and the exact answers."""
    game = get_game(name)
    params, total, mean, var = GAMES[name]
    p = game.resolve_params(params)
    sim = game.simulate(p, np.random.SeedSequence([seed, n]), game.resolve_run_shape({"games": n * BATCHES}),
                        np.arange(n, n * BATCHES + 1, n))
    exact = game.exact(p, game.resolve_run_shape({"games": n}), np.array([n]))
    hist = np.diff(np.asarray(sim["hist"], dtype=np.float64), axis=0, prepend=0.0)
    return {"hist": hist, "sum": np.diff(np.asarray(sim[total], dtype=np.float64), prepend=0.0),
            "mu": float(np.ravel(exact[mean])[0]), "var": float(np.ravel(exact[var])[0]) if var else None}


def _intervals(b: dict, n: int):
    """The product's skewness-corrected interval and the t interval of each batch's mean."""
    m = skew.hist_moments(b["hist"], np.arange(b["hist"].shape[1]))
    assert np.allclose(m["mean"], b["sum"] / n, rtol=1e-12)  # the histogram holds every game
    _, se, df = stats.pooled_unit_stderr(b["sum"], n * m["m2"] + b["sum"] ** 2 / n, np.full(BATCHES, float(n)))
    est = b["sum"] / n
    return skew.hall_interval(est, se, df, m["n"], m["m2"], m["m3"], 0.95), stats.t_interval(est, se, df, 0.95), m


def _covers(ends, mu: float) -> float:
    return float(((ends[0] <= mu) & (mu <= ends[1])).mean())


@pytest.mark.parametrize("name", [pytest.param(g, marks=pytest.mark.skipif(
    g not in game_names(), reason=f"{g} is not installed")) for g in sorted(GAMES)])
def test_skewness_corrected_interval_covers_more_than_t_at_16_games_and_95_percent_at_64(name):
    """Measured (seed 42): at 16 games Hall's interval covers 93.9% (Shut the
    Box) and 94.2% (Chutes and Ladders), the t interval 91.2% and 92.2% (its
    misses nearly all with the truth above it); at 64 games 94.85% and
    94.8% (t: 93.4%, 93.7%).  Truth above the interval at 16 games: 4.4%
    and 4.3% (t: 8.2%, 7.2%).  Claimed: at least 93.2% at 16 games, at least
    94.1% at 64; the t interval falls short of the first."""
    for n, floor in ((16, 0.932), (64, 0.941)):
        b = _batches(name, n, 42)
        hall, t, _ = _intervals(b, n)
        assert _covers(hall, b["mu"]) >= floor, (n, _covers(hall, b["mu"]))
        if n == 16:
            assert _covers(t, b["mu"]) < floor - 0.007, _covers(t, b["mu"])  # 3 s.d. below the claim
            # the t interval misses mostly with the truth above it (8% at 16 games); Hall's far less often
            above, above_t = (b["mu"] > hall[1]).mean(), (b["mu"] > t[1]).mean()
            assert above < above_t - 4 * np.sqrt(above_t / BATCHES), (above, above_t)


def test_se_df_is_nearer_the_true_spread_of_the_variance_than_normal_games():
    """Shut the Box at 160 games: the true Var(s^2 / sigma^2) over 10,000
    batches (sigma^2 the exact variance) is 0.057, 4.5 times the normal
    2 / (N - 1) = 0.0126 that df = 159 implies; ``2 / se_df`` (median over
    batches, from the kurtosis each batch sees) is 0.040."""
    n = 160
    b = _batches("shut_the_box", n, 7)
    _, _, m = _intervals(b, n)
    truth = float((m["m2"] * n / (n - 1) / b["var"]).var())
    nu = skew.se_df(np.full(BATCHES, n - 1.0), m["n"], m["m2"], m["m4"])
    assert truth > 3 * 2 / (n - 1)
    assert 2 / (n - 1) < 2 / np.median(nu) < truth
    assert 2 / np.median(nu) > 0.5 * truth
