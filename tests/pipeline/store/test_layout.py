"""A store says how its arrays are laid out (the root attribute boardsweep_layout): a store that loses or has an
edited ``.boardsweep/`` folder (copied with a glob that skips dot-files, its
``layout.json`` lost or garbled) is still read correctly, run to the end
without recomputing intact cells, or refused in one line; and no task ever
writes into a chunk that other tasks' cells share.  Real runs, real copies."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import zarr

from clirun import run_cli
from localdask import COMPARED, assert_bitwise_equal, raw_arrays
from boardsweep.pipeline import store
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import integrity, packing



@pytest.fixture(scope="module")
def stores(tmp_path_factory, cluster2):
    """The toy sweep run packed (the default) and a bigger spec's fresh run."""
    from specs import TOY_SPEC  # tests/support is on sys.path

    folder = tmp_path_factory.mktemp("layout")
    spec_path = folder / "toy.toml"
    spec_path.write_text(TOY_SPEC)
    bigger_path = folder / "bigger.toml"
    bigger_path.write_text(TOY_SPEC.replace("replicates = 4", "replicates = 6"))
    packed, bigger = folder / "packed.zarr", folder / "bigger.zarr"
    assert run_sweep(parse_spec(TOY_SPEC, str(spec_path)), str(packed), scheduler=cluster2).complete
    assert run_sweep(parse_spec(bigger_path.read_text(), str(bigger_path)), str(bigger),
                     scheduler=cluster2).complete
    return spec_path, packed, bigger_path, bigger


