"""Damage is found and repaired: a cell is done only when its flag is set and
its data is present and readable.  Real stores, real chunk files damaged on
disk; the repair is bit-identical to a fresh run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import xarray as xr

from clirun import run_cli
from localdask import COMPARED, assert_bitwise_equal
from boardsweep.pipeline.store import integrity
from boardsweep.pipeline import errors
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.store import open_sweep
from boardsweep.pipeline.spec.parse import parse_spec



@pytest.fixture(scope="module")
def pristine(tmp_path_factory, cluster2):
    """A complete toy store in the task layout (one chunk per task, not packed),
    and its spec file (shared, never modified)."""
    from specs import TOY_SPEC  # tests/support is on sys.path

    folder = tmp_path_factory.mktemp("pristine")
    spec_path = folder / "toy.toml"
    spec_path.write_text(TOY_SPEC)
    url = folder / "toy.zarr"
    assert run_sweep(parse_spec(TOY_SPEC, str(spec_path)), str(url), scheduler=cluster2, pack=False).complete
    return spec_path, url


@pytest.fixture
def copy(pristine, tmp_path) -> Path:
    target = tmp_path / "toy.zarr"
    shutil.copytree(pristine[1], target)
    return target


def _chunk(url: Path, name: str) -> Path:
    """The chunk file of ``name`` at dice_sides=3, rule='sticky', replicates 2-3 (for exact
    answers: dice_sides=3, rule='plain'; 'sticky' has none), found from the record its task wrote."""
    record = "exact/1.0.json" if name.startswith("exact") else "sim/1.1.2.json"
    chunks = json.loads((url / integrity.MANIFEST_DIR / record).read_text())["chunks"]
    (key,) = [k for k in chunks if k.startswith(f"{name}/")]
    assert (url / key).is_file(), key
    return url / key


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def _garble(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


STICKY, PLAIN = "dice_sides=3, rule='sticky'", "dice_sides=3, rule='plain'"
DAMAGE = {
    "deleted simulated chunk": ("counts", Path.unlink, f"{STICKY}, replicates 2-3",
                                "chunk counts/c/1/1/1/0/0 missing"),
    "deleted exact chunk": ("exact_frequency", Path.unlink, f"{PLAIN}, exact answer",
                            "chunk exact_frequency/c/1/0/0 missing"),
    "truncated chunk": ("counts", _truncate, f"{STICKY}, replicates 2-3", "bytes"),
    "garbled chunk": ("events", _garble, f"{STICKY}, replicates 2-3", "altered (checksum differs)"),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_damage_is_named_refused_and_repaired(case, copy, pristine, cluster2, capsys):
    name, damage, cell, reason = DAMAGE[case]
    spec_path, reference = pristine
    damage(_chunk(copy, name))

    assert run_cli("status", str(copy)) == 1
    out = capsys.readouterr().out
    assert cell in " ".join(out.split()) and reason in " ".join(out.split()), out
    for command in (("query", str(copy)), ("report", str(copy), "--out", str(copy.parent / "report"))):
        assert run_cli(*command) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"is damaged: {cell}" in err[0], err
    with pytest.raises(errors.StoreDamaged, match=cell.split(",")[1].strip()):
        open_sweep(str(copy))

    assert run_cli("run", str(spec_path), "--store", str(copy), "--scheduler", cluster2) == 0
    out = capsys.readouterr().out
    assert f"repaired: {cell}" in " ".join(out.split())
    assert run_cli("status", str(copy)) == 0
    assert_bitwise_equal(copy, reference, COMPARED)


def test_deleted_done_flags_are_recomputed(copy, pristine, cluster2, capsys):
    spec_path, reference = pristine
    _chunk(copy, "done").unlink()
    assert run_cli("status", str(copy)) == 1
    assert "14/16replicatesdone" in capsys.readouterr().out.replace(" ", "")
    report = run_sweep(parse_spec(spec_path.read_text(), str(spec_path)), str(copy), scheduler=cluster2)
    assert report.complete and report.tasks_run == 1
    assert_bitwise_equal(copy, reference, COMPARED)


def test_deleted_array_metadata_is_restored_without_recomputing(copy, pristine, cluster2, capsys):
    spec_path, reference = pristine
    (copy / "rolls" / "zarr.json").unlink()
    assert run_cli("status", str(copy)) == 1
    assert "array 'rolls'" in capsys.readouterr().err
    assert run_cli("query", str(copy)) == 2
    assert "array 'rolls'" in capsys.readouterr().err
    report = run_sweep(parse_spec(spec_path.read_text(), str(spec_path)), str(copy), scheduler=cluster2)
    assert report.complete and report.tasks_run == 0
    assert report.repaired == ["array metadata recreated: rolls"]
    assert_bitwise_equal(copy, reference, COMPARED)


def test_intact_store_still_opens_with_plain_xarray(pristine):
    """The checksum records sit beside the arrays; plain xarray ignores them."""
    ds = xr.open_zarr(str(pristine[1]))
    assert set(ds.data_vars) >= {"counts", "done"} and ".boardsweep" not in ds.variables
    assert not integrity.check(str(pristine[1]))
