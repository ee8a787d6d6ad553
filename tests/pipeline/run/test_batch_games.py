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
