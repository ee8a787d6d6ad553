"""Grid points grouped into tasks automatically (issue 34): a spec with
neither ``[tasks] points_per_task`` nor ``seconds`` and a grid of
``sizing.AUTO_POINTS`` points or more gets several points per task, chosen
by the run that creates its store and recorded there.  The store equals one
of one point per task bit for bit; a resumed, grown or rebuilt store keeps
its recorded chunks; an explicit ``points_per_task = 1`` is honoured.

Real Dask, real zarr, the toy game.  All but the first test lower the
threshold (``sizing.AUTO_POINTS``, ``sizing.AUTO_MIN_TASKS``: read by the
run's client, in this process) so that a grid of 10 points is grouped."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from clirun import run_cli
from compare import assert_same_by_value, raw, toy
from boardsweep.pipeline.views import terminal
from boardsweep.pipeline.plan import sizing
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.plan.tasks import task_count
from boardsweep.pipeline.plan.task_layout import given
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store.metadata import STORE_FORMAT

DICE = (2, 3, 4, 5, 6)  # x 2 rules: 10 points; chunks of (2, 2) leave a partial edge chunk


@pytest.fixture(autouse=True)
def _normal_verbosity(monkeypatch):
    """An earlier in-process ``boardsweep -q`` leaves the module's verbosity quiet."""
    monkeypatch.setattr(terminal, "_VERBOSITY", 0)


@pytest.fixture
def low_threshold(monkeypatch):
    """10 grid points are grouped, into at least 2 chunks: at most 5 points per task, (2, 2) here."""
    monkeypatch.setattr(sizing, "AUTO_POINTS", 8)
    monkeypatch.setattr(sizing, "AUTO_MIN_TASKS", 2)


def toy_spec(make_spec, dice=DICE, tasks=None, **changes):
    """The toy sweep of 4 replicates, with no ``[tasks]`` table unless ``tasks`` is given."""
    return parse_spec(toy(make_spec, dice=dice, tasks=tasks or {}, **changes), "toy.toml")


def test_the_rule_is_bounded_by_time_grid_and_memory(make_spec, monkeypatch):
    spec = toy_spec(make_spec, dice=range(2, 2502), replicates=1)  # 5,000 points: the real threshold
    assert spec.auto_points and sizing.groups_points(spec)
    assert sizing.auto_task_grid(spec, 2.0) == (1, 1)  # a replicate of 2 s: a task of one point
    assert sizing.auto_task_grid(spec, 0.1) == (5, 2)  # 10 points make a second
    assert sizing.auto_task_grid(spec, 1e-6) == (25, 2)  # at most a 100th of the grid
    assert not sizing.groups_points(toy_spec(make_spec, dice=range(2, 2501), replicates=1))  # 4,998 points
    assert not sizing.groups_points(toy_spec(make_spec, dice=range(2, 2502), tasks={"points_per_task": 1}))
    assert not sizing.groups_points(toy_spec(make_spec, dice=range(2, 2502), tasks={"seconds": 1}))
    monkeypatch.setattr(sizing, "AUTO_TASK_BYTES", 3 * 4240)  # a toy replicate: 400 bytes, its series 60 x 8 x 8
    assert sizing.auto_task_grid(spec, 1e-6) == (1, 2)  # at most 3 points' results, 2 on the last axis


def test_a_grid_at_the_real_threshold_is_grouped_and_says_so(tmp_path, cluster2, make_spec, write_spec, capsys):
    """5,000 points, no [tasks]: the dry run and the run choose the same
    points per task, the run records them, and every cell is computed."""
    text = toy(make_spec, dice=range(2, 2502), replicates=1, tasks={}, run={"games": 1, "turns": 4},
               checkpoints={"count": 2})
    path, url = write_spec(text), tmp_path / "auto.zarr"
    assert run_cli("run", str(path), "--store", str(url), "--dry-run") == 0
    planned = " ".join(capsys.readouterr().out.split())
    tasks, planned_points, exact_tasks = map(int, re.search(
        r"tasks: (\d+) simulation tasks of up to 1 replicate x (\d+) grid points \+ (\d+) exact tasks "
        r"\(5000 exact solves\) \(chosen automatically\)", planned).groups())
    assert exact_tasks == tasks  # one replicate: one exact task per simulation task's chunk of points
    assert run_cli("run", str(path), "--store", str(url), "--scheduler", cluster2) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "5000 grid points x 1 replicate: simulation tasks of 1 replicate x grid points grouped to about 1 s" \
        in out, out
    chosen = re.search(r"task size: (\d+) grid points x 1 replicate per task, chosen automatically: one replicate "
                       r"takes (\S+) s on a worker \(the slowest of 3 grid points\); \[tasks\] points_per_task sets it",
                       out)
    points, seconds = int(chosen[1]), float(chosen[2])
    assert f"simulation, {-(-5000 // points)} exact), {points} grid points each" in out, out
    assert "one task each" not in out  # the old hint
    attrs = raw(url).attrs
    assert int(np.prod(attrs["grid_chunks"])) == points and attrs["boardsweep_format"] == STORE_FORMAT
    if seconds < 0.02:  # a toy replicate (some 0.1 ms): at most a 100th of the grid, and the dry run agrees
        assert (points, attrs["grid_chunks"], tasks, planned_points) == (50, [25, 2], 100, 50), out
    assert "points_per_task" not in json.loads(attrs["spec_canonical"])["tasks"]  # the spec's identity: its text
    assert run_cli("status", str(url)) == 0


