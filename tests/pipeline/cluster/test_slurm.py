"""``boardsweep run --cluster slurm`` against a real SLURM (slurmctld, slurmd
and munged started in a temporary folder by :mod:`slurmtest`), through
dask-jobqueue configured only by its own ``DASK_JOBQUEUE__SLURM__*`` settings.

The store equals a local run (verify's comparison: integers bit for bit); a
worker job cancelled mid-sweep costs time, never data; no job is left after a
run, whether it succeeds, cannot start its jobs or is interrupted with Ctrl-C.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

import slurmtest
from specs import spec_toml  # tests/support is on sys.path
from localdask import RUNNER, done_count, finish, start_client, toy_delay, wait_for
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.run.verify import compare_with_store

pytest.importorskip("dask_jobqueue", reason="the SLURM test needs dask-jobqueue: pip install 'boardsweep[hpc]'")

#: 4 grid points x 8 tasks of one replicate, each task 0.4 s: long enough to cancel a job mid-sweep.
SPEC = spec_toml(
    "toy", name="slurm", params={"size": 8}, grid={"dice_sides": [2, 3], "rule": ["plain", "sticky"]},
    run={"replicates": 8, "games": 2, "turns": 60}, checkpoints={"count": 5},
    tasks={"replicates_per_task": 1},
)
DELAY_S = "0.4"


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    reason = slurmtest.missing()
    if reason:
        pytest.skip(reason)
    with slurmtest.slurm_cluster(tmp_path_factory.mktemp("slurm")) as cluster:
        yield cluster


def _env(slurm, tmp_path, **jobqueue: str) -> dict:
    """dask-jobqueue's own settings, as a user would export them, and SLURM_CONF."""
    settings = {"CORES": "1", "MEMORY": "2GiB", "WALLTIME": "00:10:00",
                "SCHEDULER_OPTIONS": '{"host": "127.0.0.1"}', "WORKER_EXTRA_ARGS": '["--host", "127.0.0.1"]',
                "LOG_DIRECTORY": str(tmp_path / "joblogs"), **jobqueue}
    return {"SLURM_CONF": slurm.env["SLURM_CONF"], "TOY_DELAY_S": DELAY_S,
            **{f"DASK_JOBQUEUE__SLURM__{k}": v for k, v in settings.items()}}


def _running_jobs(slurm) -> list[str]:
    return slurm.run("squeue", "-h", "-t", "RUNNING", "-o", "%i").split()


def test_slurm_sweep_equals_local_run_and_a_cancelled_job_loses_nothing(slurm, tmp_path, write_spec, cluster2):
    spec_path = write_spec(SPEC)
    url = tmp_path / "slurm.zarr"
    slow, delay = toy_delay(tmp_path, float(DELAY_S))
    proc = start_client(tmp_path, "run", str(spec_path), "--store", str(url), "--cluster", "slurm",
                        "--jobs", "2", env={**_env(slurm, tmp_path), **slow})
    try:
        wait_for(lambda: done_count(url) >= 2 or proc.poll() is not None, timeout=180, what="first tasks")
        assert proc.poll() is None, finish(proc)
        running = _running_jobs(slurm)
        assert len(running) == 2, running
        slurm.run("scancel", running[0])  # a worker job lost mid-sweep
        assert done_count(url) < 32
        delay.unlink()  # the fault is made: the rest at full speed
    finally:
        rc, out, err = finish(proc, timeout=300)
    assert rc == 0, f"{out}\n{err}\n{slurm.log_text()}"
    said = " ".join(out.split())  # the terminal's line breaks aside
    assert "store complete" in said and "on 2 slurm worker job(s) (dask-jobqueue)" in said, out
    assert slurm.wait_no_jobs() == [], "worker jobs left after the run"
    local = tmp_path / "local.zarr"
    assert run_sweep(parse_spec(SPEC), str(local), scheduler=cluster2).complete
    result = compare_with_store(str(local), str(url))
    assert result.ok and result.variables >= 4, result.differences


def test_a_job_that_never_starts_ends_the_run_naming_slurms_reason(slurm, tmp_path, write_spec):
    """The queue ``closed`` is down: the job waits with reason PartitionDown;
    the run gives up after --start-timeout in one line, and cancels the job."""
    spec_path = write_spec(SPEC)
    url = tmp_path / "never.zarr"
    t0 = time.monotonic()
    rc, out, err = finish(start_client(tmp_path, "run", str(spec_path), "--store", str(url), "--cluster", "slurm",
                                       "--start-timeout", "4", env=_env(slurm, tmp_path, QUEUE="closed")))
    took = time.monotonic() - t0
    assert rc == 1, f"{out}\n{err}"
    assert err.strip().count("\n") == 0, err
    assert "no slurm worker job started within 4 s" in err and "PartitionDown" in err, err
    said = " ".join(out.split())  # not a terminal: the waiting line is printed, not updated in place
    assert re.search(r"waiting for the first worker: slurm job\(s\) \d+: job \d+ PENDING \(PartitionDown\)", said), out
    assert took < 120, took
    assert slurm.wait_no_jobs() == [], "the pending job was left in the queue"
    assert done_count(url) == 0


def test_a_refused_submission_is_one_line(slurm, tmp_path, write_spec):
    spec_path = write_spec(SPEC)
    rc, out, err = finish(start_client(tmp_path, "run", str(spec_path), "--store", str(tmp_path / "x.zarr"),
                                       "--cluster", "slurm", env=_env(slurm, tmp_path, QUEUE="nosuchqueue")))
    assert rc == 1, f"{out}\n{err}"
    assert err.strip().count("\n") == 0, err
    assert "submitting a worker job failed" in err and "invalid partition" in err.lower(), err
    assert slurm.jobs() == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_run_cancels_its_jobs(slurm, tmp_path, write_spec, sig):
    spec_path = write_spec(SPEC)
    url = tmp_path / "interrupted.zarr"
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER)
    proc = subprocess.Popen(  # as from a terminal: SIGINT not ignored, whatever this test's parent does
        [sys.executable, str(runner), "run", str(spec_path), "--store", str(url), "--cluster", "slurm",
         "--jobs", "1:2"], env={**os.environ, **_env(slurm, tmp_path)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        wait_for(lambda: done_count(url) >= 1 or proc.poll() is not None, timeout=180, what="first task")
        assert proc.poll() is None, finish(proc)
        assert slurm.jobs(), "no worker job while the run is under way"
        proc.send_signal(sig)
    finally:
        rc, out, err = finish(proc, timeout=120)
    assert rc == 130, f"{out}\n{err}"
    assert slurm.wait_no_jobs() == [], "worker jobs left after an interrupted run"
    assert 1 <= done_count(url) < 32  # what finished is kept; a rerun resumes
