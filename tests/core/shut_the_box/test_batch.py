"""Shut the Box's batch entry (``GAME.simulate_batch``): a block of runs over
every policy and several dice gives each run's arrays bit for bit as
``GAME.simulate`` of its seed."""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.core.games import ParameterError
from boardsweep.core.rng import seed_key
from boardsweep.core.shut_the_box.game import GAME


def _columns(points: list[tuple]) -> dict:
    columns = {}
    for i, name in enumerate(("dice_sides", "policy")):
        values = tuple(sorted({p[i] for p in points}, key=str))
        columns[name] = (values, np.array([values.index(p[i]) for p in points], dtype=np.int64))
    return columns


def test_a_block_of_every_policy_is_its_runs_one_by_one_bit_for_bit():
    points = [(n, p) for n in (2, 3, 5) for p in ("optimal", "greedy", "random")] * 2 + [(9, "random")]
    run_shape, checkpoints = {"games": 25}, np.array([1, 6, 25])
    seeds = [np.random.SeedSequence([640, j]) for j in range(len(points))]
    block = GAME.simulate_batch(_columns(points), np.stack([seed_key(s) for s in seeds]), run_shape, checkpoints)
    assert sorted(block) == sorted(GAME.variables)
    for j, (n, policy) in enumerate(points):
        one = GAME.simulate({"dice_sides": n, "policy": policy}, seeds[j], run_shape, checkpoints)
        for name, values in one.items():
            assert block[name][j].dtype == values.dtype and np.array_equal(block[name][j], values), (n, policy, name)
    assert len({block["hist"][j].tobytes() for j in range(len(points))}) == len(points)


def test_a_block_refuses_checkpoints_that_do_not_end_at_the_games():
    with pytest.raises(ParameterError, match="checkpoints must end at games=25"):
        GAME.simulate_batch(_columns([(2, "greedy")]), np.zeros((1, 2), dtype=np.uint64), {"games": 25},
                            np.array([1, 24]))
