"""The embedded cluster and the run's time accounting: workers as threads of
the client's process by default (kernels compiled once), a process cluster
on request, the same store bit for bit either way; compilation reported
apart from kernel time and announced while it happens."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from contextlib import ExitStack

import dask
import numpy as np
import pytest
from numba import njit

from boardsweep.pipeline.cluster.client import Target, connect
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.plan.tasks import plan_tasks
from boardsweep.pipeline.run.worker import simulate_task
from boardsweep.pipeline.run.startup import WarmUp
from boardsweep.pipeline.run.warm import COMPILE_CLOCK
from boardsweep.pipeline.run.verify import compare_with_store, digest
from boardsweep.core import games
from boardsweep.pipeline.errors import TasksFailed
from specs import TOY_SPEC, spec_toml  # tests/support is on sys.path

SPEC = spec_toml(
    "monopoly", name="kinds", seed=11,
    params={"chance_deck": "standard", "tally": "per_roll"},
    grid={"dice_sides": [4, 6], "deck_policy": ["independent", "shuffled_cycle"]},
    run={"replicates": 4, "games": 3, "players": 2, "turns": 400}, checkpoints={"count": 4},
    tasks={"replicates_per_task": 2},
)


def _worker_pids(processes: bool) -> set[int]:
    with dask.config.set({"boardsweep.processes": processes}), ExitStack() as stack:
        client = connect(stack, Target(workers=2))
        return set(client.run(os.getpid).values())


def test_default_workers_are_threads_of_this_process_and_processes_on_request():
    assert _worker_pids(False) == {os.getpid()}
    pids = _worker_pids(True)
    assert len(pids) == 2 and os.getpid() not in pids


@pytest.mark.slow
def test_threaded_default_and_process_cluster_give_the_same_store(tmp_path):
    spec = parse_spec(SPEC)
    threads = run_sweep(spec, str(tmp_path / "threads.zarr"), workers=2)
    with dask.config.set({"boardsweep.processes": True}):
        processes = run_sweep(spec, str(tmp_path / "processes.zarr"), workers=2)
    assert threads.complete and processes.complete and threads.workers == processes.workers == 2
    a, b = digest(threads.store)["variables"], digest(processes.store)["variables"]
    integers = [name for name, entry in a.items() if "sha256" in entry]
    assert {"counts", "events", "rolls"} <= set(integers)
    assert {n: a[n] for n in integers} == {n: b[n] for n in integers}  # bit for bit
    result = compare_with_store(threads.store, processes.store)  # floats within the stated tolerance
    assert result.ok, result.message()


def _simulating(spec):
    """What run_sweep gives the head start with a new store's tasks."""
    return lambda task: simulate_task(spec.game, spec.seed, task, spec.run_shape, spec.checkpoints, spec.series_batches)


@pytest.mark.slow
def test_tasks_simulated_while_the_run_starts_are_stored_as_a_worker_stores_them(tmp_path):
    """The warm-up thread's head start: tasks it simulated before the
    cluster took the rest are written by the run exactly as a worker writes
    them (bit for bit the store of a run on worker processes, which has no
    head start), counted once each, and never given to a worker too."""
    spec = parse_spec(SPEC)
    warming = WarmUp(spec)
    warming.head_start(plan_tasks(spec), _simulating(spec))  # what run_sweep offers a new store; the first stands
    deadline = time.monotonic() + 120
    while len(warming.results) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    early = run_sweep(spec, str(tmp_path / "early.zarr"), workers=2, warming=warming)
    with dask.config.set({"boardsweep.processes": True}):
        processes = run_sweep(spec, str(tmp_path / "processes.zarr"), workers=2)
    assert early.complete and early.head_start >= 3 and processes.head_start == 0
    assert early.tasks_run == processes.tasks_run == len(plan_tasks(spec))  # each task once
    keys = [r["key"] for r in early.records if not r["key"].startswith("exact-")]
    assert sorted(keys) == sorted(task.key for task in plan_tasks(spec))
    a, b = digest(early.store)["variables"], digest(processes.store)["variables"]
    integers = [name for name, entry in a.items() if "sha256" in entry]
    assert {n: a[n] for n in integers} == {n: b[n] for n in integers}  # bit for bit


@pytest.mark.slow
def test_a_task_failing_in_the_head_start_is_reported_as_a_workers_failure(tmp_path):
    """The failing game raises at its last grid point, whose two tasks the
    head start takes first: the run fails with the same failures, listed the
    same way, as a run on worker processes (no head start), and every other
    cell is stored."""
    games.register("failing", "failing_game")
    spec = parse_spec(TOY_SPEC.replace('game = "toy"', 'game = "failing"'))
    warming = WarmUp(spec)
    warming.head_start(plan_tasks(spec), _simulating(spec))
    deadline = time.monotonic() + 120
    while len(warming.errors) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(warming.errors) == 2
    with pytest.raises(TasksFailed) as early:
        run_sweep(spec, str(tmp_path / "early.zarr"), workers=1, warming=warming)
    with dask.config.set({"boardsweep.processes": True}), pytest.raises(TasksFailed) as processes:
        run_sweep(spec, str(tmp_path / "processes.zarr"), workers=1)
    assert sorted(map(repr, early.value.failures)) == sorted(map(repr, processes.value.failures))
    assert len(early.value.failures) == 2
    said = str(early.value).replace("early.zarr", "STORE")
    assert said == str(processes.value).replace("processes.zarr", "STORE")  # failures listed in task order
    assert said.startswith("2 of 12 tasks failed: KernelFailure: the sticky ring cannot use 3-sided dice")


def test_compile_clock_counts_this_threads_compilation_only():
    @njit(nogil=True)
    def fresh(x):  # a new function: compiled at its first call
        return np.sqrt(x) + 1.0

    before = COMPILE_CLOCK.seconds()
    other: list[float] = []
    thread = threading.Thread(target=lambda: other.append(COMPILE_CLOCK.seconds()))
    thread.start()
    thread.join()
    fresh(2.0)
    compiled = COMPILE_CLOCK.seconds() - before
    assert compiled > 0
    assert other == [0.0]  # another thread's clock is its own
    fresh(3.0)  # compiled already: no compiler lock taken
    assert COMPILE_CLOCK.seconds() - before == compiled


@pytest.mark.slow
def test_first_run_announces_compilation_and_reports_it_apart(tmp_path):
    """With an empty numba cache the run says it compiles and reports the
    compile time apart from the kernel time; the second run loads the cache."""
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_toml(
        "chutes_ladders", grid={"sides": [4, 6]}, params={"board": "milton_bradley"},
        run={"replicates": 2, "games": 50}, checkpoints={"count": 3}, tasks={"replicates_per_task": 1}))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"), "COLUMNS": "200"}
    outputs = []
    for i in range(2):
        out = subprocess.run(
            [sys.executable, "-m", "boardsweep", "run", str(spec), "--store", str(tmp_path / f"s{i}.zarr")],
            capture_output=True, text=True, env=env, timeout=600)
        assert out.returncode == 0, out.stdout + out.stderr
        outputs.append(out.stdout)
    first, second = outputs
    assert "compiling kernels (first run only)" in first
    assert "compiling kernels " in first.split("wall ")[-1]  # the summary's compile figure
    assert "compiling kernels (first run only)" not in second
