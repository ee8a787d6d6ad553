"""A store of every game opened by tools that are not boardsweep (issue 43).

A second zarr implementation (tensorstore) reads every numeric array bit for
bit as zarr-python does, and every text array's chunks as the zarr v3
``string`` data type (``vlen-utf8`` codec) defines them; plain xarray opens
the store with warnings as errors and writes it again (zarr, netCDF) without
one; IOOS's compliance checker finds no CF 1.10 error or warning in the
netCDF export, of plain xarray's and of :func:`open_sweep`'s.

tensorstore 0.1.86 has no ``string`` data type in its zarr3 driver: its
key-value store reads the text chunks (every chunk of every text array),
which are decoded here by the ``vlen-utf8`` layout (a little-endian u32
count, then each item as a u32 byte length and its UTF-8 bytes).
"""

from __future__ import annotations

import json
import struct
import warnings
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import xarray as xr
import zarr

from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import open_sweep

from specs import spec_toml  # tests/support is on sys.path

ts = pytest.importorskip("tensorstore")  # in the test extra (pinned in docker/requirements.lock): CI runs these
compliance_runner = pytest.importorskip("compliance_checker.runner")

#: One small store per game, the money game and the plugin game included;
#: hk_monopoly and chutes_ladders with fewer players than seats at some
#: points, Shut the Box with the precision rule's per-point arrays.
GAMES = {
    "monopoly": dict(grid={"dice_sides": [4, 6], "deck_policy": ["independent", "shuffled_cycle"]},
                     run={"replicates": 2, "games": 1, "players": 2, "turns": 100}),
    "shut_the_box": dict(grid={"dice_sides": [2, 3], "policy": ["optimal", "random"]}, run={"replicates": 2, "games": 50},
                         precision={"stderr": 0.5, "max_replicates": 4}),  # the precision rule's arrays and flags too
    "hk_monopoly": dict(grid={"jail_strategy": ["short", "long"], "players": [2, 4]}, run={"replicates": 2, "games": 5}),
    "chutes_ladders": dict(grid={"sides": [4, 6], "players": [1, 2]}, run={"replicates": 2, "games": 20}),
}


@pytest.fixture(scope="module")
def stores(tmp_path_factory, cluster2):
    folder = tmp_path_factory.mktemp("other_tools")
    out = {}
    for game, tables in GAMES.items():
        text = spec_toml(game, name=f"tools_{game}", seed=3, checkpoints={"count": 2},
                         tasks={"replicates_per_task": 2}, **tables)
        out[game] = folder / f"{game}.zarr"
        assert run_sweep(parse_spec(text, f"{game}.toml"), str(out[game]), scheduler=cluster2).complete
    return out


def _arrays(store: Path) -> dict[str, dict]:
    """name -> parsed zarr.json of every array of the store."""
    return {p.parent.name: json.loads(p.read_text()) for p in sorted(store.glob("*/zarr.json"))
            if json.loads(p.read_text())["node_type"] == "array"}


def _vlen_utf8(raw: bytes) -> list[str]:
    """The items of one ``vlen-utf8`` chunk (zarr v3 string data type), decoded by its layout."""
    count, at, out = struct.unpack_from("<I", raw, 0)[0], 4, []
    for _ in range(count):
        size = struct.unpack_from("<I", raw, at)[0]
        out.append(raw[at + 4:at + 4 + size].decode("utf-8"))
        at += 4 + size
    return out


@pytest.mark.slow
@pytest.mark.parametrize("game", list(GAMES))
def test_tensorstore_reads_every_array(stores, game):
    store = stores[game]
    arrays = _arrays(store)
    texts = [n for n, m in arrays.items() if m["data_type"] == "string"]
    assert texts and not [n for n, m in arrays.items() if not isinstance(m["data_type"], str)]  # no fixed_length_utf32
    group = zarr.open_group(str(store), mode="r")
    for name in arrays:
        if name in texts:
            continue
        opened = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store / name)}}, open=True).result()
        np.testing.assert_array_equal(opened.read().result(), group[name][...], err_msg=name)
    kv = ts.KvStore.open({"driver": "file", "path": str(store) + "/"}).result()
    for name in texts:
        meta = arrays[name]
        assert [c["name"] for c in meta["codecs"]][0] == "vlen-utf8", name
        values = np.asarray(group[name][...].tolist(), dtype=object)
        assert _read_text(kv, name, meta, values.shape).tolist() == values.tolist(), name


