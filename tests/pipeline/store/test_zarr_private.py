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
