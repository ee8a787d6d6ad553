"""End to end on real Dask clusters and real zarr stores with the real Monopoly
game: layout, determinism, resume, safety.  Most runs reuse one two-worker
LocalCluster (``cluster2``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
import zarr

from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.store import LOCK_NAME
from boardsweep.pipeline.errors import StoreLocked
from boardsweep.pipeline.store import open_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import StoreMismatch
from boardsweep.pipeline.run.verify import FLOAT_ATOL, FLOAT_RTOL

VARIABLES = ("counts", "events", "rolls")


def raw(url, name="counts") -> np.ndarray:
    """The raw integer array as stored (no decoding, no masking)."""
    return zarr.open_array(str(url), path=name, mode="r")[...]


def assert_same_arrays(a, b, index=None):
    for name in VARIABLES + ("exact_frequency",):
        x, y = raw(a, name), raw(b, name)
        if index is not None:
            x = x[index]
        assert x.dtype == y.dtype and x.shape == y.shape
        if x.dtype.kind == "f":  # solver output: within the stated tolerance, never bit for bit
            np.testing.assert_allclose(x, y, rtol=FLOAT_RTOL, atol=FLOAT_ATOL, equal_nan=True, err_msg=name)
        else:
            assert np.array_equal(x, y), name


@pytest.fixture
def spec_text(monopoly_spec_text):
    return monopoly_spec_text


@pytest.fixture
def reference(tmp_path_factory, cluster2, spec_text):
    """The sweep run once, complete (shared by the determinism tests)."""
    url = tmp_path_factory.mktemp("ref") / "ref.zarr"
    report = run_sweep(parse_spec(spec_text), str(url), scheduler=cluster2)
    assert report.complete
    return url


def test_store_layout(reference, spec_text):
    ds = xr.open_zarr(reference)
    assert dict(ds.sizes) == {"dice_sides": 2, "deck_policy": 2, "replicate": 4, "checkpoint": 5,
                              "location": 41, "batch": 64}  # batch: the equal-batch series (format 7)
    assert ds["series_counts"].dims == ("dice_sides", "deck_policy", "replicate", "batch", "location")
    np.testing.assert_array_equal(ds["series_counts"].sum("batch").values, ds["counts"].isel(checkpoint=-1).values)
    assert list(ds["dice_sides"].values) == [4, 6]
    assert list(ds["deck_policy"].values) == ["independent", "shuffled_cycle"]
    assert list(ds["location"].values[[0, 10, 39, 40]]) == ["GO", "JAIL", "H2", "IN_JAIL"]
    assert list(ds["checkpoint"].values) == [1, 4, 17, 72, 300]  # log-spaced
    assert ds["counts"].dims == ("dice_sides", "deck_policy", "replicate", "checkpoint", "location")
    assert ds["exact_frequency"].dims == ("dice_sides", "deck_policy", "location")
    assert ds["done"].dims == ("dice_sides", "deck_policy", "replicate") and bool(ds["done"].all())
    assert raw(reference).dtype == np.int64
    # tasks wrote one chunk each (kept under .boardsweep/flat-cells/); the complete store is packed whole
    assert zarr.open_array(str(reference), path=".boardsweep/flat-cells/counts").chunks == (1, 1, 2, 5, 41)
    assert zarr.open_array(str(reference), path=".boardsweep/flat-cells/done").chunks == (1, 1, 2)
    assert zarr.open_array(str(reference), path="counts").chunks == (2, 2, 4, 5, 41)
    assert ds["counts"].data.numblocks == (1, 1, 1, 1, 1)  # plain xarray: one dask chunk
    attrs = ds.attrs
    assert attrs["spec_text"] == spec_text
    assert attrs["spec_sha256"] == parse_spec(spec_text).sha256
    for key in ("boardsweep_version", "numpy_version", "numba_version", "dask_version",
                "xarray_version", "zarr_version", "git_revision", "rng_scheme", "created"):
        assert attrs[key], key
    # counts sum to events; exact: the core's answer for independent, NaN for shuffled
    from boardsweep.core.monopoly.exact import long_run_frequency
    from boardsweep.core.monopoly.rules import Rules

    counts = raw(reference)
    assert np.array_equal(counts.sum(-1), raw(reference, "events"))
    exact = raw(reference, "exact_frequency")
    for i, n in enumerate((4, 6)):
        rules = Rules(dice_sides=n, tally="per_landing", jail_strategy="long")
        np.testing.assert_allclose(exact[i, 0], long_run_frequency(rules), rtol=FLOAT_RTOL, atol=FLOAT_ATOL)
    assert np.isnan(exact[:, 1]).all()
    # each cell is the game's own simulate for its seed (derived from parameter values)
    from boardsweep.core.games import get_game
    from boardsweep.pipeline.plan.tasks import replicate_seed

    game = get_game("monopoly")
    params = game.resolve_params({"dice_sides": 6, "deck_policy": "shuffled_cycle",
                                  "tally": "per_landing", "jail_strategy": "long"})
    direct = game.simulate(params, replicate_seed(7, params, 3),
                           {"games": 2, "players": 2, "turns": 300}, ds["checkpoint"].values)
    assert np.array_equal(counts[1, 1, 3], direct["counts"])
    # replicates differ from one another
    assert not np.array_equal(counts[0, 0, 0], counts[0, 0, 1])


def test_store_opens_without_boardsweep(reference):
    code = (
        "import sys, xarray as xr; ds = xr.open_zarr(sys.argv[1]); "
        "assert not any(m.split('.')[0] in ('boardsweep', 'pipeline', 'core') for m in sys.modules); "
        "print(int(ds['counts'].sum()), ds['counts'].dtype)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(reference)], capture_output=True,
                         text=True, cwd="/", env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[0]) == int(raw(reference).sum())


def test_one_vs_two_workers(reference, tmp_path, spec_text):
    url = tmp_path / "one.zarr"
    report = run_sweep(parse_spec(spec_text), str(url), workers=1)
    assert report.workers == 1 and report.dashboard
    assert_same_arrays(url, reference)


def test_futures_in_flight_are_bounded(reference, tmp_path, cluster2, spec_text, monkeypatch):
    """A small window (2 futures at a time) runs every task and gives the same store."""
    from boardsweep.pipeline.run import dispatch

    monkeypatch.setattr(dispatch, "IN_FLIGHT_PER_WORKER", 1)
    monkeypatch.setattr(dispatch, "MIN_IN_FLIGHT", 2)
    url = tmp_path / "window.zarr"
    report = run_sweep(parse_spec(spec_text), str(url), scheduler=cluster2)
    assert report.complete and report.tasks_run == 8 and report.exact_run == 4
    assert report.max_in_flight == 2
    assert_same_arrays(reference, url)


def test_task_block_size_does_not_matter(reference, tmp_path, cluster2, spec_text):
    for block in (1, 4):
        url = tmp_path / f"b{block}.zarr"
        text = spec_text.replace("replicates_per_task = 2", f"replicates_per_task = {block}")
        run_sweep(parse_spec(text), str(url), scheduler=cluster2)
        assert zarr.open_array(str(url), path=".boardsweep/flat-cells/counts").chunks[2] == block
        assert_same_arrays(url, reference)


def test_interrupted_run_reads_missing_then_resumes(reference, tmp_path, cluster2, spec_text):
    url = tmp_path / "partial.zarr"
    spec = parse_spec(spec_text)
    first = run_sweep(spec, str(url), scheduler=cluster2, max_tasks=3)
    assert first.tasks_run == 3 and not first.complete
    done = raw(url, "done")
    assert done.sum() == 3 * 2
    # unfinished cells are missing, never zero: with and without boardsweep
    for ds in (open_sweep(url), xr.open_zarr(url)):
        counts = ds["counts"].values
        assert np.isnan(counts[~done]).all() and not np.isnan(counts[done]).any()
    second = run_sweep(spec, str(url), scheduler=cluster2)
    assert second.tasks_run == 8 - 3 and second.exact_run == 0 and second.complete
    assert_same_arrays(url, reference)
    third = run_sweep(spec, str(url), scheduler=cluster2)
    assert third.tasks_run == 0 and third.complete


def test_extended_axis_keeps_old_cells(reference, tmp_path, cluster2, spec_text):
    url = tmp_path / "wide.zarr"
    text = spec_text.replace("dice_sides = [4, 6]", "dice_sides = [4, 5, 6]")
    run_sweep(parse_spec(text), str(url), scheduler=cluster2)
    assert_same_arrays(url, reference, index=([0, 2],))  # dice_sides 4 and 6


def test_different_spec_refused_then_overwrite(reference, tmp_path, cluster2, spec_text):
    import shutil

    url = tmp_path / "copy.zarr"
    shutil.copytree(reference, url)
    before = raw(url)
    changed = parse_spec(spec_text.replace("seed = 7", "seed = 8").replace("turns = 300", "turns = 301"))
    with pytest.raises(StoreMismatch) as info:
        run_sweep(changed, str(url), scheduler=cluster2)
    message = str(info.value)
    assert str(url) in message and "seed: 7 in the store, 8 in" in message and "run.turns" in message
    assert np.array_equal(raw(url), before) and not (url / LOCK_NAME).exists()
    # comments and layout do not count as a different spec
    same = parse_spec("# comment\n" + spec_text)
    assert run_sweep(same, str(url), scheduler=cluster2).tasks_run == 0
    report = run_sweep(changed, str(url), scheduler=cluster2, overwrite=True)
    assert report.complete and xr.open_zarr(url).attrs["spec_sha256"] == changed.sha256
    assert not np.array_equal(raw(url)[..., :4], before[..., :4])


def test_live_lock_refused_and_stale_lock_taken_over(tmp_path, cluster2, spec_text):
    import socket

    spec = parse_spec(spec_text)
    url = tmp_path / "locked.zarr"
    url.mkdir()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock = {"pid": sleeper.pid, "host": socket.gethostname(), "since": "then"}
        (url / LOCK_NAME).parent.mkdir()
        (url / LOCK_NAME).write_text(json.dumps(lock))
        with pytest.raises(StoreLocked) as info:
            run_sweep(spec, str(url), scheduler=cluster2)
        assert f"pid {sleeper.pid}" in str(info.value) and socket.gethostname() in str(info.value)
        assert sorted(str(p.relative_to(url)) for p in url.rglob("*")) == [".boardsweep", LOCK_NAME]
    finally:
        sleeper.kill()
        sleeper.wait()
    report = run_sweep(spec, str(url), scheduler=cluster2)  # the holder is dead: stale
    assert report.complete and not (url / LOCK_NAME).exists()


def test_foreign_directory_refused(tmp_path, cluster2, spec_text):
    url = tmp_path / "mine"
    url.mkdir()
    (url / "thesis.tex").write_text("precious")
    for overwrite in (False, True):
        with pytest.raises(StoreMismatch):
            run_sweep(parse_spec(spec_text), str(url), scheduler=cluster2, overwrite=overwrite)
    assert (url / "thesis.tex").read_text() == "precious"
