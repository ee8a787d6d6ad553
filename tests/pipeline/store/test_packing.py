"""A complete store is packed into large chunks: the same values, a few dask
chunks for plain xarray, damage named and repaired without recomputing, and a
process killed at any step of packing or unpacking leaves a store that the
next run puts right.  Real runs, real files, real killed processes."""

from __future__ import annotations

import itertools
import json

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr

from clirun import run_cli
from killat import KillServer
from localdask import COMPARED, assert_bitwise_equal
from boardsweep.pipeline.store import integrity, packing
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.store import load_sweep
from boardsweep.pipeline.spec.parse import parse_spec



@pytest.fixture(scope="module")
def stores(tmp_path_factory, cluster2):
    """The toy sweep run twice: packed (the default) and in the task layout."""
    from specs import TOY_SPEC  # tests/support is on sys.path

    folder = tmp_path_factory.mktemp("packing")
    spec_path = folder / "toy.toml"
    spec_path.write_text(TOY_SPEC)
    spec = parse_spec(TOY_SPEC, str(spec_path))
    packed, tasks = folder / "packed.zarr", folder / "tasks.zarr"
    assert run_sweep(spec, str(packed), scheduler=cluster2).complete
    assert run_sweep(spec, str(tasks), scheduler=cluster2, pack=False).complete
    return spec_path, packed, tasks


@pytest.fixture
def copy(stores, tmp_path) -> Path:
    target = tmp_path / "toy.zarr"
    shutil.copytree(stores[1], target)
    return target


def _files(folder: Path) -> dict[str, str]:
    """SHA-256 of every file below ``folder``, by relative path."""
    return {str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(folder.rglob("*")) if f.is_file()}


def test_packed_chunk_shape_is_whole_or_split_along_leading_dims():
    assert packing.packed_chunks((40, 2, 4, 41), 8) == (40, 2, 4, 41)
    # 2*4*41*8 = 2624 bytes per leading index: 3 of them fit in 8 KiB
    assert packing.packed_chunks((40, 2, 4, 41), 8, limit=8192) == (3, 2, 4, 41)
    # one leading index is already too big: split the next dim too
    assert packing.packed_chunks((40, 2, 4, 41), 8, limit=1000) == (1, 1, 3, 41)
    assert packing.packed_chunks((), 8) == ()


def test_a_complete_run_is_packed_with_the_same_values(stores):
    _, packed, tasks = stores
    assert packing.layout(str(packed)) == "packed" and packing.layout(str(tasks)) == "tasks"
    assert_bitwise_equal(packed, tasks, COMPARED)
    for name in COMPARED:
        array = zarr.open_array(str(packed), path=name)
        assert array.chunks == array.shape, name  # the toy store is small: one chunk
        assert len(list((packed / name).rglob("c*"))) <= 2  # the c/ folder and one chunk file path
    plain = xr.open_zarr(str(packed))
    assert all(v.data.npartitions == 1 for v in plain.data_vars.values())
    xr.testing.assert_equal(xr.open_zarr(str(packed), chunks=None).load(),  # attrs: creation times differ
                                xr.open_zarr(str(tasks), chunks=None).load())
    xr.testing.assert_equal(load_sweep(str(packed)), load_sweep(str(tasks)))
    assert not integrity.check(str(packed))


def _nested(key: str) -> str:
    """A kept chunk file's flat path (``counts/c.0.1``) as zarr's key (``counts/c/0/1``)."""
    array, _, name = key.partition("/")
    return f"{array}/{name.replace('.', '/')}" if name.startswith("c.") else key


def test_the_kept_task_chunks_are_flat_one_folder_per_array(stores):
    """The task chunks a packed store keeps lie flat in their array's folder
    (one folder per array, not one per chunk and dimension: a 2 x 10^4-point
    store had 415 files and folders per 1,000 points, most of them these)."""
    _, packed, tasks = stores
    kept = packed / packing.CELLS
    folders = [p for p in kept.rglob("*") if p.is_dir()]
    assert sorted(p.name for p in folders) == sorted(p.name for p in kept.iterdir())  # the arrays' folders only
    assert not (packed / packing.NESTED_CELLS).exists()
    assert {_nested(k) for k in _files(kept)} == {k for k in _files(tasks) if k.split("/")[0] in
                                                  {p.name for p in folders}}


