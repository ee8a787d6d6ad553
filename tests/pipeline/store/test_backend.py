"""Reading a store is an xarray backend: ``xr.open_dataset(store,
engine="boardsweep")`` is :func:`boardsweep.open_sweep`, and ``ds.boardsweep``
is on every Dataset once boardsweep is imported or xarray has loaded its
backends.  xarray imports the entry point's module whenever it loads its
backends, so that module stays light.

The store is tests/support/old_stores/format2_shut_the_box.zarr (complete,
packed), copied: no run needed.  Each promise about a fresh process is
checked in one (``python -c``), with warnings as errors: registering the
accessor twice would warn.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from boardsweep.pipeline.errors import StoreDamaged
from boardsweep.pipeline.store import open_sweep

OLD_STORE = Path(__file__).resolve().parents[2] / "support" / "old_stores" / "format2_shut_the_box.zarr"


@pytest.fixture
def store(tmp_path) -> Path:
    target = tmp_path / "sweep.zarr"
    shutil.copytree(OLD_STORE, target)
    return target


def fresh(code: str, cwd: Path) -> str:
    """Run ``code`` in a new interpreter (warnings are errors); its stdout."""
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_engine_is_an_installed_entry_point():
    found = {ep.name: ep.value for ep in entry_points(group="xarray.backends")}
    assert found.get("boardsweep") == "boardsweep.xarray_backend:SweepBackend"
    assert "boardsweep" in xr.backends.list_engines()


def test_the_engine_opens_what_open_sweep_opens(store):
    ds = xr.open_dataset(store, engine="boardsweep")
    assert not any(v._in_memory for v in ds.data_vars.values())  # lazily: nothing read yet
    xr.testing.assert_identical(ds.load(), open_sweep(store).load())
    assert "hist" not in xr.open_dataset(store, engine="boardsweep", drop_variables=["hist"])
    assert ds.boardsweep.headlines == ["mean_rolls", "rolls_distribution"]


def test_the_engine_checks_the_store_intact(store):
    chunk = store / "hist" / "c" / "0" / "0" / "0" / "0"
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0xFF
    chunk.write_bytes(bytes(data))
    with pytest.raises(StoreDamaged, match="hist/c/0/0/0/0 altered"):
        xr.open_dataset(store, engine="boardsweep")
    assert "hist" in xr.open_dataset(store, engine="boardsweep", check=False)


def test_a_sweep_store_is_guessed_and_another_zarr_store_is_not(store, tmp_path):
    from boardsweep.xarray_backend import SweepBackend

    plain = tmp_path / "plain.zarr"
    xr.Dataset({"x": ("i", np.arange(3))}, attrs={"title": "not a sweep"}).to_zarr(plain, consolidated=False)
    assert SweepBackend().guess_can_open(str(store)) and SweepBackend().guess_can_open(store)
    for other in (plain, tmp_path / "missing.zarr", tmp_path, "s3://bucket/sweep.zarr", store / "hist"):
        assert not SweepBackend().guess_can_open(other), other
    xr.testing.assert_identical(xr.open_dataset(store).load(), open_sweep(store).load())  # engine guessed
    with xr.open_dataset(plain) as opened:  # zarr's, as before
        assert opened.attrs == {"title": "not a sweep"}


def test_engine_boardsweep_in_a_fresh_process(store):
    out = fresh(
        "import xarray as xr\n"
        f"ds = xr.open_dataset({str(store)!r}, engine='boardsweep')\n"
        "print(ds.boardsweep.verdict()['text'].split(':')[0])\n"
        "import boardsweep\n"
        f"xr.testing.assert_identical(ds.load(), boardsweep.open_sweep({str(store)!r}).load())\n", store.parent)
    assert out.strip() == "AGREE at family-wise 1% (Holm)"


@pytest.mark.parametrize("first", ["import boardsweep\nimport xarray as xr", "import xarray as xr\nimport boardsweep"])
def test_plain_open_zarr_has_the_accessor_once_boardsweep_is_imported(store, first):
    """Either order: ``import boardsweep`` does not import xarray (the command
    starts without it) but registers the accessor as soon as it is."""
    out = fresh(
        f"{first}\n"
        f"ds = xr.open_zarr({str(store)!r})\n"
        "print(ds.boardsweep.verdict()['text'].split(':')[0])\n"
        f"xr.open_dataset({str(store)!r}, engine='boardsweep').boardsweep.headlines  # loads the entry point too\n",
        store.parent)
    assert out.strip() == "AGREE at family-wise 1% (Holm)"


def test_plain_open_zarr_has_the_accessor_once_xarray_has_loaded_its_backends(store):
    """No ``import boardsweep``: xarray imports the entry point's module when
    it loads its backends (any ``open_dataset`` not given one of its own
    engines; recent xarray opens zarr without loading them)."""
    out = fresh(
        "import sys\n"
        "import xarray as xr\n"
        "xr.backends.list_engines()\n"
        f"ds = xr.open_zarr({str(store)!r})\n"
        "print(ds.boardsweep.verdict()['text'].split(':')[0])\n"
        "print('boardsweep.pipeline.analysis.accessor' in sys.modules)\n", store.parent)
    assert out.split() == ["AGREE", "at", "family-wise", "1%", "(Holm)", "True"]


def test_the_entry_point_module_is_light(tmp_path):
    """What xarray imports for boardsweep whenever it loads its backends:
    that module, the package's root and the accessor's module, nothing beyond xarray (no numba,
    Dask, zarr, scipy, game); ``import boardsweep`` imports not even xarray."""
    out = fresh(
        "import json, sys, xarray\n"
        "before = set(sys.modules)\n"
        "xarray.backends.list_engines()\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n", tmp_path)
    loaded = json.loads(out)
    assert sorted(m for m in loaded if m.startswith("boardsweep")) == [
        "boardsweep", "boardsweep.pipeline", "boardsweep.pipeline.analysis", "boardsweep.pipeline.analysis.accessor",
        "boardsweep.pipeline.faces", "boardsweep.xarray_backend"]  # the accessor's module and its folder's face
    heavy = ("numba", "distributed", "scipy", "dask", "zarr", "fsspec", "boardsweep.core", "boardsweep.pipeline.store",
             "boardsweep.pipeline.spec", "boardsweep.pipeline.analysis.headlines")
    assert not [m for m in loaded if m.startswith(heavy)], loaded
    out = fresh("import sys, boardsweep\nprint([m for m in ('xarray', 'numba', 'dask', 'zarr') if m in sys.modules])\n",
                tmp_path)
    assert out.strip() == "[]"


def test_the_accessor_is_registered_where_it_is_defined():
    """``ds.boardsweep`` is the analysis folder's class, registered by xarray's
    decorator in its own module (not a proxy of it elsewhere)."""
    import xarray as xr

    from boardsweep.pipeline.analysis.accessor import SweepAccessor

    assert xr.Dataset.boardsweep is SweepAccessor
    assert isinstance(xr.Dataset({}).boardsweep, SweepAccessor)
