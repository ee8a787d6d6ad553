"""The task layout, decided once (:func:`plan.sizing.decide`): given by the
spec, calibrated, chosen automatically or recorded in a resumed store; the
spec itself keeps only what the user asked for, and ``run --dry-run`` says
the layout the run takes."""

from __future__ import annotations

import pytest

from clirun import run_cli
from boardsweep.pipeline.plan import sizing, task_layout
from boardsweep.pipeline.plan import decide
from boardsweep.pipeline.plan.task_layout import Recorded, TaskLayout, given
from boardsweep.pipeline.plan.tasks import task_count
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.views import terminal


def _spec(make_spec, tasks=None, dice=(2, 3), replicates=4):
    return parse_spec(make_spec("toy", params={"size": 8}, grid={"dice_sides": list(dice), "rule": ["plain", "sticky"]},
                                run={"replicates": replicates, "games": 2, "turns": 60}, checkpoints={"count": 5},
                                tasks=tasks or {}), "toy.toml")


def _never(budget):
    raise AssertionError("nothing to time")


def test_a_given_layout_is_the_specs_and_nothing_is_timed(make_spec):
    spec = _spec(make_spec, {"replicates_per_task": 2, "points_per_task": 2})
    chosen = decide(spec, None, _never)
    assert chosen == TaskLayout(2, (1, 2), task_layout.GIVEN)
    assert chosen.points_per_task == 2 and chosen.words() == "2 replicates x 2 grid points"
    assert task_count(spec, chosen) == 2 * 2  # 4 points in chunks of 2, 4 replicates in blocks of 2
    assert chosen == given(spec)  # what the spec asks, the spec itself unchanged: no layout inside it


def test_seconds_are_calibrated_from_one_timing(make_spec):
    spec = _spec(make_spec, {"seconds": 1.0})
    timed = []
    chosen = decide(spec, None, lambda budget: timed.append(budget) or (0.1, 3))
    assert timed == [1.0]
    assert (chosen.block, chosen.points_per_task, chosen.how) == (4, 2, task_layout.CALIBRATED)
    assert chosen.note.startswith("4 replicates x 2 grid points per task: one replicate takes 0.1 s")


def test_a_resumed_store_keeps_its_recorded_layout(make_spec):
    spec = _spec(make_spec, {"seconds": 1.0})
    chosen = decide(spec, Recorded((2, 2), block=3), _never)
    assert (chosen.block, chosen.grid_chunks, chosen.how) == (3, (2, 2), task_layout.RECORDED)
    assert chosen.note == "3 replicates and 4 grid points per task, as recorded in the store"
    other = decide(spec, Recorded((1, 1)), _never)  # made by another spec: its chunks, the spec's block
    assert (other.block, other.grid_chunks, other.note) == (spec.block, (1, 1), "")


def test_a_large_grid_is_grouped_automatically(make_spec, monkeypatch):
    monkeypatch.setattr(sizing, "AUTO_POINTS", 4)
    monkeypatch.setattr(sizing, "AUTO_MIN_TASKS", 2)
    spec = _spec(make_spec)
    chosen = decide(spec, None, lambda budget: (1e-6, 3))
    assert chosen.how == task_layout.AUTOMATIC and chosen.points_per_task == 2
    assert "chosen automatically" in chosen.note
    assert decide(spec, Recorded((1, 2)), _never).note == "2 grid points per task, as recorded in the store"


def test_the_dry_run_of_a_calibrated_store_says_its_recorded_layout(tmp_path, make_spec, cluster2, monkeypatch,
                                                                  capsys):
    """A ``[tasks] seconds`` store resumed: the run keeps its recorded block,
    and so does the dry run, where a fresh calibration (a replicate timed here
    at 600 s) would say 1 replicate a task."""
    from boardsweep.pipeline.run import worker

    monkeypatch.setattr(terminal, "_VERBOSITY", 0)
    text = make_spec("toy", params={"size": 8}, grid={"dice_sides": [2, 3]}, run={"replicates": 4, "games": 2,
                     "turns": 60}, checkpoints={"count": 5}, tasks={"seconds": 1000})
    url = tmp_path / "timed.zarr"
    first = run_sweep(parse_spec(text, "timed.toml"), str(url), scheduler=cluster2, max_tasks=0, pack=False)
    assert first.block == 4 and not first.complete
    path = tmp_path / "timed.toml"
    path.write_text(text)
    monkeypatch.setattr(worker, "time_replicate", lambda *args: 600.0)
    capsys.readouterr()
    assert run_cli("run", str(path), "--store", str(url), "--dry-run") == 0
    out = capsys.readouterr().out
    assert "simulation task of up to 4 replicates x 2 grid points" in out, out
    assert "(as recorded in the store)" in out
    monkeypatch.undo()
    resumed = run_sweep(parse_spec(text, "timed.toml"), str(url), scheduler=cluster2, pack=False)
    assert resumed.block == 4 and resumed.complete


@pytest.mark.parametrize("how", [task_layout.GIVEN, task_layout.AUTOMATIC, task_layout.CALIBRATED, task_layout.RECORDED])
def test_a_layout_is_a_frozen_value(how):
    value = TaskLayout(2, (1, 3), how)
    with pytest.raises(AttributeError):
        value.block = 3
    assert value.points_per_task == 3
