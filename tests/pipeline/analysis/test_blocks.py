"""The verdict and the run's overview block by block: the same answer as
over the whole grid at once, whatever the block size, on a real store with
a planted disagreement (two grid points' mean rolls moved by a few
standard errors)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from rich.console import Console

from boardsweep.pipeline.analysis import blocks, headlines, read_finished
from boardsweep.pipeline.analysis.dataset import grid_size
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import load_sweep, open_sweep
from boardsweep.pipeline.views.overview import print_overview, shown_points

from specs import spec_toml  # tests/support is on sys.path

#: The verdict's keys a block-by-block verdict gives as the whole grid's does.
SAME = ("alpha", "tests", "points", "tested_points", "agree", "min_p", "min_p_holm", "at", "flagged_points",
        "text", "power")


@pytest.fixture(scope="module")
def planted(tmp_path_factory, cluster2):
    """Shut the Box on 3 x 3 grid points, 4 replicates: every point tested;
    points 2 and 7 (flat, grid order) get mean rolls 3% off their truth."""
    url = str(tmp_path_factory.mktemp("blocks") / "stb.zarr")
    text = spec_toml("shut_the_box", name="stb", seed=5, grid={"dice_sides": [2, 3, 4],
                     "policy": ["optimal", "greedy", "random"]}, run={"replicates": 4, "games": 2000},
                     tasks={"replicates_per_task": 4})
    assert run_sweep(parse_spec(text, "stb.toml"), url, scheduler=cluster2).complete
    ds = load_sweep(url, check=False)
    rolls = ds["rolls_sum"].transpose("dice_sides", "policy", ...)
    moved = rolls.values.astype(float)
    moved.reshape(9, *moved.shape[2:])[[2, 7]] *= 1.03
    ds["rolls_sum"] = rolls.copy(data=moved.astype(rolls.dtype))
    return url, ds


def test_grid_blocks_cover_the_grid_in_order_within_the_bound():
    for shape, most in (((3, 4, 5), 7), ((3, 4, 5), 20), ((3, 4, 5), 1000), ((7,), 3), ((), 5), ((2, 30), 4)):
        seen = []
        for offset, region in blocks.grid_blocks(shape, most):
            flat = np.arange(int(np.prod(shape))).reshape(shape)[region].ravel()
            assert 0 < flat.size <= most and flat.tolist() == list(range(offset, offset + flat.size))
            seen += flat.tolist()
        assert seen == list(range(int(np.prod(shape))))


def test_a_store_opened_in_block_chunks_reads_each_block_from_one_chunk(planted):
    url, _ = planted
    for most in (1, 2, 3, 4, 9):
        ds = open_sweep(url, check=False, chunks=blocks.block_chunks(open_sweep(url, check=False), most))
        axes = ["dice_sides", "policy"]
        for _, region in blocks.grid_blocks((3, 3), most):
            part = ds["rolls_sum"].isel(dict(zip(axes, region))).data
            assert part.npartitions == 1, (most, region)


@pytest.mark.parametrize("most", [1, 2, 4, 9])
def test_the_verdict_block_by_block_is_the_whole_grids(planted, most):
    _, ds = planted
    whole, streamed = headlines.verdict(ds), blocks.block_verdict(ds, most=most)
    assert whole["flagged_points"] and whole["text"].startswith("DISAGREE")  # the planted bias is seen
    for key in SAME:
        assert streamed[key] == whole[key], key
    assert [(f["point"], f["p_holm"]) for f in streamed["flagged"]] == \
           [(f["point"], f["p_holm"]) for f in whole["flagged"]]


def test_the_verdicts_estimates_without_intervals_test_as_the_whole_estimates_do(planted):
    """The verdict's estimates skip the intervals (``intervals=False``): every
    column and attribute a test or the power statement reads is the full
    estimates' bit for bit (Shut the Box: Hall's skewed-mean tests, their
    se_df from the games' kurtosis), and no interval is made."""
    _, ds = planted
    full, bare = headlines.estimates(ds), headlines.estimates(ds, intervals=False)
    assert list(bare) == list(full) and full
    for name, est in full.items():
        assert "low" not in bare[name] and "high" not in bare[name] and "low" in est
        for column in ("estimate", "p", "z", "test_se", "test_df", "se_df", "skew_a", "known_se", "exact"):
            if column in est:
                assert bare[name][column].values.tobytes() == est[column].values.tobytes(), (name, column)
        for attr in ("kind", "interval", "test", "test_kind", "untestable", "exact_void", "dim"):
            assert bare[name].attrs.get(attr) == est.attrs.get(attr), (name, attr)
    assert any(est.attrs.get("test_kind") == "skew_t" for est in full.values())  # the kurtosis' se_df path
    pd.testing.assert_frame_equal(headlines.tests(ds, bare, spread=True, known=True),
                                  headlines.tests(ds, full, spread=True, known=True), check_exact=True)


