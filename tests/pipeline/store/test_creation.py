"""A store created with zarr's own API (:func:`creation.create_store`) is the
store xarray's ``to_zarr`` of the dask template wrote before: every
``zarr.json`` the same as parsed JSON, the same files, the same coordinate
values, for every shipped sweep and the test games."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import zarr
from specs import MONOPOLY_SPEC, TOY_SPEC, spec_toml

from boardsweep.pipeline.spec.parse import load_spec, parse_spec
from boardsweep.pipeline.store import creation, schema
from boardsweep.pipeline.store.zarr_private import quiet

SWEEPS = sorted((Path(__file__).resolve().parents[3] / "sweeps").glob("*.toml"))

#: Test games' specs beside the shipped sweeps: seats that may not play
#: (float64 seats), a precision rule (its per-point variables, with values),
#: tasks of several grid points (grid chunks), a text axis, another game.
TEST_SPECS = {
    "toy": TOY_SPEC,
    "monopoly_players": MONOPOLY_SPEC,
    "toy_precision": spec_toml("toy", params={"size": 8}, grid={"dice_sides": [2, 3, 4]},
                               run={"replicates": 4, "games": 2, "turns": 60}, checkpoints={"count": 3},
                               precision={"stderr": 0.01, "max_replicates": 8}),
    "toy_points_per_task": spec_toml("toy", params={"size": 8}, grid={"dice_sides": [2, 3, 4, 5, 6]},
                                     run={"replicates": 2, "games": 1, "turns": 30}, checkpoints={"count": 2},
                                     tasks={"points_per_task": 2}),
    "chutes_ladders": spec_toml("chutes_ladders", grid={"players": [1, 2]},
                                run={"replicates": 2, "games": 1}),
}


def _old_create(url: str, spec) -> None:
    """The store as it was created before: xarray's ``to_zarr`` of the dask template."""
    ds, encoding = schema.template(spec, spec.game)
    creation.mark_own_folder(url)
    with quiet():
        ds.to_zarr(url, mode="a", compute=False, encoding=encoding, consolidated=True, zarr_format=3)


def _metadata(root: Path) -> dict[str, dict]:
    """Every ``zarr.json`` under ``root``, parsed; the creation time and the
    history line (which holds it) set aside: two creations a second apart
    differ there and nowhere else."""
    found = {}
    for path in sorted(root.rglob("zarr.json")):
        meta = json.loads(path.read_text())
        for attrs in [meta.get("attributes", {}),
                      *[m.get("attributes", {}) for m in (meta.get("consolidated_metadata") or {})
                        .get("metadata", {}).values()]]:
            for key in ("created", "history"):
                if key in attrs:
                    attrs[key] = "(time)"
        found[str(path.relative_to(root))] = meta
    return found


def _compare(spec, tmp_path: Path) -> None:
    new, old = tmp_path / "new.zarr", tmp_path / "old.zarr"
    creation.create_store(str(new), spec)
    _old_create(str(old), spec)
    new_meta, old_meta = _metadata(new), _metadata(old)
    assert new_meta.keys() == old_meta.keys()
    for name in new_meta:
        assert new_meta[name] == old_meta[name], name
    # the same files: the coordinates' and markers' chunks, none for the empty arrays
    files = {str(p.relative_to(new)) for p in new.rglob("*") if p.is_file()}
    assert files == {str(p.relative_to(old)) for p in old.rglob("*") if p.is_file()}
    _, encoding = schema.skeleton(spec, spec.game)
    with quiet():
        ours, theirs = zarr.open_group(str(new), mode="r"), zarr.open_group(str(old), mode="r")
        valued = [name for name in ours.array_keys() if name not in encoding]
        assert "replicate" in valued and "checkpoint" in valued
        for name in valued:
            np.testing.assert_array_equal(ours[name][...], theirs[name][...], err_msg=name)


@pytest.mark.parametrize("path", SWEEPS, ids=[p.stem for p in SWEEPS])
def test_a_shipped_sweep_creates_the_store_to_zarr_created(path, tmp_path):
    _compare(load_spec(path), tmp_path)


@pytest.mark.parametrize("name", sorted(TEST_SPECS))
def test_a_test_game_creates_the_store_to_zarr_created(name, tmp_path):
    _compare(parse_spec(TEST_SPECS[name], f"{name}.toml"), tmp_path)


def test_the_skeleton_holds_no_memory_for_the_empty_arrays():
    """The empty arrays are zero-stride views of their fill value, read-only."""
    ds, encoding = schema.skeleton(parse_spec(TOY_SPEC), parse_spec(TOY_SPEC).game)
    assert {"done", "exact_done"} <= set(encoding)
    for name in encoding:
        data = ds[name].variable.data
        assert isinstance(data, np.ndarray) and not data.flags.writeable
        assert all(stride == 0 for stride in data.strides)


def test_ensure_arrays_recreates_a_lost_array_keeping_its_chunks_and_the_root_attributes(tmp_path):
    spec = parse_spec(TOY_SPEC, "toy.toml")
    url = tmp_path / "toy.zarr"
    creation.create_store(str(url), spec)
    with quiet():
        group = zarr.open_group(str(url), mode="r+")
        group["done"][0, 0, 0] = True
        group.attrs["history"] = group.attrs["history"] + "\nsomething a run did"
        zarr.consolidate_metadata(str(url))
    (url / "done" / "zarr.json").unlink()
    (url / "checkpoint" / "c" / "0").write_bytes(b"garbled")
    assert sorted(creation.ensure_arrays(str(url), spec)) == ["checkpoint", "done"]
    with quiet():
        group = zarr.open_group(str(url), mode="r")
        assert bool(group["done"][0, 0, 0]) and int(group["done"][...].sum()) == 1
        assert group["checkpoint"][...].tolist() == spec.checkpoints.tolist()
        assert group.attrs["history"].endswith("something a run did")
    assert creation.ensure_arrays(str(url), spec) == []
