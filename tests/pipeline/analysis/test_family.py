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
