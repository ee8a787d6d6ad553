"""Growing a store in place (``run NEW_SPEC --extend``) on real stores and
real Dask clusters: the grown store equals a fresh run of NEW_SPEC, aligned by
coordinate values, bit for bit; old chunk files are never rewritten (except
the partial last block, whose old cells stay byte-identical); every refusal
touches nothing; a killed growth resumes with the same command."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr

from clirun import run_cli
from compare import TOY, assert_same_by_value, files, raw, toy  # noqa: F401
from localdask import done_count, finish, kill, local_dask, start_client, toy_delay, wait_for
from boardsweep.pipeline.run import growth as grow
from boardsweep.pipeline.store import integrity
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.run.verify import verify

@pytest.fixture
def base(tmp_path, cluster2, make_spec):
    """A complete toy store: dice 2, 3 x plain, sticky x 4 replicates in blocks of 2."""
    url = tmp_path / "grown.zarr"
    assert run_sweep(parse_spec(toy(make_spec), "base.toml"), str(url), scheduler=cluster2).complete
    return url


def fresh(tmp_path, cluster2, text: str, name: str = "fresh.zarr") -> Path:
    url = tmp_path / name
    assert run_sweep(parse_spec(text, "new.toml"), str(url), scheduler=cluster2).complete
    return url


def test_grow_axis_and_replicates_equals_a_fresh_run(tmp_path, cluster2, make_spec, base):
    """dice_sides gains 4 (written first in the new spec, to show that order
    does not matter) and replicates 4 -> 6: 2 x 2 old points get one new block
    each, the 2 new points three; old chunk files are not touched."""
    # a complete store is packed: the chunk files tasks wrote are kept, moved, under .boardsweep/flat-cells/
    cells = tuple(f".boardsweep/flat-cells/{name}/" for name in
                  ("counts", "events", "rolls", "done", "exact_frequency", "exact_done"))
    before = {k: v for k, v in files(base).items() if k.startswith(cells) and "/c." in k and v[2]}  # flat chunk files
    text = toy(make_spec, dice=(4, 2, 3), replicates=6)
    report = run_sweep(parse_spec(text, "new.toml"), str(base), scheduler=cluster2, extend=True)
    assert report.complete
    assert report.tasks_run == 4 * 1 + 2 * 3 and report.exact_run == 2
    after = files(base)
    assert len(before) == 4 * 2 * 4 + 4 * 2  # 4 points x 2 blocks x 4 arrays; 4 points x 2 exact arrays
    assert [path for path, seen in before.items() if after[path] != seen] == []
    ds = raw(base)
    assert ds["dice_sides"].values.tolist() == [2, 3, 4]  # appended at the end
    assert ds.sizes["replicate"] == 6 and ds.attrs["replicates"] == 6
    assert "grown in place to new.toml" in ds.attrs["history"] and grow.GROWING not in ds.attrs
    assert_same_by_value(base, fresh(tmp_path, cluster2, text))
    # the grown store is the new spec's: a plain rerun finds nothing to do, and
    # `verify` of the new spec (re-run in the store's axis order) agrees cell by cell
    assert run_sweep(parse_spec(text, "new.toml"), str(base), scheduler=cluster2).tasks_run == 0
    result = verify(parse_spec(text, "new.toml"), str(base), scheduler=cluster2)
    assert result.ok and result.variables >= 6, result.message


def test_grow_axis_only_and_replicates_only(tmp_path, cluster2, make_spec, base):
    axis = toy(make_spec, rules=("plain", "sticky"), dice=(2, 3, 5))
    report = run_sweep(parse_spec(axis, "new.toml"), str(base), scheduler=cluster2, extend=True)
    assert report.tasks_run == 2 * 2 and report.exact_run == 2
    assert_same_by_value(base, fresh(tmp_path, cluster2, axis, "axis.zarr"))
    more = toy(make_spec, dice=(2, 3, 5), replicates=8)
    report = run_sweep(parse_spec(more, "more.toml"), str(base), scheduler=cluster2, extend=True)
    assert report.tasks_run == 6 * 2 and report.exact_run == 0
    assert_same_by_value(base, fresh(tmp_path, cluster2, more, "more.zarr"))


def test_partial_last_block_keeps_old_cells(tmp_path, cluster2, make_spec):
    """3 replicates in blocks of 2 leave chunk 1 holding replicate 2 only;
    growing to 5 runs replicate 3 alone and rewrites chunk 1 with replicate 2
    unchanged, then replicate 4 in a new chunk."""
    url = tmp_path / "partial.zarr"
    run_sweep(parse_spec(toy(make_spec, replicates=3), "base.toml"), str(url), scheduler=cluster2)
    old = raw(url)
    text = toy(make_spec, replicates=5)
    report = run_sweep(parse_spec(text, "new.toml"), str(url), scheduler=cluster2, extend=True)
    assert report.complete and report.tasks_run == 4 * 2
    starts = sorted({r["key"].rsplit("-r", 1)[1] for r in report.records if not r["key"].startswith("exact")})
    assert starts == ["2", "4"]  # tasks are named by their chunk's first replicate ...
    assert all(r["runs"] == 1 for r in report.records if not r["key"].startswith("exact"))  # ... replicate 2 kept
    grown = raw(url)
    for name in ("counts", "events", "rolls", "done"):
        assert np.array_equal(grown[name].isel(replicate=slice(0, 3)).values, old[name].values), name
    assert not integrity.check(str(url))  # the rewritten chunk's checksum record is renewed
    assert_same_by_value(url, fresh(tmp_path, cluster2, text))


def test_every_refusal_names_each_key_and_touches_nothing(tmp_path, make_spec, base, capsys):
    def _refused(text: str, *extra: str) -> str:
        spec = tmp_path / "refused.toml"
        spec.write_text(text)
        before = files(base)
        capsys.readouterr()
        assert run_cli("run", str(spec), "--store", str(base), *extra) == 2
        err = capsys.readouterr().err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err, err
        assert files(base) == before, "a refused run touched the store"
        return lines[0]

    line = _refused(toy(make_spec, dice=(2, 3, 4), seed=8, run={"turns": 61}, checkpoints={"count": 4},
                        tasks={"replicates_per_task": 1}), "--extend")
    assert line.startswith(f"boardsweep: error: store {base} cannot grow to ")
    for key in ("seed: 7 in the store, 8 in", "run.turns: 60 in the store, 61 in", "checkpoints: ",
                "tasks.replicates_per_task: 2 in the store, 1 in"):
        assert key in line, key
    assert "grid.dice_sides" not in line  # the growth itself is allowed
    line = _refused(toy(make_spec, dice=(2,), replicates=3), "--extend")
    assert "grid.dice_sides: 3 in the store but not in" in line
    assert "run.replicates: 4 in the store, 3 in" in line
    line = _refused(toy(make_spec, params={"size": 9}), "--extend")
    assert "params.size: 8 in the store, 9 in" in line
    added_axis = make_spec("toy", grid={"dice_sides": [2, 3], "rule": ["plain", "sticky"], "size": [8]},
                           run={"replicates": 4, **TOY["run"]}, checkpoints=TOY["checkpoints"],
                           tasks={"replicates_per_task": 2})
    line = _refused(added_axis, "--extend")
    assert "grid.size: an axis cannot be added" in line and "params.size" not in line
    line = _refused(toy(make_spec, dice=(2, 3, 4), replicates=5))
    assert "holds a smaller sweep" in line and "grid.dice_sides: adds 4; run.replicates: 4 -> 5" in line
    assert "rerun with --extend" in line
    line = _refused(toy(make_spec, dice=(2, 3, 4)), "--extend", "--overwrite")
    assert "--extend" in line and "--overwrite" in line


def test_interrupted_growth_is_incomplete_and_the_same_command_finishes_it(tmp_path, cluster2, make_spec, base,
                                                                            capsys):
    """A growth stopped after each of its metadata steps: status exits 1,
    query and a run without --extend refuse, the same --extend completes."""
    text = toy(make_spec, dice=(2, 3, 4), replicates=5)
    spec_path = tmp_path / "new.toml"
    spec_path.write_text(text)
    spec, growth = grow.check(str(base), parse_spec(text, str(spec_path)), True)
    from boardsweep.pipeline.store import growth as on_disk

    for steps in (1, 2):  # stopped after step 1 (mark), after step 2 (resize)
        url = tmp_path / f"stopped-{steps}.zarr"
        import shutil

        shutil.copytree(base, url)
        on_disk.mark(str(url), spec, growth.describe(), str(spec_path))
        if steps == 2:
            on_disk.resize(str(url), spec)
        capsys.readouterr()
        assert run_cli("status", str(url)) == 1
        assert "growing it to a larger spec was interrupted" in capsys.readouterr().err
        assert run_cli("query", str(url)) == 2
        old_spec = tmp_path / "old.toml"
        old_spec.write_text(toy(make_spec))
        assert run_cli("run", str(old_spec), "--store", str(url)) == 2
        assert "being grown to another spec" in capsys.readouterr().err
        assert run_cli("run", str(spec_path), "--store", str(url)) == 2
        assert "rerun with --extend" in capsys.readouterr().err
        report = run_sweep(spec, str(url), scheduler=cluster2, extend=True)
        assert report.complete
        assert run_cli("status", str(url)) == 0
    assert_same_by_value(url, fresh(tmp_path, cluster2, text))


def test_killed_extend_resumes_with_the_same_command(tmp_path, make_spec, cluster2, base):
    """SIGKILL the client of `run --extend` while new tasks are being
    written; status says incomplete; the same command finishes the store."""
    text = toy(make_spec, dice=(2, 3, 4), replicates=6)
    spec_path = tmp_path / "new.toml"
    spec_path.write_text(text)
    old_done = done_count(base)
    slow, delay = toy_delay(tmp_path, 0.5)
    with local_dask(tmp_path / "logs", workers=2, env=slow) as cluster:
        args = ["run", str(spec_path), "--scheduler", cluster.address, "--store", str(base), "--extend"]
        proc = start_client(tmp_path, *args)
        try:
            wait_for(lambda: done_count(base) >= old_done + 2 or proc.poll() is not None, what="a new task")
            assert proc.poll() is None, proc.communicate()
        finally:
            kill(proc)
        delay.unlink()  # killed mid-sweep: the rest runs at full speed
        assert done_count(base) < 6 * 6
        rc, out, err = finish(start_client(tmp_path, "status", str(base)))
        assert rc == 1, out + err
        rc, out, err = finish(start_client(tmp_path, *args))
        assert rc == 0, f"{out}\n{err}\n{cluster.log_text()}"
        assert "store complete" in out
    assert_same_by_value(base, fresh(tmp_path, cluster2, text))


@pytest.mark.parametrize("game, tables, grown", [
    ("monopoly", dict(params={"tally": "per_roll"}, grid={"dice_sides": [4, 6]},
                      run={"replicates": 3, "games": 1, "players": 1, "turns": 200},
                      checkpoints={"count": 3}, tasks={"replicates_per_task": 2}),
     dict(grid={"dice_sides": [4, 6, 8]}, run={"replicates": 4})),
    ("shut_the_box", dict(grid={"dice_sides": [2, 3], "policy": ["optimal"]},
                          run={"replicates": 2, "games": 50}, checkpoints={"count": 3}),
     dict(grid={"dice_sides": [2, 3], "policy": ["optimal", "greedy"]}, run={"replicates": 3})),
    ("hk_monopoly", dict(params={"players": 2}, grid={"dice_sides": [4]},
                         run={"replicates": 2, "games": 20}, checkpoints={"count": 3}),
     dict(grid={"dice_sides": [4, 6]}, run={"replicates": 3})),
])
def test_every_game_grows(tmp_path, cluster2, make_spec, game, tables, grown):
    url = tmp_path / f"{game}.zarr"
    run_sweep(parse_spec(make_spec(game, **tables), "base.toml"), str(url), scheduler=cluster2)
    new = {**tables, "grid": grown["grid"], "run": {**tables["run"], **grown["run"]}}
    text = make_spec(game, **new)
    assert run_sweep(parse_spec(text, "new.toml"), str(url), scheduler=cluster2, extend=True).complete
    assert not integrity.check(str(url))
    assert_same_by_value(url, fresh(tmp_path, cluster2, text))


def test_zarr_sees_the_grown_shape(base, cluster2, make_spec):
    """Plain zarr and xarray (consolidated metadata) see the new shape."""
    text = toy(make_spec, dice=(2, 3, 4))
    run_sweep(parse_spec(text, "new.toml"), str(base), scheduler=cluster2, extend=True)
    assert zarr.open_group(str(base), mode="r")["counts"].shape[:3] == (3, 2, 4)
    assert xr.open_zarr(base)["counts"].shape[:3] == (3, 2, 4)


def test_calibrated_task_size_is_reused(tmp_path, cluster2, make_spec):
    """A `[tasks] seconds` store keeps its recorded block when it grows: the
    calibration is not run again and the chunks stay as they were."""
    def timed(replicates: int) -> str:
        return toy(make_spec, replicates=replicates, tasks={"seconds": 5})

    url = tmp_path / "timed.zarr"
    first = run_sweep(parse_spec(timed(4), "base.toml"), str(url), scheduler=cluster2)
    assert first.block == 4 and "4 replicates x 4 grid points per task: one replicate takes" in first.calibration
    report = run_sweep(parse_spec(timed(6), "new.toml"), str(url), scheduler=cluster2, extend=True)
    assert report.block == 4
    assert report.calibration == "4 replicates and 4 grid points per task, as recorded in the store"
    assert report.complete and report.tasks_run == 1  # the one chunk of 2 x 2 points, replicates 4-5
    assert zarr.open_array(str(url), path=".boardsweep/flat-cells/counts").chunks[2] == 4  # the task chunks (packed store)
    assert_same_by_value(url, fresh(tmp_path, cluster2, timed(6)))


class _Counted(int):
    """An axis value that counts its comparisons (a quadratic membership test shows as n^2 of them)."""

    compared = 0

    def __eq__(self, other):
        _Counted.compared += 1
        return int.__eq__(self, other)

    __hash__ = int.__hash__


def test_the_growth_check_is_linear_in_an_axis_length(make_spec):
    """10^5 values on one axis, the store holding the first 9 * 10^4: aligning
    and comparing the specs compares each value a bounded number of times."""
    from dataclasses import replace

    n = 100_000
    spec = parse_spec(toy(make_spec), "base.toml")
    values = tuple(_Counted(v) for v in range(2, n + 2))
    big = replace(spec, grid={"dice_sides": values, "rule": spec.grid["rule"]})
    old = {"grid": {"dice_sides": list(range(2, n * 9 // 10 + 2)), "rule": list(spec.grid["rule"])}}
    _Counted.compared = 0
    aligned = grow.aligned(big, old)
    assert aligned.grid["dice_sides"] == tuple(range(2, n + 2))
    assert _Counted.compared <= 4 * n, _Counted.compared  # a tuple's `in` made it about n^2 / 2


def _grown_to(url: Path, spec, growth, source: str, stage: str) -> None:
    """The store at ``url`` taken through a growth's steps up to ``stage``
    (as a run applies them, :meth:`Store.apply_growth`): ``marked`` (killed after
    step 1), ``resized`` (killed after step 2) or ``finished`` (all three)."""
    from boardsweep.pipeline.store import Store
    from boardsweep.pipeline.store import growth as on_disk

    if stage == "finished":
        Store(str(url)).apply_growth(spec, growth.describe(), source)
        return
    Store(str(url)).unpack()
    on_disk.mark(str(url), spec, growth.describe(), source)
    if stage == "resized":
        on_disk.resize(str(url), spec)


_CHECKED_READS = {
    "load_sweep": lambda url: __import__("boardsweep").load_sweep(url),
    "open_sweep": lambda url: __import__("boardsweep").open_sweep(url).compute(),
    "engine": lambda url: xr.open_dataset(url, engine="boardsweep").compute(),
}


@pytest.mark.parametrize("stage", ["marked", "resized", "finished"])
def test_a_checked_read_a_growth_crosses_between_its_check_and_its_read_is_whole_or_told(
        tmp_path, cluster2, make_spec, base, monkeypatch, capsys, stage):
    """A checked read whose integrity check read the store (and kept its raw
    Dataset) before a growth, and whose data read came after the growth's
    ``stage``: the S3 soak's checked ``load_sweep`` raised the raw
    ``ValueError: Data shape (2, 2, 3, 3, 2) must match shape of object
    (2, 2, 3, 2, 2)`` (3 of its reads: the kept Dataset of the old shape given
    the grown arrays; the layout stamp the read checked was taken after the growth).
    Now each read path reads a whole store, the grown one (its new cells not
    done) or, of a growth killed before it resized anything, the old one; or
    says in one line that the growth was interrupted; so does ``query``."""
    from boardsweep.pipeline.errors import StoreBeingRewritten
    from boardsweep.pipeline.store import Store, assert_intact

    text = toy(make_spec, dice=(2, 3, 4))
    spec_path = tmp_path / "new.toml"
    spec_path.write_text(text)
    spec, growth = grow.check(str(base), parse_spec(text, str(spec_path)), True)
    before = xr.load_dataset(str(base), engine="boardsweep")
    stores = {name: tmp_path / f"{name}.zarr" for name in (*_CHECKED_READS, "query", "opened")}
    for url in stores.values():
        shutil.copytree(base, url)
    checked = Store.check

    def then_grown(self):  # the real check, then the real growth: a run's, between the check and the read
        found = checked(self)
        if self.url in grown_now:
            grown_now.discard(self.url)
            _grown_to(Path(self.url), spec, growth, str(spec_path), stage)
        return found

    monkeypatch.setattr(Store, "check", then_grown)
    reads = {name: (lambda read=read, url=str(stores[name]): read(url)) for name, read in _CHECKED_READS.items()}
    opened = Store(str(stores["opened"]))  # a Store the caller opened and checked, then read after the growth
    reads["opened"] = lambda: __import__("boardsweep").load_sweep(opened, check=False)
    grown_now = {str(url) for url in stores.values()}
    assert_intact(opened.url, opened.check(), opened.attrs)
    for name, read in reads.items():
        try:
            ds = read()
        except StoreBeingRewritten as exc:  # told: only of a growth a run left half done
            assert stage != "finished" and "growing it to a larger spec was interrupted; rerun" in str(exc), exc
            continue
        grown = ds["dice_sides"].values.tolist()
        assert grown == ([2, 3, 4] if stage == "finished" else [2, 3]), name  # whole: before, or after
        assert ds["done"].sel(dice_sides=[2, 3]).values.all() and not ds["done"].sel(dice_sides=grown[2:]).values.any()
        old = ds.sel(dice_sides=[2, 3])
        for var in ("counts", "rolls"):
            np.testing.assert_array_equal(old[var].values, before[var].values, err_msg=f"{name}: {var}")
    capsys.readouterr()
    code = run_cli("query", str(stores["query"]))
    err = capsys.readouterr().err
    if stage == "finished":
        assert (code, err) == (0, "")
    elif code != 0:  # the whole store as it was, or one line
        told = "growing it to a larger spec was interrupted"
        assert code in (1, 2) and len(err.strip().splitlines()) == 1 and told in err, (code, err)
