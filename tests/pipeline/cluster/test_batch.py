"""The batch-cluster path's scheduler (dask-jobqueue, started in this process) listens
for its dashboard on a free port: never "Port 8787 is already in use" in the run's output."""

from __future__ import annotations

import logging
import socket
import warnings
from contextlib import ExitStack

import dask.config
import pytest

pytest.importorskip("dask_jobqueue", reason="the batch path needs dask-jobqueue: pip install 'boardsweep[hpc]'")


@pytest.fixture
def port_8787_taken():
    """Port 8787 held on every interface while the test runs (or already held by another program)."""
    held = socket.socket()
    try:
        held.bind(("", 8787))
        held.listen()
    except OSError:  # someone else holds it: taken all the same
        pass
    yield
    held.close()


def test_batch_scheduler_takes_a_free_dashboard_port(port_8787_taken, tmp_path, monkeypatch, caplog):
    from boardsweep.pipeline.cluster.batch import Jobs, start_jobs

    sbatch = tmp_path / "sbatch"  # on PATH, as where jobs can be submitted; no job is submitted (0 jobs)
    sbatch.write_text("#!/bin/sh\nexit 1\n")
    sbatch.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{__import__('os').environ['PATH']}")
    settings = {"jobqueue.slurm.cores": 1, "jobqueue.slurm.memory": "1GiB",
                "jobqueue.slurm.scheduler-options": {"host": "127.0.0.1"},
                "jobqueue.slurm.log-directory": str(tmp_path / "logs")}
    with (dask.config.set(settings), caplog.at_level(logging.WARNING, logger="distributed"),
          warnings.catch_warnings(record=True) as warned, ExitStack() as stack):
        warnings.simplefilter("always")
        cluster, _ = start_jobs(stack, "slurm", Jobs(0, 0))
        port = cluster.scheduler.http_server.port
    said = [str(w.message) for w in warned] + [r.getMessage() for r in caplog.records]
    assert not [line for line in said if "already in use" in line], said  # was: "Port 8787 is already in use"
    assert port != 8787
