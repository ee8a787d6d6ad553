"""``status``, ``query`` and ``digest`` of a store on a frozen server (SIGSTOP of
``weed``: connections accepted, never answered) end in one line within the
deadline of a read, the deadline of one request (:func:`storage.read_deadline`:
attempts times the longer socket timeout, set through fsspec's configuration
here as a spec's ``[storage_options]`` or ``FSSPEC_S3`` would), not once per
request the command would still make."""

from __future__ import annotations

import copy
import os
import signal
import time

import fsspec
import pytest

from clirun import run_cli
from specs import spec_toml

from boardsweep.pipeline.store.storage import read_deadline

pytestmark = pytest.mark.slow

SPEC = spec_toml("toy", params={"size": 8}, grid={"dice_sides": [2, 3], "rule": ["plain"]},
                 run={"replicates": 2, "games": 2, "turns": 60}, checkpoints={"count": 5},
                 tasks={"replicates_per_task": 1})

#: Short socket timeouts (3 attempts of 1 s to connect, 2 s to read): a 6 s deadline.
SHORT = {"connect_timeout": 1, "read_timeout": 2, "retries": {"total_max_attempts": 3, "mode": "standard"}}


@pytest.fixture
def short_deadline(monkeypatch):
    """fsspec's S3 configuration with :data:`SHORT` timeouts, for this test only."""
    conf = copy.deepcopy(fsspec.config.conf)
    conf.setdefault("s3", {}).setdefault("config_kwargs", {}).update(SHORT)
    monkeypatch.setattr(fsspec.config, "conf", conf)


def test_reads_of_a_frozen_server_end_in_one_line_within_the_read_deadline(s3server, bucket_url, tmp_path,
                                                                            short_deadline, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    assert run_cli("-q", "run", str(spec), "--store", bucket_url, "--workers", "1") == 0
    deadline = read_deadline(bucket_url)
    assert deadline == 3 * 2  # the configuration read: attempts times the longer timeout
    per_attempt = deadline / 3  # the margin: one attempt more, for what ends the command
    capsys.readouterr()
    took = {}
    os.killpg(s3server.proc.pid, signal.SIGSTOP)
    try:
        for command in (("status",), ("query",), ("query", "--summary"), ("digest",)):
            began = time.monotonic()
            code = run_cli(*command, bucket_url)
            took[command] = time.monotonic() - began
            err = capsys.readouterr().err.strip().splitlines()
            assert code == 1 and len(err) == 1 and "did not answer" in err[0], (command, code, err, took)
            assert "Traceback" not in err[0] and "unexpected" not in err[0], err
    finally:
        os.killpg(s3server.proc.pid, signal.SIGCONT)
    assert max(took.values()) < deadline + per_attempt, took
    assert run_cli("-q", "status", bucket_url) == 0  # the server back: read as before
    print(f"deadline {deadline} s; took {took}")
