"""The embedded cluster and the run's time accounting: workers as threads of
the client's process by default (kernels compiled once), a process cluster
on request, the same store bit for bit either way; compilation reported
apart from kernel time and announced while it happens."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from contextlib import ExitStack

import dask
import numpy as np
import pytest
from numba import njit

from boardsweep.pipeline.cluster import Target, connect
from boardsweep.pipeline.execute import run_sweep
from boardsweep.pipeline.spec import parse_spec
from boardsweep.pipeline.warm import COMPILE_CLOCK
from boardsweep.pipeline.verify import compare_with_store, digest
from conftest import spec_toml

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
