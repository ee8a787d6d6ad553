"""A store on object storage is packed in place once complete (SeaweedFS on
127.0.0.1): plain ``xarray.open_zarr`` reads it in large chunks, with the
same values as a local run; the integrity check, repair and resume work on
the packed store; a process killed at any step of packing or unpacking
leaves a store that the next run completes, nothing recomputed.  Real
runs, real objects, real killed processes."""

from __future__ import annotations

import os

import pytest
import xarray as xr

from clirun import run_cli
from killat import KillServer
from localdask import COMPARED, assert_bitwise_equal
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import integrity, packing
from boardsweep.pipeline.store import JOURNAL

pytestmark = pytest.mark.slow



@pytest.fixture(scope="module")
def published(s3server, s3cluster, tmp_path_factory):
    """The toy spec run into a folder and into the bucket, both packed: (spec path, local, s3 URL)."""
    from specs import TOY_SPEC  # tests/support is on sys.path

    folder = tmp_path_factory.mktemp("s3packing")
    spec = folder / "spec.toml"
    spec.write_text(TOY_SPEC)
    url = f"s3://{s3server.bucket()}/published-{os.getpid()}/sweep.zarr"
    for store in (str(folder / "local.zarr"), url):
        report = run_sweep(parse_spec(TOY_SPEC, str(spec)), store, scheduler=s3cluster)
        assert report.complete and report.packing == "", report.packing
    return spec, folder / "local.zarr", url


def _copy(s3server, url: str, name: str) -> str:
    """A copy of the store at ``url`` under a new prefix (server-side copies)."""
    fs = s3server.filesystem()
    source = url.removeprefix("s3://")
    target = f"{source.rsplit('/', 2)[0]}/{name}-{os.getpid()}/sweep.zarr"
    if fs.exists(target):
        fs.rm(target, recursive=True)
    for path in fs.find(source):
        fs.copy(path, target + path[len(source):])
    return f"s3://{target}"


def _rerun(spec, url: str, scheduler: str):
    return run_sweep(parse_spec(spec.read_text(), str(spec)), url, scheduler=scheduler)


def test_plain_xarray_reads_the_packed_s3_store_in_large_chunks_with_a_local_runs_values(published, s3server):
    _, local, url = published
    assert packing.layout(url) == "packed" and not integrity.check(url)
    with xr.open_zarr(url) as ds:
        assert ds.counts.data.numblocks == (1,) * ds.counts.ndim  # one dask chunk, not one per task (8)
        assert all(ds[v].data.npartitions == 1 for v in ds.data_vars), {v: ds[v].data.numblocks for v in ds}
    assert_bitwise_equal(local, url, COMPARED)
    fs = s3server.filesystem()
    root = url.removeprefix("s3://")
    assert fs.exists(f"{root}/counts/c.0.0.0.0.0")  # the packed chunk, beside the task chunks
    assert len([p for p in fs.find(f"{root}/counts") if "/c/" in p]) == 8  # the task chunks stay in place
    assert run_cli("status", url) == 0


def test_a_rerun_of_the_packed_s3_store_does_nothing(published, s3cluster):
    spec, local, url = published
    report = _rerun(spec, url, s3cluster)
    assert report.complete and report.tasks_run == 0 and report.exact_run == 0 and not report.repaired
    assert packing.layout(url) == "packed"


def test_a_damaged_packed_chunk_on_s3_is_named_then_repaired_without_recomputing(published, s3server, s3cluster,
                                                                                capsys):
    spec, local, source = published
    url = _copy(s3server, source, "damaged-packed")
    fs = s3server.filesystem()
    fs.pipe(f"{url.removeprefix('s3://')}/counts/c.0.0.0.0.0", b"not the packed chunk")
    capsys.readouterr()
    assert run_cli("status", url) == 1
    assert "packed chunk counts/c.0.0.0.0.0" in capsys.readouterr().out
    report = _rerun(spec, url, s3cluster)
    assert report.complete and report.tasks_run == 0 and report.exact_run == 0
    assert any("packed copy damaged" in r for r in report.repaired), report.repaired
    assert packing.layout(url) == "packed" and not integrity.check(url)
    assert_bitwise_equal(local, url, COMPARED)


def test_a_damaged_task_chunk_of_a_packed_s3_store_is_recomputed_once_unpacked(published, s3server, s3cluster):
    spec, local, source = published
    url = _copy(s3server, source, "damaged-task")
    fs = s3server.filesystem()
    root = url.removeprefix("s3://")
    fs.pipe(f"{root}/counts/c.0.0.0.0.0", b"not the packed chunk")  # so that the run unpacks
    fs.pipe(f"{root}/counts/c/1/0/1/0/0", b"not the task chunk")  # and finds this one
    report = _rerun(spec, url, s3cluster)
    assert report.complete and report.tasks_run == 1, report
    assert packing.layout(url) == "packed" and not integrity.check(url)
    assert_bitwise_equal(local, url, COMPARED)


