"""The planner's memory model: what a run is refused for, measured against what it holds.

A grid whose points a run groups into tasks itself is sized by the fewest
tasks the grouping may choose (and checked again once it has chosen); a grid
whose layout the spec fixes is sized by that layout."""

from __future__ import annotations

import math
import shutil

import pytest

from clirun import run_cli
from specs import spec_toml
from boardsweep.pipeline.errors import TooLarge
from boardsweep.pipeline.plan import sizing
from boardsweep.pipeline.plan.tasks import task_count
from boardsweep.pipeline.plan.task_layout import TaskLayout
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec

#: The money game at 2,500 Chance decks x 10 dice x 2 jail strategies x 200 reserves:
#: ten million grid points from 2,712 values (not game lengths: ``rounds`` is an output too,
#: which no run's grid may name).
TEN_MILLION = {"chance": [f"values:{k}" for k in range(1, 2501)], "dice_sides": list(range(2, 12)),
               "jail_strategy": ["short", "long"], "buy_policy": [f"reserve:{10 * k}" for k in range(200)]}


def _ten_million(tasks: dict | None = None) -> str:
    return spec_toml("hk_monopoly", grid=TEN_MILLION, run={"replicates": 1, "games": 1},
                     checkpoints={"count": 1}, tasks=tasks)


def test_ten_million_points_grouped_automatically_fit_in_memory(tmp_path):
    spec = parse_spec(_ten_million(), "ten7.toml")
    assert sizing.groups_points(spec)
    est = sizing.check_fits(spec, tmp_path / "ten7.zarr", existing=True)  # memory only: not refused
    assert est.points == 10**7 and est.tasks == sizing.AUTO_MIN_TASKS  # the largest groups the run may choose
    assert est.plan_bytes < 10**9


def test_the_free_space_checked_is_that_of_the_stores_folder(tmp_path):
    """A 129 TB store (10^7 replicates of 10^5 checkpoints, one task: a 30 MB
    plan): refused for the free space of the folder the store will be in (the
    nearest that exists), not checked on object storage (no folder)."""
    spec = parse_spec(spec_toml("hk_monopoly", run={"replicates": 10**7, "games": 10**5},
                                checkpoints={"count": 10**5}, tasks={"replicates_per_task": 10**7}), "huge.toml")
    assert sizing.estimate(spec).store_bytes > shutil.disk_usage(tmp_path).free
    folder = tmp_path / "not" / "yet" / "huge.zarr"
    with pytest.raises(TooLarge, match=f"and {folder} has .* free; lower run.replicates"):
        sizing.check_fits(spec, folder)
    assert sizing.check_fits(spec, None).store_bytes == sizing.estimate(spec).store_bytes  # object storage
    assert sizing.check_fits(spec, folder, existing=True).tasks == 1  # a store already there: memory only


def test_ten_million_points_of_one_point_a_task_are_refused_in_one_line(tmp_path, write_spec, capsys):
    url = tmp_path / "ten7.zarr"
    code = run_cli("run", str(write_spec(_ten_million({"points_per_task": 1}), "ten7.toml")), "--store", str(url))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "planning 10000000 tasks would need about" in err[0] and "tasks.points_per_task (now 1)" in err[0]
    assert not url.exists()


#: tracemalloc's peak while planning a 10^5-point grid, the done mask counted, in a
#: process of its own (tracemalloc counts every thread's allocations: a test
#: cluster's threads would be counted too).
MEASURE = """
import json, sys, tracemalloc
import numpy as np
from boardsweep.pipeline.plan.tasks import plan_tasks
from boardsweep.pipeline.spec.parse import parse_spec
out = []
for text in json.loads(sys.stdin.read()):
    spec = parse_spec(text)
    spec.resolved_points()
    tracemalloc.start()
    done = np.zeros(spec.shape + (spec.slots,), dtype=bool)
    tasks = plan_tasks(spec, done)
    out.append([len(tasks), tracemalloc.get_traced_memory()[1]])
    tracemalloc.stop()
print(json.dumps(out))
"""


def test_the_model_bounds_what_the_planner_holds_and_is_not_loose():
    """The measured peak of the planner against :func:`sizing.estimate`'s
    ``plan_bytes`` (a planned task's Dask key and future, counted in
    :data:`sizing.TASK_BYTES`, are not made here), for 1 or 8 replicates in
    blocks of 1, 2 or 8."""
    import json
    import subprocess
    import sys

    grid = {**TEN_MILLION, "buy_policy": ["always", "reserve:10"],
            "chance": [f"values:{k}" for k in range(1, 251)]}  # 10^4 points
    texts = [spec_toml("hk_monopoly", grid=grid, run={"replicates": replicates, "games": 1}, checkpoints={"count": 1},
                       tasks={"points_per_task": 100, "replicates_per_task": block})
             for replicates, block in ((1, 1), (8, 8), (8, 2), (8, 1))]
    proc = subprocess.run([sys.executable, "-c", MEASURE], input=json.dumps(texts), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    for text, (planned, peak) in zip(texts, json.loads(proc.stdout)):
        spec = parse_spec(text)
        est = sizing.estimate(spec)
        assert planned == est.tasks == task_count(spec)
        assert peak <= est.plan_bytes < 3 * peak, (est, peak)


def test_a_layout_chosen_by_the_run_is_checked_once_chosen(tmp_path, cluster2, monkeypatch):
    """``[tasks] seconds`` of a microsecond: before the timing the plan may be
    one task (it fits); once timed it is a task per replicate, which does not."""
    spec = parse_spec(spec_toml("toy", grid={"dice_sides": [2, 3], "rule": ["plain", "sticky"]},
                                run={"replicates": 1000, "games": 1, "turns": 5},
                                checkpoints={"count": 1}, tasks={"seconds": 1e-6}), "fast.toml")
    assert sizing.estimate(spec).tasks == 1
    timed = TaskLayout(1, (1, 1))  # what the timing will choose
    room = (sizing.estimate(spec).plan_bytes + sizing.estimate(spec, timed).plan_bytes) // 2
    assert math.prod(spec.shape) * spec.replicates * sizing.TASK_BYTES > room
    monkeypatch.setattr(sizing, "_available_memory", lambda: 2 * room)
    url = tmp_path / "fast.zarr"
    with pytest.raises(TooLarge, match="planning 4000 tasks"):
        run_sweep(spec, str(url), scheduler=cluster2)
    assert not url.exists() or not any(url.iterdir())
