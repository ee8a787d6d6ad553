"""The verdict's false-alarm rate on correct simulators, over many small sweeps.

One real sweep per game runs ``4 K`` replicates; its replicates, independent
by construction (each has its own seed), are cut into ``K`` small sweeps of
4 replicates each, and the whole verdict (every headline, label and grid
point, Holm over the family) is taken on each.  A correct simulator must
read "disagree" in at most a fraction ``alpha`` of them.  The verdicts of the
``K`` small sweeps are independent, so the number of false alarms is at most
Binomial(K, alpha); the assertion allows its 99.9% quantile.  Levels above
the product's 1% are checked too, where a mis-calibrated test would show:
at 1% a handful of sweeps could hide a rate several times too high.

Shut the Box exercises the pooled per-game t test and the chi-square
goodness of fit of the histogram (bins merged to expected counts >= 5);
Monopoly the t test with R - 1 = 3 degrees of freedom on 40 frequencies;
the money game the same on its 21 landing frequencies.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from boardsweep.pipeline.analysis import headlines
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.store import load_sweep
from boardsweep.pipeline.spec.parse import parse_spec

from specs import spec_toml  # tests/support is on sys.path

pytestmark = pytest.mark.slow

SWEEPS = 40  # small sweeps per game
REPLICATES = 4  # replicates per small sweep
LEVELS = (0.01, 0.05, 0.2)

SHAPES = {
    "shut_the_box": dict(grid={"dice_sides": [3, 4], "policy": ["optimal", "greedy", "random"]},
                         run={"games": 400}),
    "monopoly": dict(params={"tally": "per_roll"}, grid={"dice_sides": [4, 6], "jail_strategy": ["short", "long"]},
                     run={"games": 1, "players": 1, "turns": 4000}),
    # where nobody retires (never-buy, a Chance that only pays): its landing reference holds
    "hk_monopoly": dict(params={"buy_policy": "never", "chance": "uniform:10:200:10"},
                        grid={"players": [2, 4], "jail_strategy": ["short", "long"]}, run={"games": 500}),
}


def _small_sweeps(tmp_path, cluster, game: str) -> list:
    shape = SHAPES[game]
    text = spec_toml(game, name=game, seed=2022, checkpoints={"count": 2},
                     tasks={"replicates_per_task": 32}, grid=shape["grid"], params=shape.get("params"),
                     run={**shape["run"], "replicates": SWEEPS * REPLICATES})
    url = str(tmp_path / f"{game}.zarr")
    assert run_sweep(parse_spec(text, f"{game}.toml"), url, scheduler=cluster).complete
    ds = load_sweep(url, check=False)
    return [ds.isel(replicate=slice(k * REPLICATES, (k + 1) * REPLICATES)) for k in range(SWEEPS)]


@pytest.mark.parametrize("game", sorted(SHAPES))
def test_false_alarm_rate_is_at_most_the_stated_level(tmp_path, cluster2, game):
    alarms = {alpha: 0 for alpha in LEVELS}
    tests = None
    for small in _small_sweeps(tmp_path, cluster2, game):
        found = headlines.estimates(small)
        table = headlines.tests(small, found)
        tests = len(table) if tests is None else tests
        assert len(table) == tests and tests >= 8  # every point is tested in every small sweep
        for alpha in LEVELS:
            alarms[alpha] += bool(headlines.verdict(small, alpha=alpha, found=found)["flagged"])
    for alpha, count in alarms.items():
        bound = st.binom.ppf(0.999, SWEEPS, alpha)
        assert count <= bound, f"{alarms}: {count} of {SWEEPS} correct sweeps disagree at family-wise {alpha}"
    # Holm is conservative, never anti-conservative: the count cannot grow as alpha shrinks
    assert alarms[0.01] <= alarms[0.05] <= alarms[0.2]


def test_the_goodness_of_fit_is_calibrated_where_bins_are_sparse():
    """Pearson's chi-square with bins merged to expected counts >= 5 on the
    random policy at 6 sides (most of the 1,024 bins expect fewer than 5
    games at 160,000 games): under the exact multinomial its p-value is
    uniform, so each p < a happens with probability a."""
    from boardsweep.core.shut_the_box import solve
    from boardsweep.core.stats import chi2_gof

    pmf = solve.binned_pmf(6, "random", 1024)
    draws = np.random.default_rng(640).multinomial(160_000, pmf / pmf.sum(), size=400)
    result = np.array([chi2_gof(x, pmf) for x in draws])
    assert (result[:, 1] > 400).all()  # hundreds of merged bins: the sparse regime
    p = result[:, 2]
    for a in (0.05, 0.2, 0.5):
        lo, hi = st.binom.ppf([0.0005, 0.9995], len(p), a)
        assert lo <= (p < a).sum() <= hi, a
