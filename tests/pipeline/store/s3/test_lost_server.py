"""The S3 server killed mid-run (for real: SIGKILL to ``weed``): the run ends
within a bounded time with one line and no worker tracebacks under ``-q``;
after the server is back, a rerun completes the store and it equals a local
run of the same spec."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest
import xarray as xr

from clirun import run_cli
from s3server import wait_for_cells
from specs import HERE, spec_toml  # tests/support is on sys.path

#: Bound on the time from the kill to the run's exit (the issue asks for about 30 s).
LOST_WITHIN_S = 45

SPEC = spec_toml("toy", params={"size": 8}, grid={"dice_sides": [2, 3], "rule": ["plain"]},
                 run={"replicates": 10, "games": 2, "turns": 60}, checkpoints={"count": 5},
                 tasks={"replicates_per_task": 1})


@pytest.mark.slow
def test_a_lost_server_ends_the_run_in_one_line_and_a_rerun_completes_it(s3server, bucket_url, tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    fs = s3server.filesystem()
    command = [sys.executable, "-c", "import toy_registry; from boardsweep.pipeline.cli.commands import main; main()",
               "-q", "run", str(spec), "--store", bucket_url]
    run = subprocess.Popen(command, cwd=HERE, env=os.environ.copy(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        wait_for_cells(fs, bucket_url, run)
        assert run.poll() is None, "the run ended before the server was killed"
        s3server.stop()
        killed = time.monotonic()
        _, err = run.communicate(timeout=LOST_WITHIN_S + 60)
        took = time.monotonic() - killed
    finally:
        if run.poll() is None:
            run.kill()
        if s3server.proc is None:
            s3server.start()
    lines = err.strip().splitlines()
    assert run.returncode == 1 and len(lines) == 1 and "lost the storage" in lines[0], err[-2000:]
    assert took < LOST_WITHIN_S, took
    local = tmp_path / "local.zarr"
    assert run_cli("-q", "run", str(spec), "--store", str(local)) == 0
    assert run_cli("-q", "run", str(spec), "--store", bucket_url) == 0
    with xr.open_zarr(local) as a, xr.open_zarr(bucket_url) as b:
        for name in a.data_vars:
            x, y = a[name].values, b[name].values
            if x.dtype.kind in "fc":
                np.testing.assert_allclose(x, y, rtol=1e-12, equal_nan=True, err_msg=name)
            else:
                assert np.array_equal(x, y), name
