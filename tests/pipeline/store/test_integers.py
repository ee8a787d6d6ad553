"""Store format 6: integers that may be missing kept as float64 with NaN
(:mod:`boardsweep.pipeline.store.integers`), read by boardsweep exactly as
format 5's int64 with ``_FillValue = -1`` were.

tests/support/old_stores/format5_hk_monopoly.zarr was written by main at
ef0d374 (format 5) from :data:`SPEC`; the same spec run now writes format 6,
whose integers must read the same to the bit.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr

from boardsweep.pipeline.errors import IntegerTooLarge
from boardsweep.pipeline.run import verify
from boardsweep.pipeline.run.execute import run_sweep
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.store import chunkfiles, integers, load_sweep, open_sweep, packing, read_array

from clirun import run_cli  # tests/support is on sys.path
from specs import spec_toml

FORMAT5 = Path(__file__).resolve().parents[2] / "support" / "old_stores" / "format5_hk_monopoly.zarr"

#: The spec the format-5 store was written from (its recorded text).
SPEC = spec_toml("hk_monopoly", name="format5_hk", seed=3, checkpoints={"count": 2},
                 tasks={"replicates_per_task": 2},
                 grid={"jail_strategy": ["short", "long"], "players": [2, 4]}, run={"replicates": 2, "games": 5})

#: SPEC run now without the equal-batch series (format 7's, ``[checkpoints] batches = 0``):
#: the same sweep's identity and arrays as the format-5 store's.
NOW = SPEC.replace("count = 2", "count = 2\nbatches = 0")

#: hk_monopoly's integer variables over seats: missing where a seat does not play.
SEATED = ["wins", "ties", "money", "retired", "properties"]


@pytest.fixture(scope="module")
def pair(tmp_path_factory, cluster2):
    """(the format-5 store, copied; the same spec run now into a format-6 store)."""
    folder = tmp_path_factory.mktemp("integers")
    old, new = folder / "format5.zarr", folder / "format6.zarr"
    shutil.copytree(FORMAT5, old)
    assert json.loads((old / "zarr.json").read_text())["attributes"]["spec_text"] == SPEC
    assert run_sweep(parse_spec(NOW, "format5_hk.toml"), str(new), scheduler=cluster2).complete
    return old, new


def _meta(store: Path, name: str) -> dict:
    return json.loads((store / name / "zarr.json").read_text())


def test_the_stored_form_and_the_integer_view_are_inverse_and_exact():
    fill = integers.FILL
    view = np.array([[0, 7, fill], [2**53, fill, -1], [-2**53, -1, 12]], dtype=np.int64)
    kept = integers.stored(view, "array wins")
    assert kept.dtype == np.float64 and np.isnan(kept).tolist() == [[False, False, True], [False, True, False],
                                                                   [False, False, False]]
    assert kept[2, 1] == -1.0 and kept[1, 2] == -1.0  # a value of -1 is a value
    back = integers.integer(kept, np.dtype("int64"))
    assert back.dtype == np.int64 and back.tolist() == view.tolist()  # 2**53 exactly
    assert integers.stored(kept, "array wins").tobytes() == kept.tobytes()  # stored again: unchanged
    assert integers.holds_fill(kept, integers.FILL) and integers.holds_fill(view, integers.FILL)
    assert not integers.holds_fill(view[2:], integers.FILL) and not integers.holds_fill(kept[2:], integers.FILL)


def test_an_integer_above_2_53_is_refused_in_one_line_and_nothing_is_written(tmp_path):
    with pytest.raises(IntegerTooLarge) as info:
        integers.stored(np.array([3, 2**53 + 1]), "array wins of s.zarr")
    text = str(info.value)
    assert "\n" not in text and "array wins of s.zarr" in text and str(2**53 + 1) in text and "2**53" in text
    group = zarr.open_group(str(tmp_path / "s.zarr"), mode="w", zarr_format=3)
    group.create_array("wins", shape=(2, 3), chunks=(1, 3), dtype="float64", fill_value=np.nan,
                       compressors=zarr.codecs.ZstdCodec(level=0), attributes={integers.INTEGER_ATTR: "int64"})
    with pytest.raises(IntegerTooLarge):
        chunkfiles.write_chunk(str(tmp_path / "s.zarr"), "wins", (slice(0, 1),), np.array([[1, 2**53 + 2, 3]]))
    assert not list((tmp_path / "s.zarr" / "wins").rglob("c*"))
    fill = integers.FILL
    assert chunkfiles.write_chunk(str(tmp_path / "s.zarr"), "wins", (slice(1, 2),), np.array([[5, fill, 2**53]]))
    assert np.isnan(group["wins"][1, 1]) and group["wins"][1, 2] == 2.0**53  # as plain zarr reads it
    assert read_array(str(tmp_path / "s.zarr"), "wins").tolist() == [[fill, fill, fill], [5, fill, 2**53]]


@pytest.mark.slow
def test_a_format_6_store_keeps_the_seats_that_do_not_play_as_float64_nan(pair):
    _, new = pair
    for name in SEATED:
        meta = _meta(new, name)
        assert meta["data_type"] == "float64" and meta["attributes"][integers.INTEGER_ATTR] == "int64", name
    for name in ("landings", "turns", "rounds", "games"):  # never missing: int64 as before
        meta = _meta(new, name)
        assert meta["data_type"] == "int64" and "_FillValue" not in meta["attributes"], name
    wins = xr.open_zarr(new)["wins"].isel(checkpoint=-1).sel(players=2)
    assert bool(wins.isel(seat=slice(2, None)).isnull().all()) and bool(wins.isel(seat=slice(0, 2)).notnull().all())


@pytest.mark.slow
def test_boardsweep_reads_format_5_and_format_6_alike_to_the_bit(pair):
    """open_sweep, load_sweep, the digest, a comparison of the two stores
    and query give the same types and values for the store written by
    format 5's release and the same spec run now."""
    old, new = pair
    for read in (load_sweep, open_sweep):
        a, b = read(old), read(new)
        assert sorted(a.data_vars) == sorted(b.data_vars)
        for name in a.data_vars:
            assert a[name].dtype == b[name].dtype, (read.__name__, name)
            if a[name].dtype.kind in "iub":
                assert a[name].values.tobytes() == b[name].values.tobytes(), (read.__name__, name)
            elif a[name].dtype.kind == "f":  # floats: the old store was written on another CPU (last bits may differ)
                np.testing.assert_allclose(a[name].values, b[name].values, rtol=1e-12, atol=0, err_msg=name)
        assert b["wins"].dtype == np.float64 and bool(b["wins"].sel(players=2).isel(seat=slice(2, None)).isnull().all())
    for name in SEATED:  # the integer view: format 5's int64, its fill value -1 as the mark, bit for bit
        raw, five = read_array(str(new), name), read_array(str(old), name)
        assert raw.dtype == np.int64 and raw.tobytes() == np.where(five == -1, integers.FILL, five).tobytes(), name
    assert verify.compare_with_digest(verify.digest(str(old)), str(new)).ok  # integers bit for bit, floats to rtol
    assert verify.compare_with_store(str(old), str(new)).ok


