"""One procedure per row (pipeline/analysis/headlines.py, intervals.py, skew.py):
the interval printed beside a test is that test's own, so "the exact answer
lies in the 95% interval" and "p >= 0.05" never contradict: z interval with
the z test on the exact CLT s.e., Hall's interval with Hall's test, the exact
binomial interval with the binomial test, t with t.  Checked on every tested
row of 200 sweeps per kind (Monopoly's own kernel for the z rows; exact
simulation of games for the others) and on one real sweep per game."""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.core import stats
from boardsweep.core.games import get_game
from boardsweep.pipeline.analysis import headlines, skew
from boardsweep.pipeline.analysis.clt import known_stderr
from boardsweep.pipeline.analysis.family import label_tests
from boardsweep.pipeline.analysis.intervals import frequency_interval
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import open_sweep

from kernel_sweeps import points, replicates
from specs import spec_toml

SWEEPS = 200
LEVEL = 0.95


def _contradictions(low, high, exact, p) -> tuple[int, int]:
    """(rows tested, rows where "inside the interval" and "p >= 1 - level" differ)."""
    tested = np.isfinite(p)
    inside = (low <= exact) & (exact <= high)
    return int(tested.sum()), int((inside != (p >= 1 - LEVEL))[tested].sum())


def test_z_rows_print_the_z_tests_own_interval():
    """Monopoly at R = 4, 10,000 turns, 2 points, 200 sweeps: on every z-tested
    label the z interval and the z test agree (0 contradictions); the t
    interval that was printed beside the z test contradicts it on some rows
    (the check can fail)."""
    game = get_game("monopoly")
    resolved, shape, cps = points("monopoly", {"dice_sides": [4, 6]}, {"games": 1, "players": 1, "turns": 10_000},
                                  {"tally": "per_roll", "jail_strategy": "long"})
    rows = bad = old_bad = z_rows = 0
    for i, p in enumerate(resolved):
        a = replicates(game, p, shape, cps, SWEEPS * 4, 5400 + i)
        a = {k: v.reshape(SWEEPS, 4, *v.shape[1:]) for k, v in a.items()}
        counts = np.asarray(game.exact(p, shape, cps)["exact_counts"], dtype=float)[-1]
        ref, variance = counts / counts.sum(), game.extras["asymptotic_variance"](p)["variance"]
        for k in range(SWEEPS):
            num, den = a["counts"][k], a["events"][k]
            est, _, se, df = stats.replicate_ratio_stderr(num, den, axis=0)
            known = known_stderr(variance, a["rolls"][k].sum(), ref, den.sum())
            use = np.isfinite(known) & (known > 0)
            total, mean = num.sum(axis=0), num.mean(axis=0)
            low, high = frequency_interval(est, se, df, total, den.sum(), mean, LEVEL, known=known)
            test = label_tests(est, np.where(use, known, se), np.where(use, np.inf, df), ref, mean_count=mean)
            n, b = _contradictions(low, high, ref, test["p"])
            rows, bad, z_rows = rows + n, bad + b, z_rows + int((use & test["tested"]).sum())
            t_low, t_high = frequency_interval(est, se, df, total, den.sum(), mean, LEVEL)
            old_bad += _contradictions(t_low, t_high, ref, test["p"])[1]
    assert z_rows > 0.8 * rows and rows > 10_000
    assert bad == 0, (bad, rows)
    assert old_bad > 0


def test_hall_rows_print_hall_tests_own_interval():
    """200 sweeps of 16-256 right-skewed games (geometric lengths, skewness
    about 2): Hall's interval at se_df and Hall's test at se_df agree on every
    row; a reference on either side of the mean."""
    rng = np.random.default_rng(77)
    bad = 0
    for _ in range(SWEEPS):
        n = int(rng.choice([16, 64, 256]))
        x = rng.geometric(0.1, size=n).astype(float)
        values, counts = np.unique(x, return_counts=True)
        m = skew.hist_moments(counts, values)
        est, sd = x.mean(), x.std(ddof=1)
        se, df = sd / np.sqrt(n), np.float64(n - 1)
        low, high, nu = skew.skew_interval(est, se, df, m, LEVEL)
        refs = est + se * rng.normal(0, 2.5, size=8)
        p = skew.hall_test(est, se, nu, m["n"], m["m2"], m["m3"], refs)
        bad += _contradictions(low, high, refs, p)[1]
    assert bad == 0


def test_share_and_t_rows_print_their_tests_own_interval():
    """The exact binomial interval and the binomial test (doubled smaller tail)
    at every count of 0..n for n in 1..60 and 200 references; the t interval
    and the t test at df 1, 3, 30 and 200 simulated references: no row where
    they differ."""
    refs = np.random.default_rng(3).uniform(0, 1, SWEEPS)
    bad = 0
    for n in range(1, 61):
        k = np.arange(n + 1, dtype=float)[:, None]
        low, high = stats.proportion_interval(k, n, LEVEL)
        _, p = stats.proportion_test(k, n, np.nan, np.nan, refs[None, :])
        bad += _contradictions(low, high, refs[None, :], p)[1]
    rng = np.random.default_rng(4)
    for df in (1.0, 3.0, 30.0):
        est, se = rng.normal(size=SWEEPS), rng.uniform(0.1, 2, SWEEPS)
        low, high = stats.t_interval(est, se, df, LEVEL)
        _, p = stats.t_test(est, se, df, refs)
        bad += _contradictions(low, high, refs, p)[1]
    assert bad == 0


@pytest.fixture(scope="module")
def monopoly_store(tmp_path_factory, cluster2):
    """One real Monopoly sweep: 2 points, 4 replicates of 10,000 turns (CLT z tests on most labels)."""
    text = spec_toml("monopoly", grid={"dice_sides": [4, 6]}, params={"tally": "per_roll"}, seed=54,
                     run={"replicates": 4, "games": 1, "players": 1, "turns": 10_000}, checkpoints={"count": 2})
    url = str(tmp_path_factory.mktemp("rows") / "rows.zarr")
    assert run_sweep(parse_spec(text, "rows.toml"), url, scheduler=cluster2).complete
    return open_sweep(url).load()


@pytest.mark.parametrize("which", ["monopoly_store", "box_store"])
def test_every_row_of_a_real_sweep_agrees_with_its_interval(which, request):
    """A real Monopoly sweep (z rows with the z interval) and the real Shut the
    Box store (Hall's rows, binomial rows): on every tested row of every
    headline "inside the interval" is "p >= 0.05"."""
    ds = request.getfixturevalue(which)
    found = headlines.estimates(ds)
    rows = bad = 0
    for est in found.values():
        if "p" not in est:
            continue
        b = [est[c].broadcast_like(est["estimate"]).values for c in ("low", "high", "exact", "p")]
        n, c = _contradictions(*b)
        rows, bad = rows + n, bad + c
    assert rows > 0 and bad == 0, (rows, bad)
    if which == "monopoly_store":
        assert found["frequency"].attrs["interval_z_rows"] > 0