def _read_text(kv, name: str, meta: dict, shape: tuple[int, ...]) -> np.ndarray:
    """Text array ``name`` read chunk by chunk through tensorstore's key-value
    store and decoded by the zarr v3 spec (``vlen-utf8``, then zstd where it is)."""
    chunk = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
    separator = meta["chunk_key_encoding"].get("configuration", {}).get("separator", "/")
    out = np.full(shape, meta["fill_value"], dtype=object)
    for index in np.ndindex(*[-(-s // c) for s, c in zip(shape, chunk)]):
        read = kv.read(f"{name}/" + separator.join(["c", *map(str, index)])).result()
        if read.state == "missing":
            continue  # never written: the fill value
        raw = bytes(read.value)
        if "zstd" in [c["name"] for c in meta["codecs"]]:
            raw = numcodecs.Zstd().decode(raw)
        items = np.array(_vlen_utf8(bytes(raw)), dtype=object).reshape(chunk)
        region = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(index, chunk, shape))
        out[region] = items[tuple(slice(0, r.stop - r.start) for r in region)]
    return out


def _cf_problems(path: Path) -> tuple[list, dict]:
    """(errors and warnings, exceptions) of IOOS compliance-checker's CF 1.10 checks on a netCDF file."""
    suite = compliance_runner.CheckSuite()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the checker's own: its ioos_sos checker is deprecated
        suite.load_all_available_checkers()
    ds = suite.load_dataset(str(path))
    try:
        groups, errors = suite.run_all(ds, ["cf:1.10"], skip_checks=[])["cf:1.10"]
    finally:
        ds.close()
    failed = [(r.name, r.msgs) for r in groups if r.msgs and r.weight >= 2 and
              (r.value is False or (isinstance(r.value, tuple) and r.value[0] < r.value[1]))]
    return failed, errors


@pytest.mark.slow
@pytest.mark.parametrize("game", list(GAMES))
def test_plain_xarray_opens_and_saves_again_and_cf_finds_nothing(stores, game, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = xr.open_zarr(stores[game])
        ds.to_zarr(tmp_path / "again.zarr", consolidated=False)  # text saved as it came: no unstable data type
        ds.load().to_netcdf(tmp_path / "plain.nc")
        open_sweep(stores[game]).to_netcdf(tmp_path / "boardsweep.nc")  # lazily: native byte order, no endian warning
    again = xr.open_zarr(tmp_path / "again.zarr", consolidated=False)
    xr.testing.assert_identical(again.load(), ds)
    for path in (tmp_path / "plain.nc", tmp_path / "boardsweep.nc"):
        failed, errors = _cf_problems(path)
        assert not failed, failed
        # the checker's own exception on text coordinate variables (it subtracts labels): not the store's problem
        assert set(errors) <= {"check_coordinate_variables_strict_monotonicity"}, errors


@pytest.mark.slow
@pytest.mark.parametrize("game", ["hk_monopoly", "chutes_ladders"])
def test_seats_that_do_not_play_are_missing_in_plain_xarray(stores, game):
    """``ds.wins.sum("seat")`` counts the players' wins only: the seats that do
    not play read as NaN (float64, store format 6), never -1."""
    ds = xr.open_zarr(stores[game])
    wins = ds["wins"].isel(checkpoint=-1)
    for players in ds["players"].values:
        sub = wins.sel(players=players)
        assert bool(sub.isel(seat=slice(players, None)).isnull().all())
        assert bool(sub.isel(seat=slice(0, players)).notnull().all())
        np.testing.assert_array_equal(sub.sum("seat").values, sub.isel(seat=slice(0, players)).sum("seat").values)
    assert float(wins.min()) >= 0


#: The games whose store (GAMES' runs) holds integers that may be missing:
#: seats that do not play at points with fewer players, and replicate slots
#: the precision rule did not need (Shut the Box).  Store format 6 keeps them
#: as float64 with NaN (``integer_dtype`` names their integer type); format 5
#: kept int64 with ``_FillValue = -1``, whose lazy ``to_netcdf`` warned
#: 'endian-ness of dtype and endian kwarg do not match' (xarray relabels
#: zarr-python's explicit ``<i8`` with dask's ``astype``, a no-op, and
#: netCDF4 sees a ``<i8`` with ``endian="native"``).
MASKED = {"hk_monopoly", "chutes_ladders", "shut_the_box"}


@pytest.mark.slow
@pytest.mark.parametrize("game", list(GAMES))
def test_plain_xarray_saves_a_lazily_opened_store_again_without_a_warning(stores, game, tmp_path):
    """Issue 43's check as a user runs it: ``xr.open_zarr(store)`` straight to
    ``to_zarr`` and ``to_netcdf``, warnings as errors; the integers that may
    be missing read as float64 with NaN, whole numbers elsewhere."""
    ds = xr.open_zarr(stores[game])
    masked = [n for n, v in ds.data_vars.items() if v.encoding.get("dtype", v.dtype).kind in "iu" and "_FillValue" in v.encoding]
    assert not masked, masked
    floats = [n for n, v in ds.data_vars.items() if "integer_dtype" in v.attrs]
    assert bool(floats) == (game in MASKED), floats
    for name in floats:
        values = ds[name].values
        assert values.dtype == np.float64 and ds[name].attrs["integer_dtype"] == "int64"
        kept = values[~np.isnan(values)]
        assert np.isnan(values).any() and kept.size and (kept == np.round(kept)).all(), name
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds.to_zarr(tmp_path / "again.zarr", consolidated=False)
        ds.to_netcdf(tmp_path / "lazy.nc")
    again = xr.open_dataset(tmp_path / "lazy.nc")
    for name in floats:
        np.testing.assert_array_equal(again[name].values, ds[name].values)


@pytest.mark.slow
@pytest.mark.parametrize("game", list(GAMES))
def test_open_sweep_writes_again_without_a_warning(stores, game, tmp_path):
    """``open_sweep(store).to_zarr(...)``, warnings as errors: the integers that may be missing (float64
    with NaN as read) are written as read; they warned 'invalid value encountered in cast' (five
    times for the money game), written back as integers with a NaN fill."""
    ds = open_sweep(stores[game])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds.to_zarr(tmp_path / "again.zarr", consolidated=False)
    again = xr.open_zarr(tmp_path / "again.zarr", consolidated=False)
    for name, var in ds.data_vars.items():  # the same values (NaN where missing, as read), the same kinds
        np.testing.assert_array_equal(again[name].values.astype(var.dtype), var.values, err_msg=name)
        assert (again[name].dtype.kind in "OT") == (var.dtype.kind in "OT"), name