@pytest.mark.parametrize("rows", [3, 30])
def test_the_run_overview_block_by_block_prints_the_whole_grids(planted, rows):
    """What a run prints from the points shown and the verdict over the
    blocks is what it printed from the whole grid in memory."""
    url, ds = planted
    shown = blocks.run_overview(ds, rows, shown_points, most=2)
    assert shown.points == 9 and len(shown.ds["dice_sides"]) * len(shown.ds["policy"]) <= 9
    whole = Console(file=io.StringIO(), width=120, color_system=None)
    print_overview(whole, ds, "stb.zarr", rows, "every point")
    mine = Console(file=io.StringIO(), width=120, color_system=None)
    print_overview(mine, shown.ds, "stb.zarr", rows, "every point", found=shown.found, verdict=shown.verdict,
                   points=shown.points)
    assert mine.file.getvalue() == whole.file.getvalue()
    assert "DISAGREE" in mine.file.getvalue()
    lazy = blocks.run_overview(open_sweep(url, check=False), rows, shown_points, most=2)  # read from the store
    assert lazy.verdict["text"] == headlines.verdict(load_sweep(url, check=False))["text"]


def test_the_runs_summary_of_a_grid_larger_than_a_block_is_the_same(planted, monkeypatch):
    """What ``run`` prints at its end: a grid of more blocks than one (the
    block made 2 points here) is summarised block by block, with the same lines."""
    from boardsweep.pipeline.run.record import RunReport
    from boardsweep.pipeline.views import display

    url, _ = planted
    report = RunReport(store=url, tasks_total=9, complete=True, workers=2)

    def printed() -> str:
        out = Console(file=io.StringIO(), width=120, color_system=None)
        display.run_summary(out, report, read_finished(report.store))
        return out.file.getvalue()

    whole = printed()
    monkeypatch.setattr(blocks, "BLOCK_POINTS", 2)
    calls = []
    real = blocks.run_overview
    monkeypatch.setattr(blocks, "run_overview", lambda *a, **k: calls.append(k) or real(*a, **k))
    assert printed() == whole and calls == [{"most": 2, "url": url}]
    assert "verdict: AGREE" in whole


ASKED = '\n[answer]\nheadline = "mean_rolls"\naxis = "dice_sides"\nat = {dice_sides = 5, policy = "random"}\n'


def test_the_asked_point_is_shown_when_the_grid_is_summarised_block_by_block(tmp_path, cluster2, monkeypatch):
    """A spec's ``[answer]`` asks the grid's last point (never flagged, never
    among the first rows): the run's summary shows its row whatever the cut,
    whether the grid fits one block or is summarised block by block."""
    from boardsweep.pipeline.run.record import RunReport
    from boardsweep.pipeline.analysis.answer import asked_flat, answer_of
    from boardsweep.pipeline.views import display, overview

    url = str(tmp_path / "asked.zarr")
    text = spec_toml("shut_the_box", name="asked", seed=3, grid={"dice_sides": [2, 3, 4, 5],
                     "policy": ["optimal", "greedy", "random"]}, run={"replicates": 2, "games": 200}) + ASKED
    assert run_sweep(parse_spec(text, "asked.toml"), url, scheduler=cluster2).complete
    ds = load_sweep(url, check=False)
    assert asked_flat(ds, answer_of(ds)) == [11]  # dice_sides=5, policy=random: the last point, grid order

    def printed() -> str:
        out = Console(file=io.StringIO(), width=120, color_system=None)
        display.run_summary(out, RunReport(store=url, tasks_total=12, complete=True, workers=2), read_finished(url))
        return out.file.getvalue()

    from boardsweep.pipeline.analysis import answer

    parsed = []  # the recorded spec's [answer] table parsed: once a summary, block by block too
    real = answer.recorded_table
    monkeypatch.setattr(answer, "recorded_table", lambda text: parsed.append(1) or real(text))
    monkeypatch.setattr(overview, "MAX_LINES", 14)  # three rows a table: the asked row is past the cut
    for most in (10**6, 2):  # one block; 2 points a block
        monkeypatch.setattr(blocks, "BLOCK_POINTS", most)
        parsed.clear()
        rows = [line.split() for line in printed().splitlines()]
        assert any(r[:2] == ["5", "random"] for r in rows), (most, printed())
        assert len(parsed) == 1, most