@pytest.mark.slow
def test_query_answers_format_5_and_format_6_alike(pair, capsys):
    old, new = pair
    outputs = []
    for store in (old, new):
        assert run_cli(*["query", str(store), "--format", "json"]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] and _same(outputs[0], outputs[1])


def _same(a, b) -> bool:
    """JSON alike: integers and text equal, floats to 1e-12 relative (the old store came from another CPU)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == pytest.approx(b, rel=1e-12)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _files(folder: Path) -> dict[str, str]:
    return {str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(folder.rglob("*")) if f.is_file()}


@pytest.mark.slow
def test_a_run_refuses_to_resume_or_grow_a_format_5_store_in_one_line(pair, tmp_path, capsys):
    """A run writes format 6 only: adding float64 cells to a store of int64
    ones would mix the formats, so it is refused, naming the way out."""
    old = tmp_path / "old.zarr"
    shutil.copytree(pair[0], old)
    spec = tmp_path / "grown.toml"
    spec.write_text(SPEC.replace("replicates = 2", "replicates = 4"))
    before = _files(old)
    for extra in ([], ["--extend"]):
        assert run_cli(*["-q", "run", str(spec), "--store", str(old), "--workers", "1", *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "store format 5" in err[0] and "format 7" in err[0] and "--overwrite" in err[0], err
    assert _files(old) == before


@pytest.mark.slow
def test_unpacking_and_packing_again_keep_the_float64_integers(pair, tmp_path):
    """A repair or growth unpacks first: the task layout declares NaN as its
    fill again; packed again, the values and plain xarray's view are as before."""
    store = tmp_path / "store.zarr"
    shutil.copytree(pair[1], store)
    before = {n: read_array(str(store), n) for n in SEATED}
    assert packing.unpack(str(store)) and packing.layout(str(store)) == "tasks"
    for name in SEATED:
        meta = _meta(store, name)
        assert meta["data_type"] == "float64" and "_FillValue" in meta["attributes"], name
        assert read_array(str(store), name).tobytes() == before[name].tobytes(), name
    ds = xr.open_zarr(store)
    assert ds["wins"].dtype == np.float64 and bool(ds["wins"].sel(players=2).isel(seat=slice(2, None)).isnull().all())
    assert packing.pack(str(store)) and packing.layout(str(store)) == "packed"
    for name in SEATED:
        assert _meta(store, name)["data_type"] == "float64", name
        assert read_array(str(store), name).tobytes() == before[name].tobytes(), name
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xr.open_zarr(store).to_netcdf(tmp_path / "lazy.nc")


