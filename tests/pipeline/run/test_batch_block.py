"""A task's points as one block (``Game.simulate_batch``): the same arrays,
bit for bit, as the points run one by one through ``simulate``; a failing
block is run again point by point so that its error names the grid point."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from boardsweep.core.games import get_game
from boardsweep.pipeline.plan.tasks import plan_tasks
from boardsweep.pipeline.run.worker import batch_block, failed_at, point_block, simulate_block
from boardsweep.pipeline.spec.parse import parse_spec


def _spec(**grid):
    from specs import spec_toml

    axes = {"players": [2, 4], "dice_sides": [3, 6], "buy_policy": ["always", "reserve:40", "never"],
            "jail_strategy": ["short", "long"]}
    axes.update(grid)
    text = spec_toml("hk_monopoly", seed=57, params={"rounds": 4}, grid=axes,
                     run={"replicates": 3, "games": 5}, checkpoints={"count": 3}, tasks={"points_per_task": 6, "replicates_per_task": 3})
    return parse_spec(text, "batch.toml")


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].dtype == b[name].dtype and a[name].shape == b[name].shape
        assert np.array_equal(a[name], b[name]), name


@pytest.mark.parametrize("stored", [False, True])
def test_a_block_is_its_points_run_one_by_one_bit_for_bit(stored):
    spec = _spec()
    done = None
    if stored:  # some cells stored already: points of one task running different replicates
        done = np.zeros((*spec.shape, spec.slots), dtype=bool)
        done[0, 1, ::2, 0, 0] = True
    tasks = plan_tasks(spec, done)
    assert any(t.cells.rows is not None and len(t.cells.rows) > 1 for t in tasks) == stored
    seen = 0
    for task in tasks:
        _same(batch_block(spec.game, spec.seed, task, spec.run_shape, spec.checkpoints),
              point_block(spec.game, spec.seed, task, spec.run_shape, spec.checkpoints))
        seen += 1
    assert seen == len(tasks) >= 2


def test_a_failing_block_names_the_point_that_fails():
    spec = _spec(buy_policy=["always", "reserve:40"])
    game = spec.game

    def simulate(params, seed, run_shape, checkpoints):
        if params["dice_sides"] == 6 and params["buy_policy"] == "reserve:40":
            raise ArithmeticError("this point fails")
        return game.simulate(params, seed, run_shape, checkpoints)

    def batch(columns, keys, run_shape, checkpoints):
        raise ArithmeticError("the block fails")

    broken = dataclasses.replace(game, simulate=simulate, simulate_batch=batch)
    task = next(t for t in plan_tasks(spec) if any(p["dice_sides"] == 6 for _, p, _ in t.cells))
    with pytest.raises(ArithmeticError, match="this point fails") as caught:
        simulate_block(broken, spec.seed, task, spec.run_shape, spec.checkpoints)
    assert failed_at(caught.value)["dice_sides"] == 6 and failed_at(caught.value)["buy_policy"] == "reserve:40"


def test_a_block_that_fails_where_its_points_do_not_raises_its_own_error():
    spec = _spec()

    def batch(columns, keys, run_shape, checkpoints):
        return {"wins": np.zeros((len(keys), 1))}  # misshapen, and the rest missing

    broken = dataclasses.replace(spec.game, simulate_batch=batch)
    with pytest.raises(Exception, match="output 'wins' has shape"):
        simulate_block(broken, spec.seed, plan_tasks(spec)[0], spec.run_shape, spec.checkpoints)


def test_a_game_without_a_batch_entry_runs_point_by_point():
    assert get_game("chutes_ladders").simulate_batch is None
    assert get_game("hk_monopoly").simulate_batch is not None


@pytest.mark.parametrize("stored", [False, True])
def test_a_chunks_exact_answers_as_columns_are_its_points_answers(stored):
    from boardsweep.pipeline.plan.tasks import plan_exact
    from boardsweep.pipeline.run import worker

    spec = _spec()
    done = None
    if stored:  # some points' answers stored: the chunk's others computed
        done = np.zeros(spec.shape, dtype=bool)
        done[0, :, ::2, 1] = True
    tasks = plan_exact(spec, done)
    assert tasks and all(t.keeps for t in tasks if stored and t.index[0] == 0)
    for task in tasks:
        out, solves, mask = worker.exact_columns(spec.game, task, spec.run_shape, spec.checkpoints)
        want, _, want_mask = worker.exact_points(spec.game, task, spec.run_shape, spec.checkpoints)
        assert np.array_equal(mask, want_mask) and out.keys() == want.keys() and solves >= 0
        for name in out:
            assert np.array_equal(out[name], want[name], equal_nan=True), name