# A packed store keeps its verdict once computed (store.kept): read back, it
# is the verdict computed afresh; once the store changes, it is not read.

def _same(kept, fresh, where="verdict") -> None:
    """Integers, text and flags exactly; floats within 1e-12 relative (a JSON round trip)."""
    if isinstance(fresh, dict):
        assert isinstance(kept, dict) and kept.keys() == fresh.keys(), where
        for key in fresh:
            _same(kept[key], fresh[key], f"{where}.{key}")
    elif isinstance(fresh, (list, tuple, np.ndarray)):
        assert len(kept) == len(fresh), where
        for i, (a, b) in enumerate(zip(kept, fresh)):
            _same(a, b, f"{where}[{i}]")
    elif isinstance(fresh, (float, np.floating)):
        assert kept == pytest.approx(fresh, rel=1e-12, nan_ok=True), where
    else:  # integers, text, flags, None
        assert kept == fresh, where


def _not_again(*args, **kwargs):
    raise AssertionError("the verdict was computed again, not read back")


def _forget_kept(url: str) -> None:
    from boardsweep.pipeline.store.kept import P_VALUES, SUMMARY

    for rel in (SUMMARY, P_VALUES):
        (Path(url) / rel).unlink(missing_ok=True)


def test_a_packed_store_keeps_its_verdict_and_reads_it_back(planted, monkeypatch):
    url, _ = planted
    _forget_kept(url)  # as a store written by a boardsweep that kept none
    ds = open_sweep(url, check=False)
    fresh = blocks.block_verdict(ds, most=2)
    first = blocks.kept_verdict(ds, url, most=2)  # computed, and kept
    _same(first, fresh)
    monkeypatch.setattr(blocks, "block_verdict", _not_again)
    again = blocks.kept_verdict(open_sweep(url, check=False), url)
    _same(again, fresh)
    assert again["tests"] == fresh["tests"] > 0 and again["holm"][0].dtype == np.float64


def test_the_workers_make_the_verdict_the_client_would(planted, cluster2, monkeypatch):
    """Each block's tests a task of the cluster's worker processes (issue 57),
    merged in grid order by the client and kept: what the client's own
    block-by-block verdict is, read back without computing it again."""
    from distributed import Client

    url, _ = planted
    _forget_kept(url)
    fresh = blocks.block_verdict(open_sweep(url, check=False), most=2)
    with Client(cluster2) as client:
        assert blocks.verdict_on_workers(url, client, most=2)
    monkeypatch.setattr(blocks, "block_verdict", _not_again)
    kept = blocks.kept_verdict(open_sweep(url, check=False), url)
    _same(kept, fresh)
    assert kept["tests"] == fresh["tests"] > 0 and kept["holm"][0].tobytes() == fresh["holm"][0].tobytes()


def _toy_registered() -> bool:
    from boardsweep.core.games import GAME_MODULES

    return "toy" in GAME_MODULES


def test_the_workers_test_a_game_registered_only_in_the_client(tmp_path, cluster2, monkeypatch):
    """The toy game is registered in this process alone (``games.register``,
    as a test or a notebook does); the workers are processes that never
    registered it.  Their verdict still tests every point against the toy's
    exact answers, as the client's does (it was kept with none tested)."""
    from distributed import Client

    url = str(tmp_path / "toy.zarr")
    text = spec_toml("toy", name="toy", params={"size": 4}, grid={"dice_sides": [2, 3, 4], "rule": ["plain"]},
                     run={"replicates": 2, "games": 1, "turns": 50}, checkpoints={"count": 1})
    assert run_sweep(parse_spec(text, "toy.toml"), url, scheduler=cluster2).complete
    _forget_kept(url)
    fresh = blocks.block_verdict(open_sweep(url, check=False), most=1)
    with Client(cluster2) as client:
        assert not any(client.run(_toy_registered).values())  # the workers know no "toy"
        assert blocks.verdict_on_workers(url, client, most=1)
    monkeypatch.setattr(blocks, "block_verdict", _not_again)
    kept = blocks.kept_verdict(open_sweep(url, check=False), url)
    assert kept["tested_points"] == fresh["tested_points"] == 3
    _same(kept, fresh)


