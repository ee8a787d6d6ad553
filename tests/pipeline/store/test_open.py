"""Opening a store (:mod:`boardsweep.pipeline.store.open`): the masks
applied chunk by chunk, and no module a lazy open does not need."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from boardsweep.pipeline.store.open import mask

OLD_STORE = Path(__file__).resolve().parents[2] / "support" / "old_stores" / "format5_hk_monopoly.zarr"


def _lazy_sweep() -> xr.Dataset:
    """12 x 3 grid points, 2 replicates, split in 4 dask chunks along the
    first axis; some replicates and exact answers not done."""
    rng = np.random.default_rng(3)
    done = rng.random((12, 3, 2)) < 0.7
    exact_done = rng.random((12, 3)) < 0.5
    wins = xr.DataArray(rng.integers(0, 9, (12, 3, 2)), dims=("a", "b", "replicate")).chunk({"a": 3})
    exact = xr.DataArray(rng.random((12, 3, 4)), dims=("a", "b", "location")).chunk({"a": 3})
    return xr.Dataset({"wins": wins, "exact_rolls": exact, "done": (("a", "b", "replicate"), done),
                       "exact_done": (("a", "b"), exact_done)},
                      attrs={"simulated_variables": ["wins"], "exact_variables": ["exact_rolls"]})


def _layers(var: xr.DataArray) -> list[str]:
    return [str(name) for name in var.data.__dask_graph__().layers]


def test_the_masks_are_split_as_the_data_is_and_mask_the_same_cells():
    """Each dask chunk of a variable meets the flags of its own cells: no
    rechunk layer in the graph (against the whole in-memory mask dask
    rechunked it for every variable), and the same cells NaN as masking in memory."""
    ds = _lazy_sweep()
    masked = mask(ds)
    for name in ("wins", "exact_rolls"):
        assert masked[name].chunks == ds[name].chunks
        assert not [layer for layer in _layers(masked[name]) if layer.startswith("rechunk")], _layers(masked[name])
    in_memory = mask(ds.compute())
    xr.testing.assert_identical(masked.compute(), in_memory)
    assert np.isnan(in_memory["wins"].values[~ds["done"].values]).all()
    assert np.isnan(in_memory["exact_rolls"].values[~ds["exact_done"].values]).all()


def test_a_mask_in_memory_is_chunked_like_its_variable_only_where_that_is_lazy():
    from boardsweep.pipeline.store.open import chunked_like

    ds = _lazy_sweep()
    flags = ds["exact_done"]
    assert chunked_like(flags, ds["exact_rolls"]).chunks == ((3, 3, 3, 3), (3,))
    assert chunked_like(flags, ds["exact_rolls"].compute()) is flags


def test_open_sweep_in_a_fresh_process_imports_no_distributed(tmp_path):
    """A lazy open reads its masks with threads and pairs them chunk by
    chunk: dask never looks for a distributed client (importing
    ``distributed`` cost 0.15-0.2 s of every ``open_sweep``)."""
    store = tmp_path / "sweep.zarr"
    shutil.copytree(OLD_STORE, store)
    code = ("import sys, boardsweep; ds = boardsweep.open_sweep(sys.argv[1], chunks={'jail_strategy': 1}); "
            "print(len(ds.data_vars), 'distributed' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    count, imported = out.stdout.split()
    assert int(count) > 5 and imported == "False"


def _unconsolidated_without(store: Path, name: str) -> None:
    """``store`` as a reader may find it while a run lays it out: its root
    metadata not consolidated, and the array ``name`` moved away."""
    import json

    root = store / "zarr.json"
    meta = json.loads(root.read_text())
    meta.pop("consolidated_metadata", None)
    root.write_text(json.dumps(meta))
    shutil.move(str(store / name), str(store.parent / f"{name}.away"))


@pytest.mark.parametrize("read", ["load_sweep", "open_sweep"])
def test_a_store_missing_an_array_its_root_names_is_refused_never_read_without_it(tmp_path, read):
    """A read that lists the store's arrays while one is moved away (a run
    creating or packing it) once returned a Dataset with ``done`` and no
    ``counts``: now it names the missing array in one line."""
    import boardsweep
    from boardsweep.pipeline.errors import ArraysMissing

    store = tmp_path / "sweep.zarr"
    shutil.copytree(OLD_STORE, store)
    _unconsolidated_without(store, "wins")
    with pytest.raises(ArraysMissing, match="arrays 'wins' named by its root metadata are missing"):
        getattr(boardsweep, read)(str(store), check=False)


def test_a_zarr_group_that_is_no_sweep_yet_is_refused(tmp_path):
    """A run writes the root's attributes first, then its arrays: a group
    without them (not a sweep, or one a run has only begun) is refused."""
    import boardsweep
    import zarr
    from boardsweep.pipeline.errors import ArraysMissing

    zarr.open_group(str(tmp_path / "g.zarr"), mode="w", zarr_format=3)
    with pytest.raises(ArraysMissing, match="does not describe a sweep"):
        boardsweep.load_sweep(str(tmp_path / "g.zarr"), check=False)


_READS = {"load_sweep": lambda url: __import__("boardsweep").load_sweep(url),
          "unchecked": lambda url: __import__("boardsweep").load_sweep(url, check=False),
          "open_sweep": lambda url: __import__("boardsweep").open_sweep(url, check=False),
          "engine": lambda url: xr.open_dataset(url, engine="boardsweep", check=False)}


@pytest.mark.parametrize("read", sorted(_READS))
@pytest.mark.parametrize("state", ["absent", "empty folder", "a creation record's temporary file",
                                   "someone's files"])
def test_what_is_no_store_is_said_in_one_line_by_every_read(tmp_path, read, state):
    """Every API read of a folder a run has only begun to make (an instant
    the soak's readers met: zarr's raw ``GroupNotFoundError`` before), or of
    nothing, or of a user's folder: one line, a ``FileNotFoundError`` as
    before, nothing changed."""
    from boardsweep.pipeline.errors import NoSweepStore

    url = tmp_path / "s.zarr"
    if state != "absent":
        url.mkdir()
    if state == "a creation record's temporary file":
        (url / "..boardsweep.creating.bsx123-1.tmp").write_bytes(b"{")
    if state == "someone's files":
        (url / "notes.txt").write_text("mine")
    before = sorted(p.name for p in url.iterdir()) if url.exists() else None
    with pytest.raises(NoSweepStore, match="^store .*: (no sweep store there|not a boardsweep sweep store)$") as told:
        _READS[read](str(url))
    assert isinstance(told.value, FileNotFoundError)
    assert (sorted(p.name for p in url.iterdir()) if url.exists() else None) == before


def _half_grown(store: Path, pid: int | None = None) -> None:
    """``store`` as a reader finds it while a live run (this process) grows
    it (or a run ``pid`` that was killed as it grew it): the growth marked in its root metadata, the
    run's lock there, and one array already resized along the first grid axis, its coordinate not yet."""
    import json
    import os
    import socket

    from boardsweep.pipeline.store import LOCK_NAME
    from boardsweep.pipeline.store.layout import GROWING

    root = json.loads((store / "zarr.json").read_text())
    root["attributes"][GROWING] = "{}"
    (store / "zarr.json").write_text(json.dumps(root))
    wins = json.loads((store / "wins" / "zarr.json").read_text())
    wins["shape"][0] += 1
    (store / "wins" / "zarr.json").write_text(json.dumps(wins))
    (store / LOCK_NAME).parent.mkdir(exist_ok=True)
    (store / LOCK_NAME).write_text(json.dumps({"pid": pid or os.getpid(), "host": socket.gethostname(),
                                               "since": "2026-01-01T00:00:00+00:00"}))


