"""Planning: which tasks a done mask leaves to run, in grid then block order.
Hand-made masks on the toy game's 2 x 2 grid (no store, no cluster)."""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.pipeline.plan.tasks import Task, plan_tasks
from boardsweep.pipeline.spec.parse import parse_spec


@pytest.fixture(scope="module")
def spec():
    """2 x 2 grid points, 5 replicates in blocks of 2: blocks [0, 2), [2, 4), [4, 5)."""
    from specs import TOY_SPEC  # tests/support is on sys.path

    text = TOY_SPEC.replace("replicates = 4", "replicates = 5")
    spec = parse_spec(text, "toy.toml")
    assert (spec.shape, spec.replicates, spec.block) == ((2, 2), 5, 2)
    return spec


def _planned(spec, done) -> list[tuple]:
    return [(t.index, t.start, t.stop, [reps for _, _, reps in t.cells], t.keeps) for t in plan_tasks(spec, done)]


def test_nothing_done_plans_every_block_in_grid_then_block_order(spec):
    every = [(i, s, e, [tuple(range(s, e))], False)
             for i in [(0, 0), (0, 1), (1, 0), (1, 1)] for s, e in [(0, 2), (2, 4), (4, 5)]]
    assert _planned(spec, None) == every
    assert _planned(spec, np.zeros((2, 2, 5), dtype=bool)) == every
    assert [t.params["dice_sides"] for t in plan_tasks(spec)][::3] == [2, 2, 3, 3]


def test_finished_blocks_are_left_out_and_stored_cells_are_kept(spec):
    done = np.ones((2, 2, 5), dtype=bool)
    assert plan_tasks(spec, done) == []
    done[0, 1, 1] = False  # block [0, 2): its first replicate stored, kept
    done[1, 0, 2] = False  # block [2, 4): only its last replicate stored, kept too
    done[1, 1, 4] = False  # the last block, one replicate
    assert _planned(spec, done) == [((0, 1), 0, 2, [(1,)], True), ((1, 0), 2, 4, [(2,)], True),
                                    ((1, 1), 4, 5, [(4,)], False)]


def test_a_task_carries_its_points_parameters(spec):
    done = np.ones((2, 2, 5), dtype=bool)
    done[1, 0, 3] = False  # replicate 2 done, 3 not
    (task,) = plan_tasks(spec, done)
    assert task == Task((1, 0), 2, 4, (((1, 0), dict(spec.points()[2][1]), (3,)),), ((1, 2), (0, 1)), True)
    assert (task.params["dice_sides"], task.params["rule"]) == (3, "plain")
    assert task.region == (slice(1, 2), slice(0, 1), slice(2, 4)) and task.runs == 1


def test_wanted_replicates_leave_the_rest_of_a_chunk_missing(spec):
    """A precision round wants 3 replicates of point (0, 0) and none elsewhere."""
    wanted = np.zeros((2, 2), dtype=np.int64)
    wanted[0, 0] = 3
    assert [(t.index, t.start, [r for _, _, r in t.cells]) for t in plan_tasks(spec, None, wanted)] == [
        ((0, 0), 0, [(0, 1)]), ((0, 0), 2, [(2,)])]


def test_a_plan_holds_nothing_per_grid_point():
    """A task's cells make each point's parameters when read, from the grid
    every task of the plan shares: a plan of 10^5 grid points in 10 tasks
    holds a few numbers per task, neither a dict per point (the client's
    memory at 10^6-10^7 points) nor a copy of its chunk's axis values or an
    index per point (0.4 MB here, 0.3 GB a plan at 10^7 points); pickled, a
    task carries its chunk of the grid only; its cells are the points' as
    the spec resolves them, simulation and exact alike."""
    import pickle
    import tracemalloc

    from boardsweep.pipeline.plan.tasks import plan_exact
    from specs import spec_toml

    sides = list(range(2, 12))
    text = spec_toml("hk_monopoly", grid={"dice_sides": sides, "rounds": list(range(1, 10_001))},
                     run={"replicates": 1, "games": 1}, tasks={"points_per_task": 10_000})
    spec = parse_spec(text, "many.toml")
    points = spec.resolved_points()
    for plan in (plan_tasks, plan_exact):
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            tasks = plan(spec)
            held = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
        finally:
            tracemalloc.stop()
        assert len(tasks) == 10 and sum(len(t.cells) for t in tasks) == 100_000
        assert held < 100_000, held  # a dict per point: ~50 MB; an index and an axis value per point: 0.4 MB
        sent = pickle.loads(pickle.dumps(tasks[3]))
        assert len(pickle.dumps(tasks[3])) < 50_000  # the chunk's 10^4 values, not the grid's
        for task in (tasks[0], tasks[3], sent, tasks[9]):
            for i in (0, 4_321, 9_999):
                assert task.cells[i][:2] == points[task.index[0] * 10_000 + i]
                assert task.cells[i][2:] == (((0,),) if plan is plan_tasks else ())
        assert sent == tasks[3] and list(sent.cells) == list(tasks[3].cells)


def _money_spec(replicates: int = 3):
    from specs import spec_toml

    text = spec_toml("hk_monopoly", seed=2 ** 40 + 11, params={"rounds": 3},
                     grid={"players": [2, 3], "dice_sides": [4, 6], "chance": ["values:50", "values:-20,40"],
                           "buy_policy": ["always", "reserve:0", "reserve:25", "never"]},
                     run={"replicates": replicates, "games": 2}, checkpoints={"count": 1},
                     tasks={"points_per_task": 16, "replicates_per_task": 3})
    return parse_spec(text, "money.toml")


def test_block_columns_seeds_and_keys_are_each_points_bit_for_bit():
    from boardsweep.core.rng import seed_key
    from boardsweep.pipeline.plan.tasks import param_words, point_words, replicate_keys, replicate_seed

    spec = _money_spec()
    done = np.zeros((*spec.shape, spec.slots), dtype=bool)
    done[0, 1, 0, ::2, 1] = True  # some cells stored: tasks whose points run different replicates
    for task in plan_tasks(spec, done):
        local, columns = task.cells.columns()
        point, reps = task.cells.replicates()
        cells = list(task.cells)
        runs = [(i, r) for i, (_, _, replicates) in enumerate(cells) for r in replicates]
        assert list(zip(point.tolist(), reps.tolist())) == runs
        for i, (index, params, _) in enumerate(cells):
            assert {n: v[c[i]] for n, (v, c) in columns.items()} == params
            assert tuple(lo + int(a[i]) for (lo, _), a in zip(task.bounds, local)) == index
        words = point_words(columns)
        assert words.dtype == np.uint32 and words.tolist() == [param_words(p) for _, p, _ in cells]
        keys = replicate_keys(spec.seed, words[point], reps)
        want = [seed_key(replicate_seed(spec.seed, cells[i][1], r)) for i, r in runs]
        assert np.array_equal(keys, np.array(want, dtype=np.uint64).reshape(-1, 2))
        assert task.runs == len(runs)


def test_point_words_keep_types_apart_as_param_words_does():
    from boardsweep.pipeline.plan.tasks import param_words, point_words

    values = (6, 6.0, "6", True, None, np.int64(6), 0.1, "é")
    columns = {"b": (values, np.arange(len(values))), "a": (("x",), np.zeros(len(values), dtype=int))}
    assert point_words(columns).tolist() == [param_words({"a": "x", "b": v}) for v in values]