@pytest.mark.slow
def test_a_seated_variable_with_every_seat_playing_reads_as_integers(tmp_path, cluster2):
    """With every seat playing nothing is missing: once complete and packed,
    boardsweep reads int64 (as format 5 did) and plain xarray whole floats."""
    text = spec_toml("hk_monopoly", name="full_table", seed=5, checkpoints={"count": 2},
                     tasks={"replicates_per_task": 2}, grid={"jail_strategy": ["short"]},
                     params={"players": 6}, run={"replicates": 2, "games": 3})
    store = tmp_path / "full.zarr"
    assert run_sweep(parse_spec(text, "full.toml"), str(store), scheduler=cluster2).complete
    assert _meta(store, "wins")["data_type"] == "float64" and "_FillValue" not in _meta(store, "wins")["attributes"]
    for read in (load_sweep, open_sweep):
        wins = read(store)["wins"]
        assert wins.dtype == np.int64 and int(wins.min()) >= 0, read.__name__
    plain = xr.open_zarr(store)["wins"]
    assert plain.dtype == np.float64 and bool(plain.notnull().all())


@pytest.mark.slow
def test_a_format_5_store_that_lost_its_root_metadata_is_refused_not_rebuilt_as_format_6(pair, tmp_path, capsys):
    """Rebuilding the lost root metadata would give format 6's attributes to
    int64 arrays: refused in one line, nothing changed."""
    old = tmp_path / "old.zarr"
    shutil.copytree(pair[0], old)
    assert packing.unpack(str(old))  # a packed store is refused for its lost layout record before this
    (old / "zarr.json").unlink()
    spec = tmp_path / "old.toml"
    spec.write_text(SPEC)
    before = _files(old)
    assert run_cli(*["-q", "run", str(spec), "--store", str(old), "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "older store format" in err[0] and "int64" in err[0] and "--overwrite" in err[0], err
    assert _files(old) == before


@pytest.mark.slow
def test_task_chunks_rebuilt_from_packed_float64_integers_hold_the_same_values(pair, tmp_path):
    """The kept task chunks lost: unpacking rebuilds them from the packed
    float64 arrays, NaN where no value, and records them afresh."""
    from boardsweep.pipeline.store import integrity

    store = tmp_path / "store.zarr"
    shutil.copytree(pair[1], store)
    before = {n: read_array(str(store), n) for n in SEATED}
    shutil.rmtree(store / ".boardsweep" / "flat-cells")
    assert packing.unpack(str(store)) and packing.layout(str(store)) == "tasks"
    assert not integrity.check(str(store))
    for name in SEATED:
        assert _meta(store, name)["data_type"] == "float64", name
        assert read_array(str(store), name).tobytes() == before[name].tobytes(), name
    wins = zarr.open_array(str(store / "wins"), mode="r")[...]
    assert np.isnan(wins).any() and not (wins == -1).any()  # stored as NaN, never -1


def _hk(replicates: int) -> str:
    return spec_toml("hk_monopoly", name="kept_hk", seed=9, checkpoints={"count": 2}, tasks={"replicates_per_task": 2},
                     grid={"players": [2, 3]}, run={"replicates": replicates, "games": 4})


@pytest.mark.slow
def test_a_grown_store_keeps_its_stored_float64_cells_to_the_bit(tmp_path, cluster2):
    """3 replicates in blocks of 2: growing to 5 rewrites the half-full chunk
    with its stored replicate (read in the integer view, written back as
    float64 with NaN) beside the new one; the same as a fresh run of 5."""
    grown, fresh = tmp_path / "grown.zarr", tmp_path / "fresh.zarr"
    assert run_sweep(parse_spec(_hk(3), "a.toml"), str(grown), scheduler=cluster2).complete
    before = read_array(str(grown), "wins")
    assert run_sweep(parse_spec(_hk(5), "b.toml"), str(grown), scheduler=cluster2, extend=True).complete
    assert run_sweep(parse_spec(_hk(5), "b.toml"), str(fresh), scheduler=cluster2).complete
    assert read_array(str(grown), "wins")[:, :3].tobytes() == before.tobytes()
    for name in SEATED:
        assert read_array(str(grown), name).tobytes() == read_array(str(fresh), name).tobytes(), name
        assert _meta(grown, name)["data_type"] == "float64", name
    assert verify.compare_with_store(str(fresh), str(grown)).ok


@pytest.mark.slow
def test_object_storage_packs_and_unpacks_float64_integers_in_place(pair, bucket_url, s3cluster):
    """On object storage (packed in place, :mod:`.packing_inplace`) the same
    spec stores the same values as on a local disk, packed and unpacked."""
    local = str(pair[1])
    assert run_sweep(parse_spec(NOW, "format5_hk.toml"), bucket_url, scheduler=s3cluster).complete
    assert packing.layout(bucket_url) == "packed"
    for step in ("packed", "tasks", "packed"):
        if step != packing.layout(bucket_url):
            assert (packing.unpack if step == "tasks" else packing.pack)(bucket_url)
        for name in SEATED:
            assert read_array(bucket_url, name).tobytes() == read_array(local, name).tobytes(), (step, name)
    ds = xr.open_zarr(bucket_url)
    assert ds["wins"].dtype == np.float64 and ds["wins"].attrs["integer_dtype"] == "int64"
    assert verify.compare_with_store(local, bucket_url).ok
