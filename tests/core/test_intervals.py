"""95% intervals cover the exact answer 95% of the time (real simulator, many seeds).

Shut the Box with two 2-sided dice (optimal play, E[T] = 5.673651 exactly)
is played under 1,000 seeds.  Each trial is one small run, estimated as a
sweep estimates it:

* per game, pooled: 4 x 250 games, ``s`` from the sums of rolls and of squared
  rolls, ``t(N - 1)`` interval;
* per replicate: R = 4 replicates of 250 games, ratio of sums, ``t(3)``
  interval from the spread of the replicates.

With 1,000 trials the number of covering intervals is binomial with
sd sqrt(1000 * 0.95 * 0.05) = 6.9; the accepted band 930..970 (93%..97%) is
5.8 sd wide.  The normal 1.96 interval with R = 4 (85.5% true coverage) is
shown to fall below it: the test can fail.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from boardsweep.core.games import get_game
from boardsweep.core.stats import Z95, pooled_unit_stderr, replicate_ratio_stderr, t_interval

TRIALS = 1000
GAMES = 250  # per replicate: the mean of 250-1000 games of a skewed count is close to normal
LOW, HIGH = 930, 970


@pytest.fixture(scope="module")
def runs():
    """Per trial and replicate: (rolls_sum, rolls_sq_sum) of GAMES games."""
    game = get_game("shut_the_box")
    params = game.resolve_params({"dice_sides": 2, "policy": "optimal"})
    exact = float(game.exact(params, {"games": 1}, np.array([1]))["exact_expected_rolls"])
    out = np.zeros((TRIALS, 4, 2))
    for k in range(TRIALS):
        for r in range(4):
            sim = game.simulate(params, np.random.SeedSequence([2026, k, r]), {"games": GAMES}, np.array([GAMES]))
            out[k, r] = sim["rolls_sum"][-1], sim["rolls_sq_sum"][-1]
    return out, exact


def test_exact_answer_is_the_published_one(runs):
    assert runs[1] == pytest.approx(5.673651, abs=5e-7)


def test_pooled_per_game_interval_covers_95_percent(runs):
    sums, exact = runs
    total, squares = sums[:, :, 0].sum(1), sums[:, :, 1].sum(1)
    _, se, df = pooled_unit_stderr(total, squares, np.full(TRIALS, 4.0 * GAMES))
    low, high = t_interval(total / (4 * GAMES), se, df)
    covered = int(((low <= exact) & (exact <= high)).sum())
    assert LOW <= covered <= HIGH, covered


def test_replicate_t_interval_covers_95_percent_with_four_replicates(runs):
    sums, exact = runs
    est, _, se, df = replicate_ratio_stderr(sums[:, :, 0].T, np.full(4, float(GAMES)), axis=0)
    assert np.all(df == 3)
    low, high = t_interval(est, se, df)
    covered = int(((low <= exact) & (exact <= high)).sum())
    assert LOW <= covered <= HIGH, covered
    # the 1.96 interval with 4 replicates covers about P(|t_3| < 1.96) = 85.5%: too few
    normal = int((np.abs(est - exact) <= Z95 * se).sum())
    assert normal < LOW and abs(normal - 1000 * (1 - 2 * st.t.sf(Z95, 3))) < 5 * np.sqrt(1000 * 0.15)
