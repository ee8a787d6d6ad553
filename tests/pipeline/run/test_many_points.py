"""Tasks that hold many grid points (``[tasks] points_per_task``): the same
store, bit for bit, as one point per task, whatever the block edges; growth,
damage and precision rounds at chunk boundaries; exact answers solved once
per distinct set of the values they depend on; few files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import zarr

from clirun import run_cli
from compare import assert_same_by_value, files, raw, toy
from boardsweep.core.hk_monopoly.game import GAME as HK
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.plan.task_layout import given
from boardsweep.pipeline.plan.tasks import grid_chunks, plan_exact, plan_tasks, task_count
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store.metadata import STORE_FORMAT
from boardsweep.pipeline.store import integrity

DICE = (2, 3, 4, 5, 6)  # 5 values: chunks of 2 leave a partial edge chunk


def toy_spec(make_spec, points: int, dice=DICE, replicates: int = 4, **changes):
    tasks = {"replicates_per_task": 2, "points_per_task": points}
    return parse_spec(toy(make_spec, dice=dice, replicates=replicates, tasks=tasks, **changes), "toy.toml")


def test_grid_chunks_fill_the_last_axis_first():
    assert grid_chunks((3, 5), 1) == (1, 1)
    assert grid_chunks((3, 5), 4) == (1, 4)
    assert grid_chunks((3, 5), 10) == (2, 5)
    assert grid_chunks((3, 5), 1000) == (3, 5)
    assert grid_chunks((), 7) == ()
    for shape, points in [((4, 3, 5), 7), ((4, 3, 5), 31), ((2, 9), 9), ((6,), 4)]:
        assert int(np.prod(grid_chunks(shape, points))) <= points


def test_plan_covers_every_cell_once_and_keeps_the_stored(make_spec):
    spec = toy_spec(make_spec, 4)
    assert given(spec).grid_chunks == (2, 2)
    tasks = plan_tasks(spec)
    assert len(tasks) == task_count(spec) == 3 * 2  # dice chunks [2,3] [4,5] [6] x 2 replicate blocks
    cells = [(index, r) for t in tasks for index, _, reps in t.cells for r in reps]
    assert len(cells) == len(set(cells)) == 5 * 2 * 4
    assert not any(t.keeps for t in tasks)
    done = np.zeros((5, 2, 4), dtype=bool)
    done[4, 0, :2] = True  # one point of the edge chunk's first block is stored
    again = plan_tasks(spec, done)
    edge = [t for t in again if t.index == (2, 0) and t.start == 0]
    assert len(again) == 6 and edge[0].keeps and [c[0] for c in edge[0].cells] == [(4, 1)]
    assert len(plan_exact(spec)) == 3 and len(plan_exact(spec, np.ones((5, 2), dtype=bool))) == 0


def test_a_planned_tasks_computed_cells_are_read_from_its_plan_as_cell_by_cell(make_spec):
    """:func:`worker.computed_mask` reads a planned task's members and rows at
    once (making no grid point's parameters: it ran three times a task, a
    third of a tiny-run sweep's worker time): the same cells as its cells
    one by one, with stored cells, partial blocks and unequal replicates."""
    from boardsweep.pipeline.plan.tasks import Task
    from boardsweep.pipeline.run.worker import computed_mask

    spec = toy_spec(make_spec, 4)
    done = np.zeros((5, 2, 4), dtype=bool)
    done[4, 0, :2] = done[0, 1, 1] = True
    wanted = np.array([[4, 3], [1, 4], [2, 2], [4, 0], [3, 4]])
    tasks = plan_tasks(spec, done) + plan_tasks(spec, done, wanted)
    assert any(t.cells.rows.shape[0] > 1 for t in tasks) and any(t.keeps for t in tasks)
    for task in tasks:
        by_cell = computed_mask(Task(task.index, task.start, task.stop, list(task.cells), task.bounds, task.keeps))
        assert by_cell.any() and np.array_equal(computed_mask(task), by_cell), task.key


def test_many_points_per_task_equal_one_point_per_task_bit_for_bit(tmp_path, cluster2, make_spec):
    one = tmp_path / "one.zarr"
    many = tmp_path / "many.zarr"
    r1 = run_sweep(toy_spec(make_spec, 1), str(one), scheduler=cluster2, pack=False)
    r4 = run_sweep(toy_spec(make_spec, 4), str(many), scheduler=cluster2, pack=False)
    assert r1.complete and r4.complete
    assert (r1.tasks_run, r1.exact_run) == (20, 10) and (r4.tasks_run, r4.exact_run) == (6, 3)
    assert_same_by_value(one, many)
    ds = raw(many)
    assert ds.attrs["grid_chunks"] == [2, 2] and ds.attrs["boardsweep_format"] == STORE_FORMAT
    assert zarr.open_array(str(many), path="counts", mode="r").chunks[:3] == (2, 2, 2)
    assert len(files(many)) < len(files(one)) / 2
    assert run_cli("status", str(many)) == 0


def test_growth_completes_a_partial_chunk_and_keeps_old_cells(tmp_path, cluster2, make_spec):
    """dice gains 7: the edge chunk [6] becomes [6, 7]; its old cells are
    read back and written again unchanged; the grown store equals a fresh
    run of the new spec with its own (other) chunking."""
    url = tmp_path / "grown.zarr"
    assert run_sweep(toy_spec(make_spec, 4), str(url), scheduler=cluster2, pack=False).complete
    before = raw(url)
    grown = toy_spec(make_spec, 4, dice=(*DICE, 7), replicates=6)
    report = run_sweep(grown, str(url), scheduler=cluster2, extend=True, pack=False)
    assert report.complete
    after = raw(url)
    old = {"dice_sides": list(DICE), "replicate": list(range(4))}
    for name in ("counts", "events", "done"):
        assert np.array_equal(before[name].values, after[name].sel(old).values), name
    assert after.attrs["grid_chunks"] == [2, 2]  # the store's chunks, not the grown grid's
    fresh = tmp_path / "fresh.zarr"
    assert run_sweep(toy_spec(make_spec, 1, dice=(*DICE, 7), replicates=6), str(fresh), scheduler=cluster2).complete
    assert_same_by_value(url, fresh)


def test_a_damaged_chunk_is_named_and_recomputed(tmp_path, cluster2, make_spec, capsys):
    url = tmp_path / "damaged.zarr"
    spec = toy_spec(make_spec, 4)
    assert run_sweep(spec, str(url), scheduler=cluster2, pack=False).complete
    reference = raw(url)
    chunk = Path(url, "counts", "c", "1", "0", "0", "0", "0")
    assert chunk.is_file()
    chunk.write_bytes(chunk.read_bytes()[:-3])  # truncated
    damage = integrity.check(str(url))
    assert damage.sim == [((1, 0), 0)]
    assert "dice_sides=4..5, rule='plain'..'sticky', replicates 0-1" in integrity.describe(str(url), damage)
    capsys.readouterr()
    assert run_cli("status", str(url)) == 1
    told = capsys.readouterr()
    assert "dice_sides=4..5" in told.out + told.err
    report = run_sweep(spec, str(url), scheduler=cluster2, pack=False)
    assert report.complete and report.tasks_run == 1
    repaired = raw(url)
    for name in reference.data_vars:
        kind = reference[name].dtype.kind
        assert np.array_equal(reference[name].values, repaired[name].values, equal_nan=kind == "f"), name


def test_precision_rounds_with_many_points_equal_one_point(tmp_path, cluster2, make_spec):
    precision = {"stderr": 0.02, "max_replicates": 8}
    one = tmp_path / "one.zarr"
    many = tmp_path / "many.zarr"
    r1 = run_sweep(toy_spec(make_spec, 1, precision=precision), str(one), scheduler=cluster2, pack=False)
    r4 = run_sweep(toy_spec(make_spec, 4, precision=precision), str(many), scheduler=cluster2, pack=False)
    assert r1.complete and r4.complete
    assert_same_by_value(one, many)


def test_money_game_solves_once_per_distinct_exact_parameters(tmp_path, make_spec):
    """buy_policy does not enter the landing chain: 6 reserves x 2 dice share 2 solves."""
    assert set(HK.exact_params) == {"board", "players", "jail_strategy", "dice_sides", "rounds"}
    text = make_spec("hk_monopoly", name="money",
                     grid={"buy_policy": [f"reserve:{r}" for r in range(0, 600, 100)], "dice_sides": [4, 6]},
                     run={"replicates": 2, "games": 1}, params={"rounds": 5},
                     tasks={"points_per_task": 4})
    url = tmp_path / "money.zarr"
    report = run_sweep(parse_spec(text, "money.toml"), str(url), workers=2, pack=False)
    assert report.complete and report.exact_solves == 2
    ds = raw(url)
    for dice in (4, 6):
        one = ds["exact_frequency"].sel(dice_sides=dice)
        params = HK.resolve_params({"buy_policy": "reserve:0", "dice_sides": dice, "rounds": 5})
        direct = HK.exact(params, {}, None)["exact_frequency"]
        for reserve in ds["buy_policy"].values:
            np.testing.assert_allclose(one.sel(buy_policy=reserve).values, direct, rtol=1e-12, atol=0)


def test_a_worker_killed_mid_chunk_costs_time_not_data(tmp_path, cluster2, make_spec, write_spec):
    """Two-point tasks, a worker process SIGKILLed while it simulates one:
    the store equals an undisturbed run of one point per task, bit for bit."""
    import os
    import signal

    from localdask import done_count, finish, kill, local_dask, start_client, toy_delay, wait_for

    text = toy(make_spec, dice=DICE, tasks={"replicates_per_task": 2, "points_per_task": 2})
    reference = tmp_path / "reference.zarr"
    assert run_sweep(toy_spec(make_spec, 1), str(reference), scheduler=cluster2).complete
    url = tmp_path / "store.zarr"
    slow, delay = toy_delay(tmp_path, 0.5)
    with local_dask(tmp_path / "logs", workers=2, env=slow) as cluster, cluster.client() as watch:
        proc = start_client(tmp_path, "run", str(write_spec(text)), "--scheduler", cluster.address,
                            "--store", str(url))
        try:
            wait_for(lambda: done_count(url) >= 4 or proc.poll() is not None, what="a first chunk")
            busy: list = []

            def found() -> bool:
                busy[:] = [w for w, keys in watch.processing().items() if any("sim-" in str(k) for k in keys)]
                return bool(busy) or proc.poll() is not None

            wait_for(found, what="a worker running a task")
            assert proc.poll() is None and done_count(url) < 40, "the sweep ended before the fault"
            (address, pid), = watch.run(os.getpid, workers=busy[:1]).items()
            os.kill(pid, signal.SIGKILL)
            wait_for(lambda: address not in watch.scheduler_info()["workers"] or proc.poll() is not None,
                     what="the scheduler noticing the dead worker")
            delay.unlink()
            rc, out, err = finish(proc)
        finally:
            kill(proc)
        assert rc == 0 and "store complete" in out, f"{out}\n{err}"
    assert_same_by_value(reference, url)


def test_many_points_per_task_on_s3_equal_a_local_run_and_repair(tmp_path, cluster2, make_spec, bucket_url,
                                                                  s3server, s3cluster):
    """On object storage, one chunk object per array per task (several points),
    a damaged chunk found and recomputed, the store equal to a local run."""
    spec = toy_spec(make_spec, 4)
    local = tmp_path / "local.zarr"
    assert run_sweep(spec, str(local), scheduler=cluster2, pack=False).complete
    report = run_sweep(spec, bucket_url, scheduler=s3cluster, pack=False)
    assert report.complete and report.tasks_run == 6
    fs = s3server.filesystem()
    root = bucket_url.removeprefix("s3://")
    assert len([p for p in fs.find(f"{root}/counts") if "/c/" in p]) == 6  # one object per task
    fs.pipe(f"{root}/counts/c/1/0/1/0/0", b"not a zarr chunk")
    assert run_sweep(spec, bucket_url, scheduler=s3cluster, pack=False).tasks_run == 1
    assert_same_by_value(local, bucket_url)