def _copy_without_dot_files(source: Path, target: Path) -> Path:
    """``cp -r source/* target/``: a shell glob skips dot-files."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".*"))
    assert not (target / ".boardsweep").exists()
    return target


def _run(spec_path: Path, url: Path, cluster, **kwargs):
    return run_sweep(parse_spec(spec_path.read_text(), str(spec_path)), str(url), scheduler=cluster, **kwargs)


def test_the_packed_state_is_recorded_in_the_root_attributes_not_on_the_arrays(stores):
    _, packed, _, _ = stores
    records = json.loads(zarr.open_group(str(packed), mode="r").attrs[packing.LAYOUT_ATTR])["arrays"]
    for name in COMPARED:
        assert name in records and records[name]["files"], name
        assert packing.LAYOUT_ATTR not in zarr.open_array(str(packed), path=name).attrs, name
    assert packing.layout(str(packed)) == "packed"


def test_a_copy_without_dot_files_reads_and_checks_as_the_original(stores, tmp_path, capsys):
    _, packed, _, _ = stores
    copy = _copy_without_dot_files(packed, tmp_path / "copy.zarr")
    assert packing.layout(str(copy)) == "packed"
    assert not integrity.check(str(copy))
    assert run_cli("status", str(copy)) == 0
    assert_bitwise_equal(copy, packed, COMPARED)


def test_a_copy_without_dot_files_with_a_deleted_packed_chunk_is_named(stores, tmp_path, capsys):
    _, packed, _, _ = stores
    copy = _copy_without_dot_files(packed, tmp_path / "copy.zarr")
    (copy / "counts" / "c" / "0" / "0" / "0" / "0" / "0").unlink()
    assert run_cli("status", str(copy)) == 1
    assert "packed chunk counts/c/0/0/0/0/0 missing" in " ".join(capsys.readouterr().out.split())


def test_a_rerun_of_a_copy_without_dot_files_recomputes_nothing(stores, tmp_path, cluster2):
    spec_path, packed, _, _ = stores
    copy = _copy_without_dot_files(packed, tmp_path / "copy.zarr")
    report = _run(spec_path, copy, cluster2)
    assert report.complete and report.tasks_run == 0 and report.exact_run == 0 and not report.repaired
    assert_bitwise_equal(copy, packed, COMPARED)


def test_extending_a_copy_without_dot_files_equals_a_fresh_run(stores, tmp_path, cluster2, capsys):
    spec_path, packed, bigger_path, bigger = stores
    copy = _copy_without_dot_files(packed, tmp_path / "copy.zarr")
    report = _run(bigger_path, copy, cluster2, extend=True)
    assert report.complete and report.exact_run == 0
    assert report.tasks_run == 4  # the new replicates 4-5 of each of the 4 grid points, nothing else
    assert run_cli("status", str(copy)) == 0
    assert_bitwise_equal(copy, bigger, COMPARED)
    counts = raw_arrays(copy)["counts"]
    assert (counts >= 0).all()  # no cell left at the fill value


def test_a_damaged_packed_chunk_without_its_kept_copy_is_recomputed(stores, tmp_path, cluster2):
    spec_path, packed, _, _ = stores
    copy = _copy_without_dot_files(packed, tmp_path / "copy.zarr")
    chunk = copy / "rolls" / "c" / "0" / "0" / "0" / "0"
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0xFF
    chunk.write_bytes(bytes(data))
    report = _run(spec_path, copy, cluster2)
    assert report.complete and report.tasks_run == 8 and report.exact_run == 0  # the chunk held every cell
    assert packing.layout(str(copy)) == "packed" and not integrity.check(str(copy))
    assert_bitwise_equal(copy, packed, COMPARED)


@pytest.mark.parametrize("journal", ["lost", "garbled", "wrong shape"])
def test_a_lost_or_garbled_journal_recomputes_nothing(journal, stores, tmp_path, cluster2, capsys):
    spec_path, packed, _, _ = stores
    copy = tmp_path / "copy.zarr"
    shutil.copytree(packed, copy)
    path = copy / packing.JOURNAL
    {"lost": lambda: path.unlink(missing_ok=True), "garbled": lambda: path.write_text("{not json"),
     "wrong shape": lambda: path.write_text('["packed"]')}[journal]()
    assert packing.layout(str(copy)) == "packed"
    assert run_cli("status", str(copy)) == 0
    report = _run(spec_path, copy, cluster2)
    assert report.complete and report.tasks_run == 0 and report.exact_run == 0
    assert_bitwise_equal(copy, packed, COMPARED)
    # growing it needs the task layout: the kept task chunks come back, none recomputed
    assert packing.unpack(str(copy)) and packing.layout(str(copy)) == "tasks"
    assert not integrity.check(str(copy))
    assert_bitwise_equal(copy, packed, COMPARED)


def test_a_packed_array_with_its_layout_record_removed_is_refused(stores, tmp_path, capsys):
    _, packed, _, _ = stores
    copy = _copy_without_dot_files(packed, tmp_path / "copy.zarr")
    group = zarr.open_group(str(copy), mode="r+")
    record = json.loads(group.attrs[packing.LAYOUT_ATTR])
    del record["arrays"]["counts"]
    group.attrs[packing.LAYOUT_ATTR] = json.dumps(record)
    assert run_cli("status", str(copy)) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "counts" in err[0] and "layout" in err[0], err


def test_no_task_writes_into_a_packed_chunk(stores, tmp_path):
    _, packed, _, _ = stores
    copy = _copy_without_dot_files(packed, tmp_path / "copy.zarr")
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    values = {"counts": np.zeros((2, 5, 8), dtype=np.int64)}
    with pytest.raises(store.LayoutError, match="shared"):
        store.write_region(str(copy), (0, 0), (slice(0, 1), slice(0, 1), slice(0, 2)), values,
                           np.ones((1, 1, 2), dtype=bool))
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before


def test_the_zarr_writer_of_remote_stores_refuses_a_shared_chunk_too(stores, tmp_path):
    """The writer remote stores use (through zarr) checks the same rule."""
    from boardsweep.pipeline.store import writes

    _, packed, _, _ = stores
    copy = _copy_without_dot_files(packed, tmp_path / "copy.zarr")
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    values = {"rolls": np.zeros((2, 5), dtype=np.int64)}
    with pytest.raises(store.LayoutError, match="shared"):
        writes._write_zarr(str(copy), None, (0, 0, slice(0, 2)), values, "done", np.ones(2, dtype=bool))
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before
    assert packing.unpack(str(copy)) and packing.layout(str(copy)) == "tasks"
    writes._write_zarr(str(copy), None, (0, 0, slice(0, 2)), values, "done", np.ones(2, dtype=bool))  # its own chunk: written
    assert (zarr.open_array(str(copy), path="rolls")[0, 0, :2] == 0).all()


def test_a_large_json_document_is_parsed_once_while_its_bytes_stay_the_same(monkeypatch):
    """A store's root metadata (20 MB at 10^7 grid points) is read by several
    checks of one command: parsed once while its bytes are the same, again
    when they change; each caller gets its own dicts to change."""
    from boardsweep.pipeline.store import layout

    parsed = []
    loads = json.loads
    monkeypatch.setattr(layout.json, "loads", lambda raw: parsed.append(len(raw)) or loads(raw))
    monkeypatch.setattr(layout, "_last_document", None)
    text = json.dumps({"attributes": {"spec_text": "x" * layout.BIG_DOCUMENT, "grid_axes": ["a"]}}).encode()
    first = layout.json_document(text)
    first["attributes"]["spec_text"] = "changed by its caller"
    second = layout.json_document(bytes(text))  # the same bytes, another object
    assert len(parsed) == 1 and second["attributes"]["spec_text"] == "x" * layout.BIG_DOCUMENT
    changed = text.replace(b'"a"', b'"b"')
    assert layout.json_document(changed)["attributes"]["grid_axes"] == ["b"] and len(parsed) == 2
    assert layout.json_document(b'{"small": 1}') == {"small": 1} and len(parsed) == 3  # small ones: parsed each time
    with pytest.raises(ValueError):
        layout.json_document(b"{" + b" " * layout.BIG_DOCUMENT)
