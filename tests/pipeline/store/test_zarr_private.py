"""The private zarr APIs boardsweep uses (pipeline/store/zarr_private.py),
each exercised against the installed zarr: a zarr release that changes one
fails here, naming it, before a store is written wrongly."""

from __future__ import annotations

import json
import tomllib
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
import zarr
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from boardsweep.pipeline.store import zarr_private

CHANGED = "zarr {} changed {}: boardsweep's pipeline/store/zarr_private.py must follow it"


@pytest.fixture(scope="module")
def array(tmp_path_factory):
    path = tmp_path_factory.mktemp("private") / "a.zarr"
    a = zarr.create_array(str(path), shape=(3, 4, 5), chunks=(1, 2, 5), dtype="int64", fill_value=-1,
                          compressors=zarr.codecs.ZstdCodec(level=3))
    a[...] = np.arange(60).reshape(3, 4, 5)
    return path, a


def test_the_installed_zarr_is_a_supported_one():
    assert version("zarr") in SpecifierSet(zarr_private.SUPPORTED), (
        f"zarr {version('zarr')} is outside the supported {zarr_private.SUPPORTED}")


def test_pyproject_pins_the_supported_zarr_range():
    project = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text())["project"]
    pinned = [Requirement(r) for r in project["dependencies"] if Requirement(r).name == "zarr"]
    assert [r.specifier for r in pinned] == [SpecifierSet(zarr_private.SUPPORTED)]


def test_sync_runs_a_coroutine_on_zarrs_loop(array):
    from zarr.api.asynchronous import open_array

    path, _ = array

    async def read():
        a = await open_array(store=str(path), mode="r")
        return await a.getitem((0, slice(0, 2)))

    try:
        got = zarr_private.sync(read())
    except (ImportError, AttributeError, TypeError) as exc:
        pytest.fail(CHANGED.format(zarr.__version__, f"zarr.core.sync.sync ({exc})"))
    assert np.array_equal(got, np.arange(10).reshape(2, 5))


def test_chunk_key_names_the_chunk_file_zarr_wrote(array):
    path, a = array
    try:
        key = zarr_private.chunk_key(a, (2, 1, 0))
    except (AttributeError, TypeError) as exc:
        pytest.fail(CHANGED.format(zarr.__version__, f"array.metadata.encode_chunk_key ({exc})"))
    assert key == "c/2/1/0", CHANGED.format(zarr.__version__, f"the chunk key encoding (got {key!r})")
    assert (path / key).is_file()


def test_zarr_writes_and_reads_the_zarr_json_boardsweep_edits(array, tmp_path):
    path, _ = array
    meta = json.loads((path / "zarr.json").read_text())
    layout = zarr_private.ARRAY_LAYOUT
    found = {"zarr_format": meta.get("zarr_format"), "node_type": meta.get("node_type"),
             "chunk_grid": meta.get("chunk_grid", {}).get("name"),
             "chunk_key_encoding": meta.get("chunk_key_encoding", {}).get("name"),
             "codecs": [c.get("name") for c in meta.get("codecs", [])]}
    assert found == layout, CHANGED.format(zarr.__version__, f"the zarr.json it writes ({found})")
    assert zarr_private.chunk_shape(meta) == [1, 2, 5]
    # a chunk shape edited by hand (as packing does), with the chunk files rewritten to match, reads back
    copy = tmp_path / "b.zarr"
    copy.mkdir()
    (copy / "zarr.json").write_text(json.dumps(zarr_private.with_chunk_shape(meta, (3, 4, 5))))
    whole = zarr.open_array(str(copy), mode="r+")
    assert whole.chunks == (3, 4, 5), CHANGED.format(zarr.__version__, "how it reads a hand-edited chunk shape")
    whole[...] = np.arange(60).reshape(3, 4, 5)
    assert np.array_equal(zarr.open_array(str(copy), mode="r")[...], np.arange(60).reshape(3, 4, 5))


