"""A sweep against a real S3-compatible server (SeaweedFS on 127.0.0.1): the
store equals a local run of the same spec (integers bit for bit), the
integrity check and repair work there, and the credentials are never written
into the store."""

from __future__ import annotations


import numpy as np
import pytest
import xarray as xr

from clirun import run_cli
from boardsweep.pipeline.store import packing


def assert_same_store(a: xr.Dataset, b: xr.Dataset) -> None:
    assert set(a.data_vars) == set(b.data_vars)
    for name in a.data_vars:
        x, y = a[name].values, b[name].values
        if x.dtype.kind not in "fc":
            assert np.array_equal(x, y), name
        else:
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=0, equal_nan=True, err_msg=name)


@pytest.fixture(scope="module")
def swept(s3server, s3cluster, tmp_path_factory):
    """The toy spec run once into a local folder and once into the bucket: (local path, s3 URL)."""
    from specs import TOY_SPEC  # tests/support is on sys.path

    folder = tmp_path_factory.mktemp("s3sweep")
    spec = folder / "spec.toml"
    spec.write_text(TOY_SPEC)
    url = f"s3://{s3server.bucket()}/swept/sweep.zarr"
    assert run_cli("-q", "run", str(spec), "--store", str(folder / "local.zarr"), "--scheduler", s3cluster) == 0
    assert run_cli("-q", "run", str(spec), "--store", url, "--scheduler", s3cluster) == 0
    return folder / "local.zarr", url


@pytest.mark.slow
def test_a_sweep_on_s3_equals_a_local_run(swept):
    local, url = swept
    with xr.open_zarr(local) as a, xr.open_zarr(url) as b:
        assert_same_store(a.load(), b.load())
    assert run_cli("status", url) == 0


@pytest.mark.slow
def test_credentials_are_never_written_into_the_store(swept, s3server):
    from s3server import ACCESS_KEY, SECRET_KEY

    fs = s3server.filesystem()
    root = swept[1].removeprefix("s3://")
    files = [p for p in fs.find(root) if p.endswith(".json") or "/." in p]
    assert any(p.endswith("/zarr.json") for p in files)
    for path in files:
        text = fs.cat(path)
        assert ACCESS_KEY.encode() not in text and SECRET_KEY.encode() not in text, path
    with xr.open_zarr(swept[1]) as ds:
        attrs = repr(ds.attrs) + "".join(repr(ds[v].attrs) for v in ds.variables)
    assert ACCESS_KEY not in attrs and SECRET_KEY not in attrs and "history" in ds.attrs


@pytest.mark.slow
def test_the_check_finds_and_the_rerun_repairs_a_damaged_chunk_on_s3(swept, bucket_url, s3server, write_spec,
                                                                      toy_spec_text, s3cluster, capsys):
    spec = write_spec(toy_spec_text)
    local = swept[0]
    assert run_cli("-q", "run", str(spec), "--store", bucket_url, "--scheduler", s3cluster) == 0
    assert packing.unpack(bucket_url)  # the task layout, whose chunks the check reads (test_s3_packing: packed)
    fs = s3server.filesystem()
    root = bucket_url.removeprefix("s3://")
    chunk = sorted(p for p in fs.find(f"{root}/done") if "/c/" in p)[0]
    fs.pipe(chunk, b"not a zarr chunk")
    capsys.readouterr()
    assert run_cli("-q", "run", str(spec), "--store", bucket_url, "--scheduler", s3cluster) == 0
    out = capsys.readouterr().out
    assert "this run: " in out and "this run: 0 tasks" not in out, out  # the damaged task ran again
    with xr.open_zarr(local) as a, xr.open_zarr(bucket_url) as b:
        assert_same_store(a.load(), b.load())
