"""Monopoly's and Shut the Box's planned tasks run as blocks
(``Game.simulate_batch``): the chunks, bit for bit, of their points run one
by one through ``simulate`` with the pipeline's seeds."""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.core.games import get_game
from boardsweep.pipeline.plan.tasks import plan_tasks
from boardsweep.pipeline.run.worker import batch_block, point_block
from boardsweep.pipeline.spec.parse import parse_spec

from specs import spec_toml  # tests/support is on sys.path

SPECS = {
    "monopoly": dict(grid={"dice_sides": [3, 9], "deck_policy": ["independent", "shuffled_cycle"],
                           "jail_strategy": ["short", "long"], "tally": ["per_roll", "per_landing", "per_turn"]},
                     params={"chance_deck": "classic15"}, run={"replicates": 3, "games": 2, "players": 2, "turns": 40}),
    "shut_the_box": dict(grid={"dice_sides": [2, 3, 4], "policy": ["optimal", "greedy", "random"]},
                         run={"replicates": 3, "games": 20}),
}


@pytest.mark.parametrize("game", sorted(SPECS))
def test_a_planned_task_as_one_block_is_its_points_one_by_one(game):
    from specs import spec_toml

    assert get_game(game).simulate_batch is not None
    spec = parse_spec(spec_toml(game, seed=5757, checkpoints={"count": 3},
                                tasks={"points_per_task": 5, "replicates_per_task": 3}, **SPECS[game]), "b.toml")
    tasks = plan_tasks(spec)
    assert len(tasks) >= 2
    for task in tasks:
        block = batch_block(spec.game, spec.seed, task, spec.run_shape, spec.checkpoints)
        points = point_block(spec.game, spec.seed, task, spec.run_shape, spec.checkpoints)
        assert block.keys() == points.keys()
        for name in block:
            assert block[name].dtype == points[name].dtype and np.array_equal(block[name], points[name]), name


@pytest.mark.parametrize("game", sorted(SPECS))
def test_a_grid_of_no_axes_runs_as_one_block_too(game):
    """A spec without a grid (one point, a chunk of no grid axes): the block is its point run alone."""
    from specs import spec_toml

    spec = parse_spec(spec_toml(game, seed=5758, checkpoints={"count": 3}, tasks={"replicates_per_task": 4},
                                run={**SPECS[game]["run"], "replicates": 4}), "b.toml")
    (task,) = plan_tasks(spec)
    block = batch_block(spec.game, spec.seed, task, spec.run_shape, spec.checkpoints)
    points = point_block(spec.game, spec.seed, task, spec.run_shape, spec.checkpoints)
    assert block.keys() == points.keys()
    assert all(np.array_equal(block[name], points[name]) for name in block)


def test_a_task_of_fewer_runs_than_a_block_is_worth_runs_point_by_point():
    import dataclasses

    from specs import spec_toml

    from boardsweep.pipeline.run.worker import BATCH_MIN_RUNS, simulate_block

    def batch(columns, keys, run_shape, checkpoints):
        raise ArithmeticError(f"a block of {len(keys)} runs")

    spec = parse_spec(spec_toml("shut_the_box", seed=1, grid={"dice_sides": [2, 3]}, run={"replicates": 4, "games": 5},
                                tasks={"points_per_task": 1, "replicates_per_task": 1}), "s.toml")
    game = dataclasses.replace(spec.game, simulate_batch=batch)
    task = plan_tasks(spec)[0]
    assert BATCH_MIN_RUNS > 1 and len(task.cells) == 1
    want = point_block(spec.game, spec.seed, task, spec.run_shape, spec.checkpoints)
    got = simulate_block(game, spec.seed, task, spec.run_shape, spec.checkpoints)  # 1 run: the block is not called
    assert all(np.array_equal(got[name], want[name]) for name in want)
    spec = parse_spec(spec_toml("shut_the_box", seed=1, grid={"dice_sides": [2, 3]},
                                run={"replicates": BATCH_MIN_RUNS, "games": 5},
                                tasks={"points_per_task": 1, "replicates_per_task": BATCH_MIN_RUNS}), "s.toml")
    with pytest.raises(ArithmeticError, match=f"a block of {BATCH_MIN_RUNS} runs"):
        simulate_block(game, spec.seed, plan_tasks(spec)[0], spec.run_shape, spec.checkpoints)


def test_the_head_start_takes_the_replicates_simulated_early_point_by_point():
    """The warm-up thread's stash is looked up by ``simulate``: the head start's
    game runs point by point, or a block game's early replicates would be
    simulated twice (the quickstart: ~0.7 s of CPU more)."""
    from specs import MONOPOLY_SPEC

    from boardsweep.pipeline.run.startup import WarmUp

    spec = parse_spec(MONOPOLY_SPEC, "m.toml")
    warming = WarmUp(spec)
    try:
        game = warming.stashed(spec.game)
        assert spec.game.simulate_batch is not None and game.simulate_batch is None
        assert game.simulate is not spec.game.simulate
    finally:
        warming.stop.set()


def test_a_head_start_task_of_many_runs_beyond_those_kept_runs_as_a_block():
    """Point by point, a money-game task of 40,000 runs took about 20 s of the
    head start's thread (0.4 s as a block): a task of ``BATCH_MIN_RUNS`` runs
    or more beyond those simulated early runs the game itself, as a block;
    fewer, point by point with the stash.  The same integers either way."""
    from boardsweep.pipeline.run.startup import WarmUp
    from boardsweep.pipeline.run.worker import BATCH_MIN_RUNS, simulate_block

    spec = parse_spec(spec_toml("hk_monopoly", seed=4, params={"rounds": 3}, grid={"dice_sides": [3, 4]},
                                run={"replicates": BATCH_MIN_RUNS, "games": 2},
                                tasks={"points_per_task": 2, "replicates_per_task": BATCH_MIN_RUNS}), "h.toml")
    task = plan_tasks(spec)[0]
    warming = WarmUp(spec)  # no replicates simulated early: nothing kept
    try:
        assert task.runs >= BATCH_MIN_RUNS
        block, points = warming.stashed(spec.game, task.runs), warming.stashed(spec.game, BATCH_MIN_RUNS - 1)
        assert block is spec.game and points.simulate_batch is None
        got, want = (simulate_block(g, spec.seed, task, spec.run_shape, spec.checkpoints) for g in (block, points))
        assert want.keys() == got.keys() and all(np.array_equal(got[n], want[n]) for n in want)
    finally:
        warming.stop.set()
