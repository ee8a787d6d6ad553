"""The pipeline on larger grids: reads that span many zarr chunks, reads of a
selection, a compact run summary, workers that keep a store open, and the
exact state beside every query row."""

from __future__ import annotations

import re

import numpy as np
import pytest
import xarray as xr
import zarr

from boardsweep.pipeline.views import display, overview
from boardsweep.pipeline.analysis import headlines, query, read_finished
from boardsweep.pipeline import store
from boardsweep.pipeline.analysis import dataset
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import FILL

from clirun import run_cli  # tests/support is on sys.path (conftest)


def wide(text: str, sides: int = 13, replicates: int = 4) -> str:
    """The toy spec with ``sides`` dice sizes (x 2 rules) and ``replicates``."""
    grid = ", ".join(str(n) for n in range(2, 2 + sides))
    return (text.replace("dice_sides = [2, 3]", f"dice_sides = [{grid}]")
                .replace("replicates = 4", f"replicates = {replicates}"))


@pytest.fixture(scope="module")
def wide_store(tmp_path_factory, cluster2):
    from specs import TOY_SPEC  # tests/support is on sys.path

    url = str(tmp_path_factory.mktemp("wide") / "wide.zarr")  # the task layout: one chunk per task
    assert run_sweep(parse_spec(wide(TOY_SPEC), "wide.toml"), url, scheduler=cluster2, pack=False).complete
    return url


def plain_masked(url: str) -> xr.Dataset:
    """The store read with plain xarray, one dask task per chunk, masked by hand."""
    ds = xr.open_zarr(url)
    return ds.assign(counts=ds["counts"].where(ds["done"])).load()


def test_open_sweep_reads_many_zarr_chunks_per_dask_chunk(wide_store):
    ds = store.open_sweep(wide_store)
    zarr_chunks = zarr.open_array(wide_store, path="counts", mode="r").nchunks
    assert zarr_chunks == 26 * 2  # one per grid point and task block
    assert ds["counts"].data.npartitions == 1
    xr.testing.assert_identical(ds["counts"].load(), plain_masked(wide_store)["counts"])