def test_a_run_leaves_the_verdict_its_workers_made(tmp_path, cluster2, monkeypatch):
    """``boardsweep run``'s path (``api.run_request``): once packed, the
    run's workers make the verdict of a grid of more than one block and the
    store keeps it; the summary reads it back, the same as computed after
    the run.  A grid of one block is left to the summary."""
    from boardsweep.pipeline.api import run_request
    from boardsweep.pipeline.cluster import Target
    from boardsweep.pipeline.run import RunRequest

    from boardsweep.pipeline.store import code_revision, read_summary, summary_key

    depends = f"{blocks.KEPT_SCHEME} boardsweep {code_revision()} alpha {headlines.ALPHA}"
    text = spec_toml("shut_the_box", name="v", seed=3, grid={"dice_sides": [2, 3], "policy": ["optimal", "greedy"]},
                     run={"replicates": 2, "games": 200})
    one = str(tmp_path / "one.zarr")  # 4 points: one block
    assert run_request(RunRequest(parse_spec(text, "v.toml"), one, Target(scheduler=cluster2))).report.complete
    assert read_summary(one, summary_key(one, depends)) is None  # left to the summary
    monkeypatch.setattr(blocks, "BLOCK_POINTS", 3)  # two blocks
    url = str(tmp_path / "run.zarr")
    report = run_request(RunRequest(parse_spec(text, "v.toml"), url, Target(scheduler=cluster2))).report
    assert report.complete and not report.packing and not report.on_packed_failed and report.on_packed_s > 0
    assert read_summary(url, summary_key(url, depends)) is not None  # kept by the run
    fresh = blocks.block_verdict(open_sweep(url, check=False))
    monkeypatch.setattr(blocks, "block_verdict", _not_again)
    _same(blocks.kept_verdict(open_sweep(url, check=False), url), fresh)


def test_a_kept_verdict_is_not_read_once_the_store_changes(tmp_path, cluster2, monkeypatch):
    """Grown (more replicates: the store unpacked, written, packed again) or
    left in the task layout, the store's verdict is computed afresh."""
    from boardsweep.pipeline.store import Store, summary_key

    url = str(tmp_path / "grow.zarr")
    text = spec_toml("shut_the_box", name="grow", seed=9, grid={"dice_sides": [2, 3], "policy": ["optimal", "random"]},
                     run={"replicates": 2, "games": 100})
    assert run_sweep(parse_spec(text, "grow.toml"), url, scheduler=cluster2).complete
    before = blocks.kept_verdict(open_sweep(url, check=False), url, most=2)
    grown = parse_spec(text.replace("replicates = 2", "replicates = 4"), "grow.toml")
    assert run_sweep(grown, url, scheduler=cluster2, extend=True).complete
    ds = open_sweep(url, check=False)
    fresh = blocks.block_verdict(ds, most=2)
    assert fresh["min_p"] != before["min_p"]  # the grown store's answer differs
    _same(blocks.kept_verdict(ds, url, most=2), fresh)  # computed again, and kept
    assert Store(url).unpack()  # the task layout: no key, nothing read back
    assert summary_key(url, "any") is None
    monkeypatch.setattr(blocks, "block_verdict", lambda *a, **k: fresh)
    assert blocks.kept_verdict(open_sweep(url, check=False), url, most=2) is fresh


def test_a_run_with_nothing_to_do_reads_its_summary_back(planted, monkeypatch):
    """What ``run`` prints on a complete store, a grid summarised block by
    block: the kept verdict, the same lines as when it was computed."""
    from boardsweep.pipeline.run.record import RunReport
    from boardsweep.pipeline.views import display

    url, _ = planted
    _forget_kept(url)
    monkeypatch.setattr(blocks, "BLOCK_POINTS", 2)

    def printed() -> str:
        out = Console(file=io.StringIO(), width=120, color_system=None)
        display.run_summary(out, RunReport(store=url, tasks_total=9, complete=True, workers=2), read_finished(url))
        return out.file.getvalue()

    first = printed()
    monkeypatch.setattr(blocks, "block_verdict", _not_again)
    assert printed() == first and "verdict: AGREE" in first