#: ``run`` for the kill-at server (killat.py): pack or unpack a store, the process killed (no
#: clean-up of any kind) just before its ``limit``-th change to the store (an object written or
#: removed, the consolidated metadata rewritten); the changes made, when not killed.
_KILL_AT = """
import os
from boardsweep.pipeline.store import packing, packing_inplace
def run(step, url, limit):
    calls = [0]
    def counted(real):
        def step_(*args, **kwargs):
            calls[0] += 1
            if calls[0] == limit:
                os._exit(9)
            return real(*args, **kwargs)
        return step_
    for name in ("_put", "_put_many", "_drop", "_consolidate"):
        setattr(packing_inplace, name, counted(getattr(packing_inplace, name)))
    getattr(packing, step)(url)
    return calls[0]
"""


@pytest.fixture(scope="module")
def kill_at(s3server, tmp_path_factory):
    """``kill_at.run(step, url, call) -> (exit code, changes)``, each in a process of its own
    (started after the server, whose credentials are in the environment)."""
    server = KillServer(_KILL_AT, tmp_path_factory.mktemp("killat") / "stderr.txt")
    yield server
    server.close()


@pytest.mark.parametrize("step", ["pack", "unpack"])
def test_a_process_killed_at_any_step_of_an_s3_layout_change_leaves_a_store_the_next_run_completes(
        step, published, s3server, s3cluster, capsys, kill_at):
    spec, local, source = published
    counting = _copy(s3server, source, f"count-{step}")
    if step == "pack":
        assert packing.unpack(counting)
    code, total = kill_at.run(step, counting, 0)  # the changes of one whole step
    assert code == 0, kill_at.errors()
    assert total > 5
    fs, seen = s3server.filesystem(), set()
    for call in sorted({1, 2, total // 2, total - 2, total - 1, total}):
        url = _copy(s3server, source, f"killed-{step}-{call}")
        if step == "pack":
            assert packing.unpack(url)
        assert kill_at.run(step, url, call)[0] == 9, kill_at.errors()
        state = packing.layout(url)
        assert state in ("tasks", "packing", "packed", "unpacking"), state
        seen.add(state)
        status = run_cli("status", url)
        capsys.readouterr()
        assert status == (0 if state in ("tasks", "packed") else 1), (call, state)
        report = _rerun(spec, url, s3cluster)
        assert report.complete and report.tasks_run == 0 and report.exact_run == 0, (call, state)
        assert packing.layout(url) == "packed" and not integrity.check(url), (call, state)
        assert not fs.exists(f"{url.removeprefix('s3://')}/{JOURNAL}"), call
        assert_bitwise_equal(local, url, COMPARED)
    assert f"{step}ing" in seen, seen  # some kill fell inside the change, after its journal


def test_a_store_of_one_task_per_array_is_packed_by_its_record_alone(s3server, s3cluster, make_spec, tmp_path):
    """One grid point and one task block: each task chunk is the whole array, so it is the packed
    chunk; packing writes no chunk and unpacking drops none."""
    text = make_spec("toy", params={"size": 8}, grid={"dice_sides": [3], "rule": ["plain"]},
                     run={"replicates": 2, "games": 2, "turns": 60}, checkpoints={"count": 5},
                     tasks={"replicates_per_task": 2})
    spec = tmp_path / "one.toml"
    spec.write_text(text)
    url = f"s3://boardsweep-tests/one-task-{os.getpid()}/sweep.zarr"
    local = tmp_path / "one.zarr"
    for store in (str(local), url):
        assert _rerun(spec, store, s3cluster).complete
    fs = s3server.filesystem()
    root = url.removeprefix("s3://")
    assert packing.layout(url) == "packed" and not integrity.check(url)
    assert not [p for p in fs.find(root) if "/c." in p]  # no packed chunk beside the task chunks
    assert_bitwise_equal(local, url, COMPARED)
    objects = sorted(p for p in fs.find(root) if "/c" in p)
    assert packing.unpack(url) and packing.layout(url) == "tasks" and not integrity.check(url)
    fs.invalidate_cache()
    assert sorted(p for p in fs.find(root) if "/c" in p) == objects  # nothing dropped
    assert_bitwise_equal(local, url, COMPARED)
