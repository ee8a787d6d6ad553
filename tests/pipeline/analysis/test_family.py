"""The verdict's family (pipeline/analysis/family.py): the planner's ``m``
(``run --dry-run``'s "Holm's 1%/m") is the number of tests the run's verdict
then makes: one rule decides both, checked on real runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boardsweep.pipeline.analysis import headlines
from boardsweep.pipeline.analysis.family import in_family, spec_family
from boardsweep.pipeline.store import load_sweep
from boardsweep.pipeline.analysis.power import dry_run_lines, plan_run
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import load_spec, parse_spec

from specs import spec_toml  # tests/support is on sys.path

SWEEPS = Path(__file__).resolve().parents[3] / "sweeps"


def _small_quickstart():
    """sweeps/quickstart.toml's grid, params and seed with a small run shape."""
    big = load_spec(SWEEPS / "quickstart.toml")
    return parse_spec(spec_toml("monopoly", name="quickstart", seed=big.seed, params=big.fixed,
                                grid={k: list(v) for k, v in big.grid.items()},
                                run={"replicates": 4, "games": 2, "players": 1, "turns": 3000},
                                checkpoints={"count": 4}, tasks={"replicates_per_task": 4}), "quickstart.toml")


def test_the_quickstart_dry_run_states_the_verdicts_family():
    spec = load_spec(SWEEPS / "quickstart.toml")
    family = spec_family(spec)
    # 6 points with an exact answer (independent decks) x 40 labels (per_roll never counts Go To Jail)
    assert family["tests"] == 240 and family["tested_points"] == 6
    assert plan_run(spec)["tests"] == 240
    assert "Holm's 1%/240" in dry_run_lines(spec)[0]


@pytest.mark.parametrize("game", ["monopoly", "shut_the_box"])
def test_the_planned_family_is_the_run_verdicts(tmp_path, cluster2, game):
    if game == "monopoly":
        spec = _small_quickstart()
    else:
        spec = parse_spec(spec_toml("shut_the_box", seed=3, grid={"dice_sides": [3, 4, 6]},
                                    run={"replicates": 4, "games": 300}, checkpoints={"count": 3},
                                    tasks={"replicates_per_task": 4}), "stb.toml")
    url = str(tmp_path / f"{game}.zarr")
    assert run_sweep(spec, url, scheduler=cluster2).complete
    verdict = headlines.verdict(load_sweep(url, check=False))
    assert verdict["tests"] > 0
    assert plan_run(spec)["tests"] == spec_family(spec)["tests"] == verdict["tests"]
    assert spec_family(spec)["tested_points"] == verdict["tested_points"]


def test_the_rule():
    exact = np.array([0.1, np.nan, 0.2, 0.3, 0.4])
    se = np.array([0.01, 0.01, 0.0, 0.01, 0.01])
    df = np.array([3, 3, 3, 0, 3])
    assert in_family(exact, se, df).tolist() == [True, False, False, False, True]
    assert in_family(exact, se, df, share=True).tolist() == [True, False, True, True, True]
    count = np.array([10, 10, 10, 10, 9.9])
    assert in_family(exact, se, df, mean_count=count).tolist() == [True, False, False, False, False]


# --- ties: a spread of exactly 0 is decided, never read as z = 1e14, never dropped unsaid ---------

TIES = {  # shapes whose replicates tie on some labels at R = 2 (integer counts, equal denominators)
    "hk_monopoly": dict(params={"buy_policy": "never", "chance": "uniform:10:200:10"},
                        grid={"players": [2, 4]}, run={"games": 300}),
    "monopoly": dict(params={"tally": "per_turn"}, grid={"dice_sides": [4, 6]},
                     run={"games": 1, "players": 1, "turns": 3000}),
}
NUMERATOR = {"hk_monopoly": ("landings", "turns"), "monopoly": ("counts", "events")}


def _reference(game, params, shape, checkpoints) -> np.ndarray:
    """The frequency each label's test is against: the exact answer at the run's horizon."""
    exact = game.exact(params, shape, checkpoints)
    if "exact_horizon_frequency" in exact:
        return np.asarray(exact["exact_horizon_frequency"], dtype=float)
    counts = np.asarray(exact["exact_counts"], dtype=float)[-1]
    return counts / counts.sum()


def _family_sweeps(name: str, sweeps: int, reps: int, seed: int):
    """Per small sweep, the family's label tests (:func:`label_tests`) at every point, from kernel runs."""
    from boardsweep.core.games import get_game
    from boardsweep.core.stats import replicate_ratio_stderr
    from boardsweep.pipeline.analysis.family import label_tests
    from kernel_sweeps import points, replicates

    game, shape = get_game(name), TIES[name]
    params, run_shape, cps = points(name, shape["grid"], shape["run"], shape["params"])
    num_name, den_name = NUMERATOR[name]
    per_point = []
    for i, p in enumerate(params):
        arrays = replicates(game, p, run_shape, cps, sweeps * reps, seed + i)
        ref = _reference(game, p, run_shape, cps)
        num = arrays[num_name].reshape(sweeps, reps, -1)
        den = arrays[den_name].reshape(sweeps, reps)
        found = []
        for k in range(sweeps):
            est, _, se, df = replicate_ratio_stderr(num[k], den[k], axis=0)
            found.append(label_tests(est, se, df, ref, mean_count=num[k].mean(axis=0)))
        per_point.append(found)
    return [[pt[k] for pt in per_point] for k in range(sweeps)]


@pytest.mark.parametrize("name", sorted(TIES))
def test_ties_at_two_replicates_are_counted_not_false_alarms(name):
    """200 correct sweeps of R = 2 replicates (the game's own kernel, fresh
    seeds) through the verdict's label tests and Holm at family-wise 1%: the
    false alarms are Binomial(200, q) with q <= 1%, so at most its 99.9%
    quantile (5); tied labels (a spread of exactly 0, or of round-off) occur
    and are counted as not testable, never read as an infinite z."""
    from scipy import stats as st

    from boardsweep.core.stats import holm

    sweeps = _family_sweeps(name, 200, 2, 4200)
    alarms, untestable, tests, largest = 0, 0, 0, 0.0
    for found in sweeps:
        p = np.concatenate([f["p"] for f in found])
        z = np.concatenate([f["z"] for f in found])
        alarms += bool((holm(p[np.isfinite(p)]) < 0.01).any())
        untestable += int(sum(f["untestable"].sum() for f in found))
        tests += int(np.isfinite(p).sum())
        largest = max(largest, float(np.nanmax(np.abs(z))))
    assert alarms <= st.binom.ppf(0.999, 200, 0.01), (alarms, untestable)
    assert untestable > 0 and tests > 30 * 200  # ties happen, and are counted; the family stays large
    assert largest < 1e4  # t with df = 1 reaches a few thousand honestly; round-off reached 1e14
