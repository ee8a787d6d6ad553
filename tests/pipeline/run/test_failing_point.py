"""A task of many grid points whose kernel fails names the point that failed
(the worker marks the kernel's error with the point it was simulating), not
the task's first point and a count ("at dice_sides=2 ... and 3 more")."""

from __future__ import annotations

import pickle

import pytest

from boardsweep.core import games
from boardsweep.pipeline.errors import TasksFailed
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.run.worker import at_point, failed_at
from boardsweep.pipeline.spec.parse import parse_spec
from specs import spec_toml  # tests/support is on sys.path

games.register("failing", "failing_game")

#: One task of all four grid points (per replicate block); the kernel fails at dice_sides=3, rule="sticky".
MANY_POINTS = spec_toml(
    "failing", params={"size": 8}, grid={"dice_sides": [2, 3], "rule": ["plain", "sticky"]},
    run={"replicates": 2, "games": 2, "turns": 60}, checkpoints={"count": 5},
    tasks={"replicates_per_task": 2, "points_per_task": 4},
)


def test_the_mark_of_the_failing_point_travels_with_the_error():
    with pytest.raises(RuntimeError) as caught, at_point({"dice_sides": 2}), at_point({"dice_sides": 3}):
        raise RuntimeError("kernel")
    assert failed_at(caught.value) == {"dice_sides": 3}  # the innermost point
    assert failed_at(pickle.loads(pickle.dumps(caught.value))) == {"dice_sides": 3}  # as a worker sends it
    assert failed_at(ValueError("unmarked")) is None


def test_a_task_of_many_points_names_the_point_whose_kernel_failed(tmp_path, cluster2):
    spec = parse_spec(MANY_POINTS, "many.toml")
    with pytest.raises(TasksFailed) as caught:
        run_sweep(spec, str(tmp_path / "s.zarr"), scheduler=cluster2)
    message = str(caught.value)
    assert len(caught.value.failures) == 1, message
    assert "at dice_sides=3, rule='sticky' (replicates 0-1)" in message, message
    assert "more grid point" not in message and "dice_sides=2" not in message, message
    assert "the sticky ring cannot use 3-sided dice" in message, message
