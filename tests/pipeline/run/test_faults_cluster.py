"""Faults on the cluster path, with real processes (``dask scheduler``, two
``dask worker`` processes on 127.0.0.1, ``boardsweep run --scheduler`` as a
subprocess) and real stores: a killed worker, a killed client, a killed
scheduler and a task that raises.  Each ends in a store bit-identical to an
undisturbed run (or, for the failing task, every other cell done and equal).

The toy game sleeps ``TOY_DELAY_S`` per replicate on the workers so that the
faults land mid-sweep; waits are bounded and nothing asserts on wall time.
"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
import zarr

from localdask import (
    assert_bitwise_equal,
    done_count,
    finish,
    kill,
    local_dask,
    start_client,
    toy_delay,
    wait_for,
)
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import FILL

DATA = ["counts", "events", "rolls", "done", "exact_frequency", "exact_done"]
SLOW_S = 0.5  # per replicate, on the workers: a task takes >= 1 s


@pytest.fixture(scope="module")
def reference(tmp_path_factory, cluster2):
    """The undisturbed toy sweep, read only: one for the module."""
    from specs import TOY_SPEC  # tests/support is on sys.path

    url = tmp_path_factory.mktemp("faults") / "reference.zarr"
    assert run_sweep(parse_spec(TOY_SPEC), str(url), scheduler=cluster2).complete
    return url


def _processing_worker(client) -> tuple[str, int] | None:
    """(address, pid) of a worker process that has a simulation task now."""
    busy = [w for w, keys in client.processing().items() if any("sim-" in str(k) for k in keys)]
    if not busy:
        return None
    pids = client.run(os.getpid, workers=busy[:1])
    return next(iter(pids.items()), None)


def test_killed_worker_costs_time_not_data(tmp_path, toy_spec_text, write_spec, reference):
    spec_path = write_spec(toy_spec_text)
    url = tmp_path / "store.zarr"
    slow, delay = toy_delay(tmp_path, 1.0)
    with local_dask(tmp_path / "logs", workers=2, env=slow) as cluster, cluster.client() as watch:
        proc = start_client(tmp_path, "run", str(spec_path), "--scheduler", cluster.address, "--store", str(url))
        try:
            wait_for(lambda: done_count(url) >= 2 or proc.poll() is not None, what="first task")
            victim = None

            def found() -> bool:
                nonlocal victim
                victim = _processing_worker(watch)
                return victim is not None or proc.poll() is not None

            wait_for(found, what="a worker running a task")
            assert proc.poll() is None and done_count(url) < 16, "the sweep ended before the fault"
            address, pid = victim
            os.kill(pid, signal.SIGKILL)  # the worker process itself, mid-task; its nanny restarts it
            wait_for(lambda: address not in watch.scheduler_info()["workers"] or proc.poll() is not None,
                     what="the scheduler noticing the dead worker")
            delay.unlink()  # the fault is made: the rest at full speed
            rc, out, err = finish(proc)
        finally:
            kill(proc)
        assert rc == 0, f"{out}\n{err}\n{cluster.log_text()}"
        assert "store complete" in out
    assert_bitwise_equal(url, reference, DATA)


def test_half_written_task_is_rewritten(tmp_path, cluster2, toy_spec_text, reference):
    """What a worker killed between its writes leaves behind (some variables of
    a region written, its done flags not) is recomputed and overwritten."""
    spec = parse_spec(toy_spec_text)
    url = tmp_path / "store.zarr"
    run_sweep(spec, str(url), scheduler=cluster2, max_tasks=2)
    done = zarr.open_array(str(url), path="done", mode="r")[...]
    index = tuple(int(i) for i in np.argwhere(~done)[0])
    region = index[:-1] + (slice(index[-1], index[-1] + spec.block),)
    group = zarr.open_group(str(url), mode="r+")
    group["counts"][region] = 123456789  # garbage, as if half-written
    group["events"][region] = 7
    assert not group["done"][region].any()
    report = run_sweep(spec, str(url), scheduler=cluster2)
    assert report.complete and report.tasks_run == 8 - 2
    assert_bitwise_equal(url, reference, DATA)


def test_killed_client_resumes_on_cluster(tmp_path, toy_spec_text, write_spec, reference):
    """SIGKILL the client mid-sweep; the same command again completes it."""
    spec_path = write_spec(toy_spec_text)
    url = tmp_path / "store.zarr"
    args = ["run", str(spec_path), "--scheduler", None, "--store", str(url)]
    slow, delay = toy_delay(tmp_path, SLOW_S)
    with local_dask(tmp_path / "logs", workers=2, env=slow) as cluster:
        args[3] = cluster.address
        proc = start_client(tmp_path, *args)
        try:
            wait_for(lambda: done_count(url) >= 2 or proc.poll() is not None, what="first task")
            assert proc.poll() is None, proc.communicate()
        finally:
            kill(proc)
        delay.unlink()  # killed mid-sweep: the resume runs at full speed
        partial = done_count(url)
        assert 2 <= partial < 16
        rc, out, err = finish(start_client(tmp_path, *args))
        assert rc == 0, f"{out}\n{err}\n{cluster.log_text()}"
        assert "store complete" in out
    assert_bitwise_equal(url, reference, DATA)


def test_killed_scheduler_is_one_clear_error_then_a_new_one_resumes(
    tmp_path, toy_spec_text, write_spec, reference
):
    spec_path = write_spec(toy_spec_text)
    url = tmp_path / "store.zarr"
    with local_dask(tmp_path / "logs-a", workers=2, env={"TOY_DELAY_S": str(SLOW_S)}) as first:
        proc = start_client(tmp_path, "run", str(spec_path), "--scheduler", first.address, "--store", str(url))
        try:
            wait_for(lambda: done_count(url) >= 2 or proc.poll() is not None, what="first task")
            assert proc.poll() is None, proc.communicate()
            kill(first.scheduler)
            rc, out, err = finish(proc, timeout=120)
        finally:
            kill(proc)
    assert rc == 1, f"{out}\n{err}"
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("boardsweep: error: lost the Dask scheduler at " + first.address), err
    assert "rerun the same command" in lines[0]
    partial = done_count(url)
    assert partial < 16
    with local_dask(tmp_path / "logs-b", workers=2) as second:
        assert second.address != first.address
        rc, out, err = finish(start_client(tmp_path, "run", str(spec_path), "--scheduler", second.address,
                                           "--store", str(url)))
        assert rc == 0, f"{out}\n{err}\n{second.log_text()}"
    assert_bitwise_equal(url, reference, DATA)


def test_unreachable_scheduler_is_one_clear_error(tmp_path, toy_spec_text, write_spec):
    from localdask import free_port

    address = f"tcp://127.0.0.1:{free_port()}"
    rc, out, err = finish(start_client(tmp_path, "run", str(write_spec(toy_spec_text)), "--scheduler", address,
                                       "--store", str(tmp_path / "s.zarr"),
                                       env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "5s"}), timeout=120)
    assert rc == 1 and err.strip().count("\n") == 0, err
    assert err.startswith(f"boardsweep: error: cannot reach the Dask scheduler at {address}"), err
    assert "after 5 s" in err and "nothing was created" in err and not (tmp_path / "s.zarr").exists(), err


def test_failing_task_is_named_and_the_rest_is_stored(tmp_path, toy_spec_text, write_spec, reference):
    """A task that raises (see failing_game.py: a test-only game whose kernel
    raises for dice_sides=3, rule='sticky') fails the run with exit code 1 and
    a message naming the grid point and the error; every other cell is done
    and equal to the undisturbed toy sweep; the failed cells read as missing."""
    spec_path = write_spec(toy_spec_text.replace('game = "toy"', 'game = "failing"'))
    url = tmp_path / "store.zarr"
    with local_dask(tmp_path / "logs", workers=2) as cluster:
        rc, out, err = finish(start_client(tmp_path, "run", str(spec_path), "--scheduler", cluster.address,
                                           "--store", str(url)))
    assert rc == 1, f"{out}\n{err}"
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    message = lines[0]
    assert message.startswith("boardsweep: error: 2 of 12 tasks failed")
    error = "KernelFailure: the sticky ring cannot use 3-sided dice"
    assert message.count(error) == 1, message  # one error, said once, with where it happened
    assert f"{error} (test failure) (at dice_sides=3, rule='sticky' (replicates " in message
    assert "(replicates 0-1)" in message and "(replicates 2-3)" in message and "rerun the same command" in message
    done = zarr.open_array(str(url), path="done", mode="r")[...]
    bad = (1, 1)  # dice_sides=3, rule=sticky
    assert not done[bad].any()
    others = np.ones(done.shape[:2], bool)
    others[bad] = False
    assert done[others].all()
    assert zarr.open_array(str(url), path="exact_done", mode="r")[...].all()
    for name in ("counts", "events", "rolls"):
        got = zarr.open_array(str(url), path=name, mode="r")[...]
        want = zarr.open_array(str(reference), path=name, mode="r")[...]
        assert np.array_equal(got[others], want[others]), name
        assert (got[bad] == FILL).all(), name  # never written: the fill value (read as missing)