@pytest.mark.parametrize("check", [False, True])
def test_a_read_a_long_growth_keeps_changing_is_told_never_a_raw_error(tmp_path, check):
    """A read of a store a live run grows for longer than the read's retries
    (object storage, a loaded machine) once raised the growth's raw
    ``ValueError`` (shapes that disagree) at its last attempt: it says in one
    line that the store changed while it was read (the S3 soak, 2 reads of 248; checked reads, whose
    integrity check met the growth first, 5 of 496 in the next)."""
    import boardsweep
    from boardsweep.pipeline.errors import StoreBeingRewritten

    store = tmp_path / "sweep.zarr"
    shutil.copytree(OLD_STORE, store)
    _half_grown(store)
    with pytest.raises(StoreBeingRewritten, match="changed while it was read"):
        boardsweep.load_sweep(str(store), check=check)  # checked: the integrity check meets the growth first


@pytest.mark.parametrize("check", [False, True])
def test_a_growth_a_killed_run_left_half_done_is_told_never_a_raw_error(tmp_path, check):
    """A store whose growing run was killed (its lock left, its root marking the growth, an array
    already grown): every read says the growth was interrupted and how to finish it (the S3 soak:
    checked reads raised the half-grown arrays' raw ``ValueError``)."""
    import boardsweep
    from boardsweep.pipeline.errors import StoreBeingRewritten

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    store = tmp_path / "sweep.zarr"
    shutil.copytree(OLD_STORE, store)
    _half_grown(store, int(gone.stdout))
    with pytest.raises(StoreBeingRewritten, match="growing it to a larger spec was interrupted; rerun"):
        boardsweep.load_sweep(str(store), check=check)
