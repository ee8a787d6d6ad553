"""S3 requests to a frozen server (SIGSTOP of ``weed``: connections accepted,
never answered) or through a network that silently drops everything (a
proxy that stops forwarding, its connections open): the run ends in one
line within the documented deadline of a request (3 attempts of 6 s, 18 s:
docs/explanation/reliability.md) plus a margin, not once per request it
still makes (the task's writes, then the lock's release: 61-65 s).  The
lock left behind is taken over by the rerun, which completes the store."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest

from clirun import run_cli
from localdask import finish, kill, start_client
from s3server import wait_for_cells
from silent_proxy import SilentProxy
from specs import HERE, spec_toml  # tests/support is on sys.path

from boardsweep.pipeline.store.remote import S3_ATTEMPTS, S3_READ_TIMEOUT_S

#: What ends the run after the last request's deadline: the cancel, the cluster's close, the exit.
MARGIN_S = 10

SPEC = spec_toml("toy", params={"size": 8}, grid={"dice_sides": [2, 3], "rule": ["plain"]},
                 run={"replicates": 10, "games": 2, "turns": 60}, checkpoints={"count": 5},
                 tasks={"replicates_per_task": 1})


def documented_deadline_s() -> int:
    """The deadline of one request to object storage, as the docs state it (and the code sets it)."""
    text = (HERE.parents[1] / "docs" / "explanation" / "reliability.md").read_text()
    said = int(re.search(r"\| a request to object storage \|[^|]*\((\d+) s\)", text)[1])
    assert said == S3_ATTEMPTS * S3_READ_TIMEOUT_S, said
    return said


def _fault_mid_run(tmp_path, s3server, url: str, fault, spec_text: str = SPEC, env: dict | None = None):
    """(exit code, stderr, seconds from ``fault()`` to the run's end) of a run stopped by ``fault``."""
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_text)
    flag = tmp_path / "toy-delay"
    flag.touch()
    run = start_client(tmp_path, "-q", "run", str(spec), "--store", url, "--workers", "2",
                       env={"TOY_DELAY_S": "0.5", "TOY_DELAY_WHILE": str(flag), **(env or {})})
    try:
        wait_for_cells(s3server.filesystem(), url, run)
        assert run.poll() is None, "the run ended before the fault"
        fault()
        t0 = time.monotonic()
        rc, _, err = finish(run, timeout=120)
        return rc, err, time.monotonic() - t0
    finally:
        kill(run)
        flag.unlink()


def _one_lost_line(rc: int, err: str) -> None:
    lines = err.strip().splitlines()
    assert rc == 1 and len(lines) == 1 and "lost the storage" in lines[0], err[-2000:]
    assert "Traceback" not in err and "unexpected" not in err, err[-2000:]


@pytest.mark.slow
def test_a_frozen_server_ends_the_run_within_the_documented_deadline(s3server, bucket_url, tmp_path):
    frozen = []
    try:
        rc, err, took = _fault_mid_run(tmp_path, s3server, bucket_url,
                                       lambda: frozen.append(os.killpg(s3server.proc.pid, signal.SIGSTOP)))
    finally:
        if frozen:
            os.killpg(s3server.proc.pid, signal.SIGCONT)
    _one_lost_line(rc, err)
    assert took < documented_deadline_s() + MARGIN_S, took
    assert run_cli("-q", "run", str(tmp_path / "spec.toml"), "--store", bucket_url, "--workers", "2") == 0
    assert run_cli("-q", "status", bucket_url) == 0


@pytest.mark.slow
def test_a_network_that_drops_everything_ends_the_run_within_its_deadline(s3server, bucket_url, tmp_path):
    """Through a proxy that goes silent; the bounds the spec sets (3 attempts of 2 s) keep it short."""
    proxy = SilentProxy(s3server.s3)
    try:
        spec = SPEC + "\n[storage_options]\nconfig_kwargs = {read_timeout = 2, connect_timeout = 1}\n"
        rc, err, took = _fault_mid_run(tmp_path, s3server, bucket_url, proxy.silence, spec,
                                       env={"AWS_ENDPOINT_URL": proxy.endpoint})
    finally:
        proxy.close()
    _one_lost_line(rc, err)
    assert took < S3_ATTEMPTS * 2 + MARGIN_S, took