def test_grouped_points_equal_one_point_per_task_bit_for_bit(tmp_path, cluster2, make_spec, low_threshold):
    one, auto = tmp_path / "one.zarr", tmp_path / "auto.zarr"
    r1 = run_sweep(toy_spec(make_spec, tasks={"points_per_task": 1}), str(one), scheduler=cluster2, pack=False)
    spec = toy_spec(make_spec)
    r4 = run_sweep(spec, str(auto), scheduler=cluster2, pack=False)
    assert r1.complete and r4.complete
    assert (r1.tasks_run, r1.exact_run, r1.points_per_task) == (40, 10, 1)  # explicit 1: honoured
    assert (r4.tasks_run, r4.exact_run, r4.points_per_task) == (12, 3, 4)  # 3 chunks x 4 replicates
    assert "4 grid points x 1 replicate per task, chosen automatically" in r4.calibration
    assert "grid_chunks" not in raw(one).attrs and raw(one).attrs["boardsweep_format"] == STORE_FORMAT
    assert raw(auto).attrs["grid_chunks"] == [2, 2]
    assert_same_by_value(one, auto)
    assert run_cli("status", str(auto)) == 0


def test_an_interrupted_run_resumes_with_its_recorded_chunks(tmp_path, cluster2, make_spec, low_threshold,
                                                              monkeypatch, write_spec, capsys):
    """The first run stops after 5 tasks; by then a fresh choice would be
    other (chunks of 2 points), yet the resumed run keeps (2, 2), and so do
    the dry run and a growth of the grid."""
    reference = tmp_path / "reference.zarr"
    assert run_sweep(toy_spec(make_spec, tasks={"points_per_task": 1}, dice=(*DICE, 7)), str(reference),
                     scheduler=cluster2).complete
    url = tmp_path / "auto.zarr"
    spec = toy_spec(make_spec)
    first = run_sweep(spec, str(url), scheduler=cluster2, max_tasks=5, pack=False)
    assert not first.complete and first.tasks_run == 5 and raw(url).attrs["grid_chunks"] == [2, 2]
    monkeypatch.setattr(sizing, "AUTO_MIN_TASKS", 5)  # a new store of this grid would now take (1, 2)
    path = write_spec(toy(make_spec, dice=DICE, tasks={}))
    capsys.readouterr()
    assert run_cli("run", str(path), "--store", str(url), "--dry-run") == 0
    assert re.search(r"x 4 grid points \+ \d+ exact tasks \(10 exact solves\) \(as recorded in the store\)",
                     " ".join(capsys.readouterr().out.split()))
    resumed = run_sweep(spec, str(url), scheduler=cluster2, pack=False)
    assert resumed.complete and resumed.tasks_run == 12 - 5 and resumed.points_per_task == 4
    assert resumed.calibration == "4 grid points per task, as recorded in the store"
    grown = run_sweep(toy_spec(make_spec, dice=(*DICE, 7)), str(url), scheduler=cluster2, extend=True)
    assert grown.complete and raw(url).attrs["grid_chunks"] == [2, 2]  # dice chunk [6] grew to [6, 7]
    assert_same_by_value(reference, url)


def test_a_lost_root_zarr_json_is_rebuilt_with_the_chosen_chunks(tmp_path, cluster2, make_spec, low_threshold):
    url = tmp_path / "auto.zarr"
    spec = toy_spec(make_spec)
    assert run_sweep(spec, str(url), scheduler=cluster2, pack=False).complete
    reference = raw(url)
    (url / "zarr.json").unlink()
    report = run_sweep(spec, str(url), scheduler=cluster2, pack=False)
    assert report.complete and report.tasks_run == 0
    rebuilt = raw(url)
    assert rebuilt.attrs["grid_chunks"] == [2, 2] and rebuilt.attrs["boardsweep_format"] == STORE_FORMAT
    for name in reference.data_vars:
        kind = reference[name].dtype.kind
        assert np.array_equal(reference[name].values, rebuilt[name].values, equal_nan=kind == "f"), name


def test_a_small_grid_keeps_one_point_per_task(make_spec):
    spec = toy_spec(make_spec)
    assert spec.auto_points and not sizing.groups_points(spec)  # 10 points, below the threshold
    assert given(spec).grid_chunks == (1, 1) and task_count(spec) == 40
