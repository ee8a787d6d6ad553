"""Replicates grouped into tasks automatically (issue 44): a small grid whose
spec gives no ``[tasks]`` at all, run on the embedded cluster (its workers
known), gets :func:`sizing.auto_block` replicates per task, the largest
divisor of the replicates that keeps ``sizing.AUTO_TASKS_PER_WORKER`` tasks
per worker.  The store equals one of one replicate per task bit for bit, the
spec's identity is unchanged (a spec that names ``replicates_per_task = 1``
is the same sweep), and a resumed store keeps the block it records.

Real Dask (the embedded cluster, threads), real zarr, the toy game."""

from __future__ import annotations

import json
import re

import pytest

from clirun import run_cli
from compare import assert_same_by_value, raw, toy
from boardsweep.pipeline.plan import sizing, task_layout
from boardsweep.pipeline.plan.tasks import task_count
from boardsweep.pipeline.plan.task_layout import TaskLayout
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import load_spec, parse_spec
from boardsweep.pipeline.views import terminal

DICE = (2, 3, 4, 5, 6)  # x 2 rules: 10 grid points


@pytest.fixture(autouse=True)
def _normal_verbosity(monkeypatch):
    """An earlier in-process ``boardsweep -q`` leaves the module's verbosity quiet."""
    monkeypatch.setattr(terminal, "_VERBOSITY", 0)


def toy_spec(make_spec, tasks=None, **changes):
    """The toy sweep of 10 points x 4 replicates, with no ``[tasks]`` table unless ``tasks`` is given."""
    return parse_spec(toy(make_spec, dice=DICE, tasks=tasks or {}, **changes), "toy.toml")


def test_the_rule_keeps_tasks_for_every_worker(make_spec):
    spec = toy_spec(make_spec)  # 10 points x 4 replicates
    assert sizing.groups_replicates(spec, 2) and not sizing.groups_points(spec)
    assert sizing.auto_block(spec, 1) == 4  # 10 tasks >= 8 for one worker
    assert sizing.auto_block(spec, 2) == 2  # 20 tasks >= 16; 4 would leave 10
    assert sizing.auto_block(spec, 3) == 1  # 24 wanted: one replicate a task
    assert sizing.auto_block(toy_spec(make_spec, replicates=6), 2) == 3  # a divisor: 20 tasks of 3
    assert sizing.auto_block(toy_spec(make_spec, replicates=7), 1) == 7  # 7 is prime: 10 tasks of 7
    assert not sizing.groups_replicates(spec, None)  # a scheduler's workers: not known, not grouped
    for tasks in ({"replicates_per_task": 1}, {"seconds": 1}, {"points_per_task": 2}):
        assert not sizing.groups_replicates(toy_spec(make_spec, tasks=tasks), 2), tasks
    precise = toy_spec(make_spec, precision={"stderr": 0.01, "max_replicates": 8})
    assert not sizing.groups_replicates(precise, 2)
    quickstart = load_spec("sweeps/quickstart.toml")
    assert sizing.auto_block(quickstart, 2) == 4 and task_count(quickstart, TaskLayout(4, (1, 1, 1))) == 24  # was 96
    assert sizing.decide(quickstart, None, _never, 2).how == task_layout.GROUPED
    assert sizing.decide(quickstart, None, _never, 16) == task_layout.TaskLayout(1, (1, 1, 1), task_layout.GIVEN)


def _never(budget):
    raise AssertionError("nothing to time")


def test_grouped_replicates_equal_one_per_task_bit_for_bit(tmp_path, cluster2, make_spec, write_spec, capsys):
    one, auto = tmp_path / "one.zarr", tmp_path / "auto.zarr"
    named = toy_spec(make_spec, tasks={"replicates_per_task": 1})
    spec = toy_spec(make_spec)
    assert spec.canonical_data == named.canonical_data  # the same sweep: its identity holds no automatic choice
    r1 = run_sweep(named, str(one), scheduler=cluster2, pack=False)
    path = write_spec(toy(make_spec, dice=DICE, tasks={}))
    assert run_cli("run", str(path), "--store", str(auto), "--workers", "2", "--dry-run") == 0
    assert "tasks: 20 simulation tasks of up to 2 replicates" in " ".join(capsys.readouterr().out.split())
    r2 = run_sweep(spec, str(auto), workers=2, pack=False)
    assert r1.complete and r2.complete
    assert (r1.tasks_run, r1.block, r2.tasks_run, r2.block) == (40, 1, 20, 2)
    assert r2.calibration == "2 replicates per task, chosen for 2 workers"
    attrs = raw(auto).attrs
    assert attrs["replicates_per_task"] == 2 and json.loads(attrs["spec_canonical"])["tasks"] == {
        "replicates_per_task": 1}
    assert_same_by_value(one, auto)
    assert run_cli("status", str(auto)) == 0


def test_a_resumed_store_keeps_its_grouped_replicates(tmp_path, cluster2, make_spec, write_spec, capsys):
    """Stopped after 3 tasks of 2 replicates; resumed on one worker (a fresh
    choice: 4) and by the spec that names 1 replicate a task (the same
    sweep), the run keeps 2, and the store equals a reference."""
    reference, url = tmp_path / "reference.zarr", tmp_path / "auto.zarr"
    assert run_sweep(toy_spec(make_spec, tasks={"replicates_per_task": 1}), str(reference),
                     scheduler=cluster2, pack=False).complete
    first = run_sweep(toy_spec(make_spec), str(url), workers=2, max_tasks=3, pack=False)
    assert not first.complete and (first.tasks_run, first.block) == (3, 2)
    path = write_spec(toy(make_spec, dice=DICE, tasks={}))
    capsys.readouterr()
    assert run_cli("run", str(path), "--store", str(url), "--workers", "1", "--dry-run") == 0
    assert re.search(r"tasks: 20 simulation tasks of up to 2 replicates .*\(as recorded in the store\)",
                     " ".join(capsys.readouterr().out.split()))
    again = run_sweep(toy_spec(make_spec), str(url), workers=1, max_tasks=3, pack=False)
    assert (again.tasks_run, again.block) == (3, 2) and "as recorded in the store" in again.calibration
    named = toy_spec(make_spec, tasks={"replicates_per_task": 1})
    last = run_sweep(named, str(url), scheduler=cluster2, pack=False)
    assert last.complete and (last.tasks_run, last.block) == (20 - 6, 2)
    assert_same_by_value(reference, url)
