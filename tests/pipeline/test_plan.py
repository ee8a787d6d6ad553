"""Planning: which tasks a done mask leaves to run, in grid then block order.
Hand-made masks on the toy game's 2 x 2 grid (no store, no cluster)."""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.pipeline.plan import Task, plan_tasks
from boardsweep.pipeline.spec import parse_spec


@pytest.fixture(scope="module")
def spec():
    """2 x 2 grid points, 5 replicates in blocks of 2: blocks [0, 2), [2, 4), [4, 5)."""
    from conftest import TOY_SPEC

    text = TOY_SPEC.replace("replicates = 4", "replicates = 5")
    spec = parse_spec(text, "toy.toml")
    assert (spec.shape, spec.replicates, spec.block) == ((2, 2), 5, 2)
    return spec


def _planned(spec, done) -> list[tuple]:
    return [(t.index, t.start, t.stop, t.base) for t in plan_tasks(spec, done)]


def test_nothing_done_plans_every_block_in_grid_then_block_order(spec):
    every = [(i, s, e, None) for i in [(0, 0), (0, 1), (1, 0), (1, 1)] for s, e in [(0, 2), (2, 4), (4, 5)]]
    assert _planned(spec, None) == every
    assert _planned(spec, np.zeros((2, 2, 5), dtype=bool)) == every
    assert [t.params["dice_sides"] for t in plan_tasks(spec)][::3] == [2, 2, 3, 3]


def test_finished_blocks_are_left_out_and_a_done_prefix_is_kept(spec):
    done = np.ones((2, 2, 5), dtype=bool)
    assert plan_tasks(spec, done) == []
    done[0, 1, 1] = False  # block [0, 2): its first replicate done, kept (base 0)
    done[1, 0, 2] = False  # block [2, 4): only its last replicate done, not a prefix: all of it again
    done[1, 1, 4] = False  # the last block, one replicate
    assert _planned(spec, done) == [((0, 1), 1, 2, 0), ((1, 0), 2, 4, None), ((1, 1), 4, 5, None)]


def test_a_task_carries_its_points_parameters(spec):
    done = np.ones((2, 2, 5), dtype=bool)
    done[1, 0, 3] = False  # replicates 2 done, 3 not: a prefix of one
    (task,) = plan_tasks(spec, done)
    assert task == Task((1, 0), dict(spec.points()[2][1]), 3, 4, 2)
    assert (task.params["dice_sides"], task.params["rule"]) == (3, "plain")