def test_a_store_packed_with_nested_task_chunks_still_unpacks(stores, tmp_path):
    """A store packed before kept its task chunks nested under
    ``.boardsweep/cells``: unpacking moves them back, bit for bit."""
    _, packed, tasks = stores
    copy = tmp_path / "nested.zarr"
    shutil.copytree(packed, copy)
    for array in (copy / packing.CELLS).iterdir():  # as the previous release left them
        for flat in [f for f in array.iterdir() if f.name.startswith("c.")]:
            target = array.joinpath(*flat.name.split("."))
            target.parent.mkdir(parents=True, exist_ok=True)
            flat.rename(target)
    (copy / packing.CELLS).rename(copy / packing.NESTED_CELLS)
    assert packing.unpack(str(copy)) and packing.layout(str(copy)) == "tasks"
    assert_bitwise_equal(copy, tasks, COMPARED)
    assert not (copy / packing.NESTED_CELLS).exists() and not integrity.check(str(copy))


def test_unpack_moves_the_task_chunks_back_untouched(stores, tmp_path):
    _, packed, tasks = stores
    copy = tmp_path / "copy.zarr"
    shutil.copytree(packed, copy)
    before = {_nested(k): v for k, v in _files(copy / packing.CELLS).items()}
    assert packing.unpack(str(copy)) and packing.layout(str(copy)) == "tasks"
    arrays = {k.split("/")[0] for k in before}
    after = {k: v for k, v in _files(copy).items() if k.split("/")[0] in arrays}
    assert after == before  # the same bytes, at the same places relative to the array
    assert_bitwise_equal(copy, tasks, COMPARED)
    assert zarr.open_array(str(copy), path="counts").chunks == zarr.open_array(str(tasks), path="counts").chunks
    assert not (copy / packing.CELLS).exists() and not integrity.check(str(copy))


def test_a_rerun_of_a_packed_store_does_nothing(copy, stores, cluster2):
    spec_path = stores[0]
    before = _files(copy)
    report = run_sweep(parse_spec(spec_path.read_text(), str(spec_path)), str(copy), scheduler=cluster2)
    assert report.complete and report.tasks_run == 0 and report.exact_run == 0 and not report.repaired
    assert _files(copy) == before