def test_read_chunks_split_the_first_axis_under_the_limit(wide_store):
    ds = xr.open_zarr(wide_store, chunks=None)
    per_point = max(v.nbytes // v.sizes["dice_sides"] for v in ds.data_vars.values() if "dice_sides" in v.dims)
    chunks = store.read_chunks(ds, limit=3 * per_point)
    assert chunks["dice_sides"] == 3 and chunks["rule"] == -1 and chunks["replicate"] == -1
    opened = store.open_sweep(wide_store, chunks=chunks)
    assert opened["counts"].data.npartitions == -(-13 // 3)
    xr.testing.assert_identical(opened["counts"].load(), store.open_sweep(wide_store)["counts"].load())


def test_selection_reads_the_same_cells(wide_store):
    picked = store.open_sweep(wide_store, sel={"dice_sides": [5], "rule": ["sticky"]})
    full = store.open_sweep(wide_store).sel(dice_sides=[5], rule=["sticky"]).load()
    assert picked["counts"].shape[:2] == (1, 1)
    xr.testing.assert_identical(picked["counts"], full["counts"])
    assert query.rows(picked) == query.rows(full)


def test_cli_query_with_sel_matches_the_full_query(wide_store, capsys):
    assert run_cli("query", wide_store, "--format", "json") == 0
    every = __import__("json").loads(capsys.readouterr().out)
    assert run_cli("query", wide_store, "--sel", "dice_sides=7", "--sel", "rule=plain", "--format", "json") == 0
    some = __import__("json").loads(capsys.readouterr().out)
    assert some and some == [r for r in every if r["dice_sides"] == 7 and r["rule"] == "plain"]


def test_query_rows_say_the_exact_state(wide_store, tmp_path):
    import shutil

    copy = tmp_path / "pending.zarr"
    shutil.copytree(wide_store, copy)
    flags = zarr.open_array(str(copy), path="exact_done", mode="r+")
    flags[0, 1] = False  # dice_sides=2, rule=sticky: exact answer not computed yet
    found = query.rows(store.open_sweep(str(copy), check=False))
    states = {(r["dice_sides"], r["rule"]): r["exact_state"] for r in found}
    assert states[(2, "sticky")] == "pending"
    assert states[(2, "plain")] == states[(3, "sticky")] == "stored"
    assert all(r["exact"] is None for r in found if r["exact_state"] == "pending")


def test_compact_summary_above_24_points(wide_store, capsys):
    from rich.console import Console

    from boardsweep.pipeline.run.record import RunReport

    out = Console(width=100, record=True)
    display.run_summary(out, RunReport(store=wide_store, tasks_total=52, complete=True), read_finished(wide_store))
    text = out.export_text()
    assert "verdict: " in text and "at family-wise 1%" in text
    assert len(text.splitlines()) <= overview.MAX_LINES - 5  # the banner, bar and compile lines come before
    rows = [len(rows) for rows in _table_rows(text)]  # most of the 26 fit beside the verdict in one line,
    # the verdict in full (its untestable labels), the power and where the details are
    assert len(rows) == 1 and 16 <= rows[0] <= 26 and (rows[0] == 26 or f"showing {rows[0]} of 26" in text)
    ds = store.load_sweep(wide_store)
    narrow = Console(width=100, record=True)  # a budget too small for them: cut, flagged points kept
    used = overview.print_overview(narrow, ds, wide_store, 20, every_row="`query --summary --all`")
    text = narrow.export_text()
    assert used == len(text.splitlines()) <= 20
    tables = _table_rows(text)
    assert len(tables) == 1 and 3 <= len(tables[0]) < 26
    verdict = headlines.verdict(ds)
    points = list(dataset.grid_points(ds))
    shown = [tuple(row.split()[:2]) for row in tables[0]]
    assert shown[0] == ("2", "plain") or verdict["flagged"]  # the first points come first
    for i in verdict["flagged_points"][:len(shown)]:  # a flagged point is shown
        assert (str(points[i]["dice_sides"]), points[i]["rule"]) in shown
    assert f"showing {len(shown)} of 26 grid points" in text and "every point: `query --summary --all`" in text


def _table_rows(text: str) -> list[list[str]]:
    """The rows of each table of a summary: the lines between a header rule and a legend."""
    tables, rows, inside = [], [], False
    for line in text.splitlines():
        if set(line.strip()) == {"─"}:
            rows, inside = [], True
        elif inside and line and line[0] not in " #±" and not line.startswith(("verdict", "agree")):
            rows.append(line)
        elif inside:
            tables.append(rows)
            inside = False
    return tables


def test_small_grid_summary_lists_every_point(tmp_path, cluster2, toy_spec_text):
    from rich.console import Console

    from boardsweep.pipeline.run.record import RunReport

    url = str(tmp_path / "small.zarr")
    assert run_sweep(parse_spec(toy_spec_text, "toy.toml"), url, scheduler=cluster2).complete
    out = Console(width=100, record=True)
    display.run_summary(out, RunReport(store=url, tasks_total=8, complete=True), read_finished(url))
    text = out.export_text()
    assert "grid points;" not in text and "every point:" not in text  # nothing left out
    assert [len(rows) for rows in _table_rows(text)] == [4]  # every point in the one headline's table
    assert "verdict: AGREE at family-wise 1% (Holm): 2 of 2 points" in text  # the sticky rule has no exact answer


def test_workers_reopen_a_store_replaced_by_another_spec(tmp_path, cluster2, toy_spec_text):
    """Workers keep a store's arrays open between tasks; a store replaced at
    the same path by a spec of another shape must be opened afresh."""
    url = str(tmp_path / "same.zarr")
    first = parse_spec(wide(toy_spec_text, sides=2, replicates=4), "a.toml")
    second = parse_spec(wide(toy_spec_text, sides=3, replicates=6), "b.toml")
    assert run_sweep(first, url, scheduler=cluster2).complete
    assert run_sweep(second, url, scheduler=cluster2, overwrite=True).complete
    fresh = str(tmp_path / "fresh.zarr")
    assert run_sweep(second, fresh, workers=1).complete
    a, b = (zarr.open_group(u, mode="r") for u in (url, fresh))
    assert a["counts"].shape == b["counts"].shape == (3, 2, 6, 5, 8)
    for name in ("counts", "events", "done", "exact_frequency"):
        np.testing.assert_array_equal(a[name][...], b[name][...])


def test_task_size_from_seconds_is_calibrated_recorded_and_reused(tmp_path, monkeypatch, toy_spec_text):
    """``[tasks] seconds``: a worker times a replicate (the toy game sleeps
    TOY_DELAY_S per replicate), the block is recorded, a resume keeps it, and
    the integers equal those of a run with one replicate per task."""
    text = wide(toy_spec_text, sides=2, replicates=8)
    timed = parse_spec(text.replace("replicates_per_task = 2", "seconds = 0.07"), "timed.toml")
    monkeypatch.setenv("TOY_DELAY_S", "0.02")
    url = str(tmp_path / "timed.zarr")
    first = run_sweep(timed, url, workers=1, max_tasks=2)
    # floor(0.07 s / the replicate's time as the worker measured it): 2 or 3 on an idle machine, 1 on one
    # so loaded that a replicate took over 35 ms (CI once); never more than 3, the toy's 0.02 s being the least
    seconds = float(re.search(r"one replicate takes ([0-9.e+-]+) s", first.calibration).group(1))
    implied = {max(1, min(8, int(0.07 // (seconds * f)))) for f in (0.995, 1.005)}  # printed to 3 digits
    assert seconds >= 0.0199 and not first.complete and first.block in implied and first.block <= 3
    recorded = zarr.open_group(url, mode="r")
    assert recorded.attrs["replicates_per_task"] == first.block
    assert recorded["counts"].chunks[2] == first.block

    monkeypatch.setenv("TOY_DELAY_S", "0")  # a fresh calibration would now pick 8
    resumed = run_sweep(timed, url, workers=1)
    assert resumed.complete and resumed.block == first.block
    assert "recorded in the store" in resumed.calibration

    plain = str(tmp_path / "plain.zarr")
    assert run_sweep(parse_spec(text.replace("replicates_per_task = 2", "replicates_per_task = 1")),
                     plain, workers=1).complete
    a, b = zarr.open_group(url, mode="r"), zarr.open_group(plain, mode="r")
    for name in ("counts", "events", "rolls", "done"):
        np.testing.assert_array_equal(a[name][...], b[name][...])


def test_chunk_file_reader_matches_zarr(wide_store, tmp_path):
    from boardsweep.pipeline.store import chunkfiles

    group = zarr.open_group(wide_store, mode="r")
    for name in ("counts", "events", "done", "exact_frequency", "exact_done"):
        got, want = chunkfiles.read(wide_store, name), group[name][...]
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    part = chunkfiles.read(wide_store, "counts", (slice(3, 7), slice(1, 2)))
    np.testing.assert_array_equal(part, group["counts"][3:7, 1:2])

    other = zarr.create_array(str(tmp_path / "other.zarr"), shape=(4,), chunks=(2,), dtype="i8",
                              compressors=None)
    other[...] = 5
    assert chunkfiles.read(str(tmp_path / "other.zarr"), "") is None  # not boardsweep's codecs: zarr reads it


def test_chunk_file_reader_fill_and_damage(wide_store, tmp_path):
    import shutil

    from boardsweep.pipeline import errors
    from boardsweep.pipeline.store import chunkfiles

    copy = tmp_path / "copy.zarr"
    shutil.copytree(wide_store, copy)
    (copy / "counts" / "c" / "0" / "0" / "0" / "0" / "0").unlink()  # dice_sides=2, plain, replicates 0-1
    counts = chunkfiles.read(str(copy), "counts")
    assert (counts[0, 0, 0:2] == FILL).all() and (counts[0, 0, 2:] >= 0).all()
    (copy / "counts" / "c" / "1" / "0" / "0" / "0" / "0").write_bytes(b"not zstd")
    with pytest.raises(errors.ChunkUnreadable, match="does not decode"):
        chunkfiles.read(str(copy), "counts")


def test_load_sweep_equals_open_sweep(wide_store):
    xr.testing.assert_identical(store.load_sweep(wide_store), store.open_sweep(wide_store).load())
    sel = {"dice_sides": [4, 9], "rule": ["sticky"]}
    xr.testing.assert_identical(store.load_sweep(wide_store, sel=sel),
                                store.open_sweep(wide_store).sel(sel).load())


def test_status_of_a_large_grid_fits_a_screen(wide_store, tmp_path, capsys):
    import shutil

    assert run_cli("status", wide_store) == 0
    out = " ".join(capsys.readouterr().out.split())  # lines wrap at 80 columns
    assert "26 grid points: 26 finished, 0 partly done, 0 not started" in out
    assert "grid points not finished" not in out and "│" not in out
    copy = tmp_path / "partial.zarr"
    shutil.copytree(wide_store, copy)
    flags = zarr.open_array(str(copy), path="done", mode="r+")
    flags[12, 1, 0:2] = False  # dice_sides=14, sticky: replicates 0-1 no longer done
    assert run_cli("status", str(copy)) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "25 finished, 1 partly done" in out and "grid points not finished" in out
    assert "2/4" in out and "14" in out


def test_chunk_file_writer_writes_what_zarr_writes(wide_store, tmp_path):
    import shutil

    from boardsweep.pipeline.store import chunkfiles
    from boardsweep.pipeline import errors

    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    shutil.copytree(wide_store, ours)
    shutil.copytree(wide_store, theirs)
    values = np.arange(2 * 5 * 8, dtype=np.int64).reshape(2, 5, 8) * 7  # one task block of counts
    region = (3, 1, slice(2, 4))
    assert chunkfiles.write_chunk(str(ours), "counts", region, values) == "counts/c/3/1/1/0/0"
    zarr.open_array(str(theirs), path="counts", mode="r+")[region] = values
    assert (ours / "counts/c/3/1/1/0/0").read_bytes() == (theirs / "counts/c/3/1/1/0/0").read_bytes()
    np.testing.assert_array_equal(zarr.open_array(str(ours), path="counts", mode="r")[region], values)
    assert chunkfiles.write_chunk(str(ours), "done", region, np.ones(1, bool)) == "done/c/3/1/1"
    assert zarr.open_array(str(ours), path="done", mode="r")[region].all()

    before = (ours / "counts/c/3/1/0/0/0").read_bytes()
    with pytest.raises(errors.LayoutError, match="nothing was written"):  # two chunks: shared with other cells
        chunkfiles.write_chunk(str(ours), "counts", (3, 1, slice(1, 3)), values)
    assert (ours / "counts/c/3/1/0/0/0").read_bytes() == before
    assert not list(ours.rglob("*.tmp"))
