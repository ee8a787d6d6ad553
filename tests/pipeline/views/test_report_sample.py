"""``boardsweep report`` of a grid far larger than the shipped specs (issue 57: a
report of bounded size at any grid): its files are bounded, not proportional
to the grid (the per-point rows of a sample, :mod:`boardsweep.pipeline.views.report.sample`),
its verdict still counts every point, and ``--all`` writes every point's rows.

Two stores of the toy game, one long axis: ``N`` and ``10 N`` points of two
replicates each (every point with an exact answer: the verdict tests them all).
"""

from __future__ import annotations

import html
import json
import os

import numpy as np
import pandas as pd
import pytest

from boardsweep.pipeline.views.overview import ANSWER_ROWS
from boardsweep.pipeline.api import report as write_report
from boardsweep.pipeline.views.report.sample import NAMED_POINTS, TABLE_POINTS, sampled_axes

from clirun import run_cli  # tests/support is on sys.path
from specs import spec_toml

pytestmark = pytest.mark.slow  # two runs (1,200 and 12,000 points) and four reports: about 40 s

#: The smaller grid's points (dice_sides x rule); the larger has ten times as many.
N = 1_200
#: Grid points a block reads in the reports of the smaller grid: several blocks, as a large grid's.
BLOCK = 500


def _store(folder, points: int, scheduler: str) -> str:
    (folder / "t.toml").write_text(spec_toml(
        "toy", name="long", params={"size": 4},
        grid={"dice_sides": list(range(2, 2 + points // 2)), "rule": ["plain", "sticky"]},
        run={"replicates": 2, "games": 1, "turns": 100}, checkpoints={"count": 1}, tasks={"points_per_task": 2000}))
    store = str(folder / "t.zarr")
    assert run_cli("run", str(folder / "t.toml"), "--store", store, "--scheduler", scheduler, "-q") == 0
    return store


@pytest.fixture(scope="module")
def reports(tmp_path_factory, cluster2):
    small = _store(tmp_path_factory.mktemp("small"), N, cluster2)
    large = _store(tmp_path_factory.mktemp("large"), 10 * N, cluster2)
    out = tmp_path_factory.mktemp("reports")
    assert write_report(small, out / "small", block_points=BLOCK) is None  # read in blocks: the sample
    assert write_report(small, out / "small_all", block_points=BLOCK, every=True) is None
    assert run_cli("report", large, "--out", str(out / "large"), "-q") == 0  # more than one block of 10,000
    assert run_cli("report", small, "--out", str(out / "small_cli_all"), "--all", "-q") == 0
    return {"small_store": small, "large_store": large, **{name: out / name for name in
                                               ("small", "small_all", "large", "small_cli_all")}}


def _bytes(folder) -> int:
    return sum(os.path.getsize(folder / f) for f in os.listdir(folder) if (folder / f).is_file())


def _summary(folder) -> dict:
    return json.loads((folder / "summary.json").read_text())


def test_the_report_of_ten_times_the_grid_is_not_larger(reports):
    small, large = _bytes(reports["small"]), _bytes(reports["large"])
    assert large <= 1.5 * small, (small, large)  # the sample's rows, not the grid's: about the same bytes
    assert _bytes(reports["small_all"]) > 1.1 * small  # every row of even the small grid is more
    most = TABLE_POINTS + NAMED_POINTS + ANSWER_ROWS
    for name, points in (("small", N), ("large", 10 * N)):
        summary = _summary(reports[name])
        rows = len(pd.read_csv(reports[name] / "points.csv"))
        assert TABLE_POINTS // 2 < len(summary) == rows <= most, (name, rows)
        meta = json.loads((reports[name] / "report.json").read_text())
        assert meta["sample"]["points"] == rows and meta["sample"]["grid"] == points
        assert f"{rows:,} of the grid's {points:,} points" in html.unescape((reports[name] / "index.html").read_text())


def test_the_sample_is_evenly_spaced_with_the_ends_of_each_axis(reports):
    summary = _summary(reports["large"])
    dice = sorted({int(k.split(",")[0].split("=")[1]) for k in summary})
    assert dice[0] == 2 and dice[-1] == 1 + 10 * N // 2  # the first and last value of the long axis
    kept = sampled_axes((10 * N // 2, 2))
    assert set(dice) >= set((kept[0] + 2).tolist())  # every value of the sub-grid (and the named points)
    steps = np.diff(kept[0])
    assert steps.max() - steps.min() <= 1


def test_the_verdict_counts_every_point_of_the_grid(reports, capsys):
    for store, name, points in ((reports["large_store"], "large", 10 * N), (reports["small_store"], "small", N)):
        capsys.readouterr()
        assert run_cli("query", store, "--summary", "--format", "json", "-q") == 0
        told = json.loads(capsys.readouterr().out)["verdict"]
        verdict = json.loads((reports[name] / "report.json").read_text())["verdict"]
        assert verdict["points"] == points and verdict["with_reference"] == told["tested_points"]
        assert verdict["with_reference"] > 0.99 * points // 2  # plain: exact answers (a few with no s.e.)
        assert verdict["tests"] == told["tests"] > points  # every test of every point, not the sample's
        assert verdict["agree"] == told["agree"] and verdict["flagged"] == told["flagged"][:NAMED_POINTS]
        assert verdict["replicates_done"] == 2 * points and verdict["exact_stored"] == points
    every = json.loads((reports["small_all"] / "report.json").read_text())["verdict"]
    sampled = json.loads((reports["small"] / "report.json").read_text())["verdict"]
    assert {k: v for k, v in sampled.items() if k != "point_agree"} == \
        {k: v for k, v in every.items() if k != "point_agree"}  # the same verdict, counted without the tables
    assert sampled["point_agree"] is None and len(every["point_agree"]) == N


def test_all_writes_every_point(reports):
    for name in ("small_all", "small_cli_all"):
        assert len(_summary(reports[name])) == N, name
        assert len(pd.read_csv(reports[name] / "points.csv")) == N, name
        assert "sample" not in json.loads((reports[name] / "report.json").read_text())
    pd.testing.assert_frame_equal(pd.read_csv(reports["small_all"] / "points.csv"),
                                  pd.read_csv(reports["small_cli_all"] / "points.csv"), check_exact=False, rtol=1e-12)


def test_report_help_names_all(capsys):
    capsys.readouterr()
    assert run_cli("report", "--help") == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--all" in out and "every point's rows in the per-point tables" in out.lower()
