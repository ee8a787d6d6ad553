"""The run's client and the cluster behind it keep nothing per finished task:
Dask's low-level logs (the messages each connection sent last, each holding a
task's arguments; transitions; events) are kept short in the clients and
clusters a run makes, so a run's memory stays flat however many tasks it runs."""

from __future__ import annotations

import gc
from contextlib import ExitStack

import dask

from boardsweep.pipeline.cluster.client import DASK_LOG_LENGTH, Target, connect, short_dask_logs
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from specs import spec_toml  # tests/support is on sys.path

LOG_KEY = "distributed.admin.low-level-log-length"
TASKS, POINTS_PER_TASK = 48, 50  # each task's arguments: 50 grid points, every cell of its chunk


def _spec():
    dice = list(range(2, 2 + TASKS * POINTS_PER_TASK // 2))  # x 2 rules: TASKS chunks of POINTS_PER_TASK points
    return parse_spec(spec_toml("toy", params={"size": 8}, grid={"dice_sides": dice, "rule": ["plain", "sticky"]},
                                run={"replicates": 1, "games": 1, "turns": 10}, checkpoints={"count": 1},
                                tasks={"points_per_task": POINTS_PER_TASK}), "toy.toml")


def test_a_run_keeps_no_memory_per_finished_task(tmp_path):
    """Objects alive after each finished task (gc-tracked, after a collection),
    from the 16th to the last: on the embedded cluster Dask kept every message
    of the last 1,000 (in-process each counts as one byte), each holding a
    task's whole arguments, so a 10^7-point sweep grew 0.7 GB over its 400 tasks."""
    alive: dict[int, int] = {}
    first = 16  # Dask's shortened logs are full by then

    def on_progress(finished: int, total: int) -> None:
        if finished in (first, total):
            gc.collect()
            alive[finished] = len(gc.get_objects())

    report = run_sweep(_spec(), str(tmp_path / "s.zarr"), workers=2, pack=False, on_progress=on_progress)
    assert report.complete and report.tasks_run == TASKS
    (_, before), (last, after) = sorted(alive.items())
    per_task = (after - before) / (last - first)
    assert per_task < 5, f"{per_task:.1f} objects kept per finished task ({before:,} -> {after:,})"


def test_short_logs_for_the_runs_own_clients_only(tmp_path):
    with dask.config.set({LOG_KEY: 1000}):
        assert short_dask_logs() == {LOG_KEY: DASK_LOG_LENGTH}
        with dask.config.set({LOG_KEY: 3}):  # a shorter one set by the user is kept
            assert short_dask_logs() == {LOG_KEY: 3}
        with ExitStack() as stack:
            client = connect(stack, Target(workers=1))
            assert dask.config.get(LOG_KEY) == DASK_LOG_LENGTH  # while the run lasts
            assert client.scheduler_comm.recent_message_log.maxlen == DASK_LOG_LENGTH
        assert dask.config.get(LOG_KEY) == 1000  # given back with the cluster
        with ExitStack() as stack:
            connect(stack, Target(client=client))  # a caller's own client: its settings untouched
            assert dask.config.get(LOG_KEY) == 1000