def test_quiet_silences_zarrs_warnings_about_consolidated_metadata(tmp_path):
    group = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    group.create_array("x", shape=(2,), dtype="int8")
    with warnings.catch_warnings(record=True) as loud:
        warnings.simplefilter("always")
        zarr.consolidate_metadata(str(tmp_path / "g.zarr"))
        zarr.open_group(str(tmp_path / "g.zarr"), mode="r")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with zarr_private.quiet():
            zarr.consolidate_metadata(str(tmp_path / "g.zarr"))
            zarr.open_group(str(tmp_path / "g.zarr"), mode="r")
    assert loud, "zarr no longer warns about consolidated metadata: the filter may go"
    assert not caught, [str(w.message) for w in caught]


def _loud(folder) -> list[str]:
    """The warnings zarr gives now when consolidating a scratch group (nothing filtered)."""
    group = zarr.open_group(str(folder), mode="w")
    group.create_array("x", shape=(2,), dtype="int8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        zarr.consolidate_metadata(str(folder))
    return [str(w.message) for w in caught]


def test_quiet_is_in_force_only_inside_and_leaves_the_users_filters_as_they_were(tmp_path):
    """Nested and in several threads at once: zarr is quiet while any caller is
    inside; once the last leaves, warnings.filters is the user's list again, entry by entry."""
    import threading

    before = list(warnings.filters)
    inside, release = threading.Barrier(3), threading.Event()

    def hold() -> None:
        with zarr_private.quiet():
            inside.wait()
            release.wait(10)

    threads = [threading.Thread(target=hold) for _ in range(2)]
    for t in threads:
        t.start()
    inside.wait()
    with zarr_private.quiet(), zarr_private.quiet():
        assert warnings.filters[:len(zarr_private._filters())] == zarr_private._filters()
    release.set()
    for t in threads:
        t.join()
    assert len(warnings.filters) == len(before) and all(a is b for a, b in zip(warnings.filters, before))
    assert _loud(tmp_path / "g.zarr"), "zarr's warnings stay filtered after boardsweep's calls"


def test_open_sweep_leaves_the_users_warning_filters_as_they_were(tmp_path):
    """Reading a store (open_sweep, computed; load_sweep) through boardsweep
    changes nothing in the caller's warnings.filters (xarray's own reading
    puts its 'once' filter for decode_timedelta first, each call: done once
    before, with plain xarray, it is the user's already)."""
    import shutil

    import xarray as xr

    from boardsweep.pipeline.store import load_sweep, open_sweep

    store = tmp_path / "old.zarr"
    shutil.copytree(Path(__file__).resolve().parents[2] / "support" / "old_stores" / "format2_shut_the_box.zarr", store)
    warnings.filterwarnings("default", message="a filter of the user's")
    mine = warnings.filters[0]
    xr.open_zarr(store).close()
    before = list(warnings.filters)
    try:
        open_sweep(store).load()
        load_sweep(store)
        assert warnings.filters == before  # equal, in order (xarray's entry is a new, equal tuple each call)
    finally:
        warnings.filters.remove(mine)
    assert _loud(tmp_path / "g.zarr")


def test_settle_waits_for_a_write_still_in_flight_on_zarrs_loop(tmp_path):
    """``settle``: a write zarr's loop still runs after its call failed (a gather's other writes) has
    landed when ``settle`` returns, so a failed creation's clean-up comes after it (test_safety's
    full disk left an array's ``zarr.json`` once)."""
    import asyncio

    from zarr.core.sync import _get_loop

    target = tmp_path / "late" / "zarr.json"

    async def late_write() -> None:
        await asyncio.sleep(0.3)
        await asyncio.to_thread(lambda: (target.parent.mkdir(), target.write_text("{}")))

    asyncio.run_coroutine_threadsafe(late_write(), _get_loop())
    zarr_private.settle()
    assert target.exists(), CHANGED.format(version("zarr"), "zarr.core.sync.loop (its event loop)")