@pytest.mark.parametrize("fmt", ["csv", "json", "table"])
def test_query_summary_block_by_block_prints_what_the_whole_grid_does(planted, monkeypatch, capsys, fmt):
    """``query --summary --all`` (and the table without ``--all``) of a grid
    larger than a block: every row, read a block at a time, as the whole
    grid in memory prints them (a block's rows after another's); the
    verdict is the store's (kept)."""
    import json

    from clirun import run_cli

    url, _ = planted
    monkeypatch.setenv("COLUMNS", "80")  # the words counted below depend on how the width splits the tables (200: 4 against 9)

    def printed(*flags: str) -> str:
        assert run_cli("query", url, "--summary", *flags, "--format", fmt) == 0
        return capsys.readouterr().out

    whole = printed("--all"), printed()
    monkeypatch.setattr(blocks, "BLOCK_POINTS", 2)
    monkeypatch.setattr(blocks, "ROW_BLOCK_POINTS", 2)
    calls = []
    real = blocks.grid_blocks
    monkeypatch.setattr(blocks, "grid_blocks", lambda *a, **k: calls.append(a) or real(*a, **k))
    streamed = printed("--all"), printed()
    assert any(most == 2 for _, most in calls)  # read block by block
    if fmt == "json":  # the same rows, a block's after another's (the whole grid's: headline by headline)
        mine, theirs = json.loads(streamed[0]), json.loads(whole[0])
        key = lambda row: json.dumps(row, sort_keys=True)  # noqa: E731
        assert sorted(mine["rows"], key=key) == sorted(theirs["rows"], key=key) and len(mine["rows"]) > 9
        assert mine["verdict"]["text"] == theirs["verdict"]["text"]
    elif fmt == "csv":
        for mine, theirs in zip(streamed, whole):  # CSV holds every row, with --all or not
            head, *rows = mine.splitlines()
            assert [head, *sorted(rows)] == [theirs.splitlines()[0], *sorted(theirs.splitlines()[1:])]
    else:
        assert streamed[1] == whole[1] and "verdict: AGREE" in streamed[1]
        for kind in ("estimate", "exact"):  # every row, whatever the console's width makes of the tables
            assert streamed[0].count(kind) == whole[0].count(kind) > 9
        assert streamed[0].count("before the Holm adjustment") == 1 and "verdict: AGREE" in streamed[0]


def test_the_accessors_verdict_of_a_grid_larger_than_a_block_is_read_block_by_block(planted, monkeypatch):
    """Issue 44 ("the accessor reads what it draws"): ``ds.boardsweep.verdict()``
    of a grid beyond one block reads and tests it a block at a time, as
    ``run`` and ``query`` do, and says what the whole grid's verdict says."""
    url, ds = planted
    whole = headlines.verdict(ds)
    loaded = []
    real = xr.Dataset.load
    monkeypatch.setattr(xr.Dataset, "load", lambda self, **kw: loaded.append(grid_size(self)) or real(self, **kw))
    streamed = ds.boardsweep.verdict(block_points=4)
    assert loaded == [3, 3, 3]  # three blocks of a row each, none the whole grid
    for key in SAME:
        assert streamed[key] == whole[key], key
    assert ds.boardsweep.verdict(block_points=9)["p_holm"] is not None  # one block: the whole verdict, its table too
    lazy = open_sweep(url, check=False)
    assert lazy.boardsweep.verdict(block_points=4)["text"] == headlines.verdict(load_sweep(url, check=False))["text"]


def test_the_accessors_table_of_a_grid_larger_than_a_block_is_the_whole_grids(planted):
    """``ds.boardsweep.summary()`` beyond one block: read block by block, the
    same rows in the same order as the whole grid's table."""
    _, ds = planted
    whole = headlines.summary(ds)
    for most in (1, 4):
        streamed = ds.boardsweep.summary(block_points=most)
        assert len(whole) > 9 and list(streamed.columns) == list(whole.columns)
        pd.testing.assert_frame_equal(streamed, whole)
