"""A store answers only with its own cells under its own labels (issue 36):
coordinates rewritten in the store, cells copied in from another store of the
same spec, a digest of half a sweep, a lost root ``zarr.json``.  Real stores
on disk, edited as a user or a script would, and the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import zarr

from clirun import run_cli
from localdask import COMPARED, assert_bitwise_equal
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import integrity, writes


@pytest.fixture(scope="module")
def stores(tmp_path_factory, cluster2):
    """Two complete toy stores of the same spec but their seeds (7, 8), in the
    task layout, with their spec files (shared, never modified)."""
    from specs import TOY_SPEC  # tests/support is on sys.path

    folder = tmp_path_factory.mktemp("own")
    made = {}
    for seed in (7, 8):
        text = TOY_SPEC.replace("seed = 7", f"seed = {seed}")
        spec_path = folder / f"toy{seed}.toml"
        spec_path.write_text(text)
        url = folder / f"toy{seed}.zarr"
        assert run_sweep(parse_spec(text, str(spec_path)), str(url), scheduler=cluster2, pack=False).complete
        made[seed] = (spec_path, url)
    return made


@pytest.fixture
def copy(stores, tmp_path) -> Path:
    target = tmp_path / "toy.zarr"
    shutil.copytree(stores[7][1], target)
    return target


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _coordinate(url: Path, name: str) -> zarr.Array:
    return zarr.open_array(str(url), path=name, mode="r+")


RELABEL = {  # coordinate: (edit of its values, the value a --sel would then pick)
    "dice_sides": (lambda v: np.array([2, 9]), "dice_sides=9"),
    "rule": (lambda v: v[::-1].copy(), "rule=plain"),
    "checkpoint": (lambda v: np.concatenate([v[:-1], [v[-1] + 1]]), None),
    "location": (lambda v: np.array([*v[:-1], "S99"]), None),
    "replicate": (lambda v: v + 1, None),
}


@pytest.mark.parametrize("name", list(RELABEL))
def test_a_relabelled_store_is_damaged_until_run_rewrites_its_labels(name, copy, stores, cluster2, capsys):
    spec_path, reference = stores[7]
    array = _coordinate(copy, name)
    edit, sel = RELABEL[name]
    array[...] = edit(array[...]).astype(array.dtype)

    assert run_cli("status", str(copy)) == 1
    line = _one_line(capsys)
    assert "is damaged" in line and f"coordinate {name!r}" in line and "spec" in line, line
    query = ["query", str(copy)] + (["--sel", sel] if sel else [])
    assert run_cli(*query) != 0
    assert f"coordinate {name!r}" in _one_line(capsys)
    assert capsys.readouterr().out == ""  # no answer with the wrong labels
    assert run_cli("report", str(copy), "--out", str(copy.parent / "report")) != 0
    assert f"coordinate {name!r}" in _one_line(capsys)
    assert run_cli("digest", str(copy)) == 1
    assert f"coordinate {name!r}" in _one_line(capsys)

    report = run_sweep(parse_spec(spec_path.read_text(), str(spec_path)), str(copy), scheduler=cluster2, pack=False)
    assert report.tasks_run == 0 and len(report.repaired) == 1, report.repaired
    assert report.repaired[0].startswith(f"coordinate {name!r} holds") and "rewritten from the spec" in report.repaired[0]
    assert run_cli("status", str(copy)) == 0
    assert np.array_equal(_coordinate(copy, name)[...], _coordinate(reference, name)[...])
    assert_bitwise_equal(copy, reference, COMPARED)


def _task_files(url: Path, record: str) -> list[str]:
    """The store-relative chunk files a task's checksum record lists, and the record itself."""
    chunks = json.loads((url / integrity.MANIFEST_DIR / record).read_text())["chunks"]
    return [k for k, v in chunks.items() if v is not None] + [f"{integrity.MANIFEST_DIR}/{record}"]