def _garble(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


DAMAGE = {
    "garbled": (_garble, "altered (checksum differs)"),
    "deleted": (Path.unlink, "missing"),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_damaged_packed_chunk_is_named_refused_and_rebuilt_without_recomputing(case, copy, stores, cluster2,
                                                                                capsys):
    damage, reason = DAMAGE[case]
    spec_path, reference, _ = stores
    (chunk,) = [p for p in (copy / "counts").rglob("*") if p.is_file() and p.name != "zarr.json"]
    damage(chunk)

    assert run_cli("status", str(copy)) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "replicates 0-1" in out and f"packed chunk counts/c/0/0/0/0/0 {reason}" in out, out
    assert run_cli("query", str(copy)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is damaged" in err[0] and "packed chunk" in err[0], err

    report = run_sweep(parse_spec(spec_path.read_text(), str(spec_path)), str(copy), scheduler=cluster2)
    assert report.complete and report.tasks_run == 0 and report.exact_run == 0
    assert len(report.repaired) == 1 and "packed copy damaged" in report.repaired[0]
    assert packing.layout(str(copy)) == "packed" and not integrity.check(str(copy))
    assert_bitwise_equal(copy, reference, COMPARED)


def test_deleted_packed_metadata_is_rebuilt(copy, stores, cluster2, capsys):
    spec_path, reference, _ = stores
    (copy / "done" / "zarr.json").unlink()
    assert run_cli("status", str(copy)) == 1
    report = run_sweep(parse_spec(spec_path.read_text(), str(spec_path)), str(copy), scheduler=cluster2)
    assert report.complete and report.tasks_run == 0
    assert packing.layout(str(copy)) == "packed"
    assert_bitwise_equal(copy, reference, COMPARED)


def test_damaged_task_chunk_kept_aside_is_recomputed_when_unpacked(copy, stores, cluster2):
    """A packed copy damaged and a task chunk damaged too: the unpacked store is
    checked as usual and exactly the damaged task runs again."""
    spec_path, reference, _ = stores
    cells = copy / packing.CELLS / "rolls"
    _garble(next(p for p in sorted(cells.rglob("*")) if p.is_file() and p.name != "zarr.json"))
    (copy / "rolls" / "zarr.json").unlink()
    report = run_sweep(parse_spec(spec_path.read_text(), str(spec_path)), str(copy), scheduler=cluster2)
    assert report.complete and report.tasks_run == 1
    assert_bitwise_equal(copy, reference, COMPARED)


#: ``run`` for the kill-at server (killat.py): pack or unpack a store, the process killed (no
#: clean-up of any kind) just before its ``limit``-th rename; the renames made, when not killed.
_KILL_AT = """
import os
from boardsweep.pipeline.store import packing
def run(step, url, limit):
    calls, real = [0], os.replace
    def replace(a, b):
        calls[0] += 1
        if calls[0] == limit:
            os._exit(9)  # killed: no clean-up of any kind
        real(a, b)
    os.replace = replace
    getattr(packing, step)(url)
    return calls[0]
"""


@pytest.fixture(scope="module")
def kill_at(tmp_path_factory):
    """``kill_at.run(step, url, call) -> (exit code, renames)``, each in a process of its own."""
    server = KillServer(_KILL_AT, tmp_path_factory.mktemp("killat") / "stderr.txt")
    yield server
    server.close()


@pytest.mark.parametrize("step", ["pack", "unpack"])
def test_a_process_killed_at_any_rename_leaves_a_store_the_next_run_completes(step, stores, tmp_path,
                                                                             cluster2, capsys, kill_at):
    spec_path, packed, tasks = stores
    source = tasks if step == "pack" else packed
    counting = tmp_path / "count.zarr"
    shutil.copytree(source, counting)
    code, total = kill_at.run(step, counting, 0)  # renames of one whole step
    assert code == 0, kill_at.errors()
    assert total > 5
    for call in sorted({1, 2, total // 2, total - 2, total - 1, total}):
        url = tmp_path / f"killed-{call}.zarr"
        shutil.copytree(source, url)
        assert kill_at.run(step, url, call)[0] == 9, kill_at.errors()
        state = packing.layout(str(url))
        assert state in ("tasks", "packing", "packed", "unpacking"), state
        status = run_cli("status", str(url))
        capsys.readouterr()
        assert status == (0 if state in ("tasks", "packed") else 1), (call, state)
        report = run_sweep(parse_spec(spec_path.read_text(), str(spec_path)), str(url), scheduler=cluster2)
        assert report.complete and report.tasks_run == 0 and report.exact_run == 0, (call, state)
        assert packing.layout(str(url)) == "packed" and not integrity.check(str(url)), call
        assert not (url / packing.PACKING).exists()
        assert_bitwise_equal(url, packed, COMPARED)


def test_overwrite_removes_the_packed_store_and_keeps_the_users_files(copy, stores, cluster2, make_spec):
    (copy / "thesis.txt").write_text("mine")
    other = make_spec("toy", params={"size": 8}, grid={"dice_sides": [2]}, run={"replicates": 2, "games": 1,
                      "turns": 10}, checkpoints={"count": 2})
    report = run_sweep(parse_spec(other, "other.toml"), str(copy), scheduler=cluster2, overwrite=True)
    assert report.complete and packing.layout(str(copy)) == "packed"
    assert (copy / "thesis.txt").read_text() == "mine"
    attrs = dict(zarr.open_group(str(copy), mode="r").attrs)
    assert set(json.loads(attrs[packing.LAYOUT_ATTR])["arrays"]) == set(packing.task_arrays(attrs))
    assert np.asarray(zarr.open_array(str(copy), path="done")[...]).shape == (1, 2)


def test_a_chunk_that_does_not_decode_stops_packing_and_changes_nothing(stores, tmp_path):
    from boardsweep.pipeline.errors import ChunkUnreadable

    url = tmp_path / "tasks.zarr"
    shutil.copytree(stores[2], url)
    (url / "counts" / "c" / "1" / "0" / "0" / "0" / "0").write_bytes(b"not zstd")
    before = _files(url)
    assert not packing.pack(str(url))  # checked first: damaged, so not packed
    with pytest.raises(ChunkUnreadable):
        packing.pack(str(url), verify=False)
    assert packing.layout(str(url)) == "tasks" and _files(url) == before


def test_an_emptied_chunk_tree_is_removed_whole(tmp_path):
    """:func:`packing._flatten` of two arrays of different depths: the chunk
    files flat, every emptied folder removed (side by side, deepest first),
    a folder that is not a chunk's too; a second call changes nothing."""
    arrays = [tmp_path / "counts", tmp_path / "done"]
    for array, depth in zip(arrays, (2, 0)):
        for i, r in itertools.product(range(3), range(4)):
            chunk = array.joinpath("c", str(i), "0", str(r), *["0"] * depth)
            chunk.parent.mkdir(parents=True, exist_ok=True)
            chunk.write_bytes(b"x")
    (arrays[0] / "c" / "1" / "stray").mkdir()
    packing._flatten(*arrays)
    for array, depth in zip(arrays, (2, 0)):
        assert sorted(p.name for p in array.iterdir()) == sorted(
            ".".join(["c", str(i), "0", str(r), *["0"] * depth]) for i in range(3) for r in range(4))
    before = sorted(tmp_path.rglob("*"))
    packing._flatten(*arrays)
    assert sorted(tmp_path.rglob("*")) == before and not any(p.is_dir() for p in before if p.parent != tmp_path)