@pytest.mark.parametrize("record", ["sim/1.1.2.json", "exact/1.0.json"])
def test_cells_copied_from_a_store_of_another_seed_are_found_and_recomputed(record, copy, stores, cluster2,
                                                                             capsys):
    spec_path, reference = stores[7]
    foreign = stores[8][1]
    files = _task_files(foreign, record)
    if record.startswith("sim"):  # the seeds differ: so do the cells (the exact answer does not depend on it)
        assert any((foreign / f).read_bytes() != (copy / f).read_bytes() for f in files[:-1])
    for name in files:
        shutil.copyfile(foreign / name, copy / name)

    assert run_cli("status", str(copy)) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "another sweep" in out, out
    assert run_cli("-q", "run", str(spec_path), "--store", str(copy), "--scheduler", cluster2) == 0
    assert run_cli("status", str(copy)) == 0
    assert_bitwise_equal(copy, reference, COMPARED)


def test_a_record_copied_onto_another_grid_point_is_found(copy, stores, cluster2, capsys):
    """The chunks and record of one grid point laid over another's, in one store."""
    spec_path, reference = stores[7]
    source, target = _task_files(copy, "sim/0.0.0.json"), _task_files(copy, "sim/1.1.0.json")
    assert len(source) == len(target)
    for a, b in zip(sorted(source), sorted(target)):
        shutil.copyfile(copy / a, copy / b)
    manifest = json.loads((copy / integrity.MANIFEST_DIR / "sim/0.0.0.json").read_text())
    manifest["chunks"] = {k.replace("/c/0/0/0/", "/c/1/1/0/").replace("/c/0/0/0", "/c/1/1/0"): v
                          for k, v in manifest["chunks"].items()}
    (copy / integrity.MANIFEST_DIR / "sim/1.1.0.json").write_text(json.dumps(manifest))

    assert run_cli("status", str(copy)) == 1
    assert "dice_sides=3, rule='sticky', replicates 0-1" in " ".join(capsys.readouterr().out.split())
    assert run_cli("-q", "run", str(spec_path), "--store", str(copy), "--scheduler", cluster2) == 0
    assert_bitwise_equal(copy, reference, COMPARED)


def test_a_store_without_bound_records_is_still_verified_by_content(copy, capsys):
    """Records written before the binding (no ``bound`` key, no ``record_binding`` attribute)."""
    for path in (copy / integrity.MANIFEST_DIR).rglob("*.json"):
        manifest = json.loads(path.read_text())
        manifest.pop("bound")
        path.write_text(json.dumps(manifest))
    group = zarr.open_group(str(copy), mode="r+")
    del group.attrs["record_binding"]
    zarr.consolidate_metadata(str(copy))
    assert run_cli("status", str(copy)) == 0
    chunk = copy / _task_files(copy, "sim/1.1.2.json")[0]
    chunk.write_bytes(chunk.read_bytes()[:-1])
    assert run_cli("status", str(copy)) == 1


def test_a_digest_of_half_a_sweep_is_refused_or_marked_partial(copy, stores, tmp_path, cluster2, capsys):
    spec_path = stores[7][0]
    writes.clear_done(str(copy), [((1, 1), 2), ((0, 1), 0)], [(1, 0)], 2)  # as if those tasks never ran
    out = tmp_path / "digest.json"
    assert run_cli("digest", str(copy), "--out", str(out)) == 1
    line = _one_line(capsys)
    assert "incomplete" in line and "4 of 16 replicates not done" in line and "1 of 4 exact" in line, line
    assert not out.exists()

    assert run_cli("digest", str(copy), "--partial", "--out", str(out)) == 0
    recorded = json.loads(out.read_text())
    assert recorded["partial"]["replicates_missing"] == 4 and recorded["partial"]["exact_missing"] == 1
    capsys.readouterr()
    assert run_cli("verify", str(spec_path), "--against", str(out), "--scheduler", cluster2) == 1
    line = _one_line(capsys)
    assert "partial digest" in line and "4 of 16 replicates" in line, line


def test_a_digest_of_a_finished_sweep_is_not_partial(stores, tmp_path):
    out = tmp_path / "digest.json"
    assert run_cli("digest", str(stores[7][1]), "--out", str(out)) == 0
    assert "partial" not in json.loads(out.read_text())


def test_a_lost_root_zarr_json_is_named_and_rebuilt_from_the_spec(copy, stores, cluster2, capsys):
    spec_path, reference = stores[7]
    (copy / "zarr.json").unlink()
    for command in (["status"], ["query"], ["digest"], ["verify", str(spec_path), "--scheduler", cluster2, "--against"]):
        assert run_cli(*command, str(copy)) == 1
        line = _one_line(capsys)
        assert "root metadata (zarr.json) is missing" in line and "boardsweep run SPEC" in line, line

    assert run_cli("run", str(spec_path), "--store", str(copy), "--scheduler", cluster2) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "root metadata (zarr.json) was missing: rebuilt" in out, out
    assert run_cli("status", str(copy)) == 0
    assert_bitwise_equal(copy, reference, COMPARED)
    assert json.loads(zarr.open_group(str(copy), mode="r").attrs["spec_canonical"])["seed"] == 7


def test_a_lost_root_zarr_json_is_not_rebuilt_from_another_grid(copy, stores, write_spec, make_spec, cluster2,
                                                                capsys):
    (copy / "zarr.json").unlink()
    other = write_spec(stores[7][0].read_text().replace("[2, 3]", "[2, 4]"), "other.toml")
    before = sorted(p.name for p in copy.rglob("*"))
    assert run_cli("run", str(other), "--store", str(copy), "--scheduler", cluster2) == 2
    line = _one_line(capsys)
    assert "lost its root metadata" in line and "dice_sides" in line, line
    assert sorted(p.name for p in copy.rglob("*")) == before


def test_a_lost_root_zarr_json_of_an_older_format_is_not_rebuilt_into_a_mixed_one(copy, stores, cluster2, capsys):
    """A store of format 4 or before (text in fixed width) that lost its root
    metadata is refused in one line, not given format 5's attributes."""
    old = _coordinate(copy, "rule")
    values, attrs, dims = old[...].tolist(), dict(old.attrs), old.metadata.dimension_names
    group = zarr.open_group(str(copy), mode="r+", use_consolidated=False)
    group.create_array("rule", shape=(len(values),), dtype="<U6", fill_value="", attributes=attrs,
                       dimension_names=dims, overwrite=True)[...] = np.array(values, dtype="<U6")
    (copy / "zarr.json").unlink()
    before = sorted(p.name for p in copy.rglob("*"))
    assert run_cli("run", str(stores[7][0]), "--store", str(copy), "--scheduler", cluster2) == 2
    line = _one_line(capsys)
    assert "older store format" in line and "'rule'" in line and "--overwrite" in line, line
    assert sorted(p.name for p in copy.rglob("*")) == before


def test_a_lost_root_zarr_json_rebuilt_with_another_seed_recomputes_every_cell(copy, stores, cluster2):
    (copy / "zarr.json").unlink()
    spec_path, reference = stores[8]
    report = run_sweep(parse_spec(spec_path.read_text(), str(spec_path)), str(copy), scheduler=cluster2, pack=False)
    assert report.complete and report.tasks_run == 8
    assert_bitwise_equal(copy, reference, COMPARED)


def test_an_interrupted_removal_is_still_named_as_such(copy, stores, cluster2, capsys):
    """What a removal cut short leaves (it removes the arrays, then zarr.json, then .boardsweep/)."""
    names = [p.name for p in copy.iterdir() if (p / "zarr.json").is_file() and p.name != ".boardsweep"]
    for name in names:
        shutil.rmtree(copy / name)
    (copy / "zarr.json").unlink()
    assert run_cli("run", str(stores[7][0]), "--store", str(copy), "--scheduler", cluster2) == 2
    assert "removal was cut short" in _one_line(capsys)


def test_a_real_game_store_checks_its_label_names(monopoly_spec_text, write_spec, tmp_path, cluster2, capsys):
    """Monopoly's ``location`` codes and their ``location_name`` are labels too."""
    spec_path = write_spec(monopoly_spec_text)
    url = tmp_path / "small.zarr"
    assert run_sweep(parse_spec(monopoly_spec_text, str(spec_path)), str(url), scheduler=cluster2, pack=False).complete
    assert run_cli("status", str(url)) == 0
    names = _coordinate(url, "location_name")
    values = names[...]
    names[...] = np.concatenate([values[1:2], values[:1], values[2:]]).astype(names.dtype)  # two names swapped
    assert run_cli("status", str(url)) == 1
    assert "coordinate 'location_name'" in _one_line(capsys)
    assert run_cli("-q", "run", str(spec_path), "--store", str(url), "--scheduler", cluster2) == 0
    assert run_cli("status", str(url)) == 0
    assert np.array_equal(_coordinate(url, "location_name")[...], values)
