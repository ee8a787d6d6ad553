"""The packed layout of a finished store: few large chunks, for plain xarray.

While a sweep runs, each task writes its own chunks (one per task and
variable, :mod:`boardsweep.pipeline.store`): one writer per chunk, so any
number of workers write at once.  Plain ``xarray.open_zarr(store)`` makes one
dask task per zarr chunk, and at thousands of chunks that costs seconds
(zarr v3 sharding does not help: xarray's dask chunks follow the *inner*
chunks of a shard, and per-inner-chunk reads are slower still).

So once a run leaves the store complete and intact, it is *packed*: every
array that tasks write is rewritten into large chunks (whole, or split along
the leading axes above :data:`PACKED_CHUNK_BYTES`), and the task-chunked
arrays are moved, not rewritten, to ``.boardsweep/cells/``.  Plain xarray
then reads a few large chunks.  Anything that must write cells again (a
repair, growing the store) first *unpacks*: the task-chunked arrays are
moved back (their bytes untouched) and the packed copies dropped; the run
packs again when the store is complete.  Packing costs a second copy of the
task-written arrays on disk.

Every step is a rename or a copy that can be done again, and a journal
(``.boardsweep/layout.json``) says which change is under way, so a process
killed at any point leaves a store that the next ``run`` puts right
(:func:`recover`) and that readers refuse meanwhile, in one line.  The packed
chunk files' sizes and CRC-32s are in the journal; the integrity check
verifies them (:func:`damaged_chunks`).

Only local stores are packed; a store behind an fsspec URL keeps the task
layout.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from . import chunkfiles
from .chunkfiles import local_root
from .metadata import simulated_variables

__all__ = [
    "PACKED_CHUNK_BYTES",
    "JOURNAL",
    "layout",
    "packed_chunks",
    "task_arrays",
    "pack",
    "unpack",
    "recover",
    "damaged_chunks",
    "chunk_region",
]

#: Largest packed chunk, uncompressed (dask's own default chunk size is 128 MiB).
PACKED_CHUNK_BYTES = 64 * 2**20

JOURNAL = ".boardsweep/layout.json"
CELLS = ".boardsweep/cells"
PACKING = ".boardsweep/packing"

TASKS, PACKING_STATE, PACKED, UNPACKING = "tasks", "packing", "packed", "unpacking"


def _journal(url: str) -> dict[str, Any]:
    root = local_root(url)
    if root is None:
        return {"state": TASKS}
    try:
        return json.loads((root / JOURNAL).read_text())
    except FileNotFoundError:
        return {"state": TASKS}
    except ValueError:
        return {"state": "unreadable"}


def _write_journal(root: Path, journal: dict[str, Any] | None) -> None:
    """Replace the journal atomically (``None`` removes it: the task layout)."""
    path = root / JOURNAL
    if journal is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(journal))
    os.replace(tmp, path)


def layout(url: str) -> str:
    """``tasks``, ``packed``, or an interrupted change (``packing``,
    ``unpacking``, ``unreadable``) of the store at ``url``."""
    return str(_journal(url).get("state", "unreadable"))


def task_arrays(attrs: dict[str, Any]) -> list[str]:
    """The arrays tasks write, one chunk per task: what packing rewrites."""
    return [*simulated_variables(attrs), "done", *attrs.get("exact_variables", []), "exact_done"]


def packed_chunks(shape: tuple[int, ...], itemsize: int, limit: int = PACKED_CHUNK_BYTES) -> tuple[int, ...]:
    """Chunk shape of a packed array: whole, or the leading dims split so that
    a chunk holds at most ``limit`` bytes (at least one element along each dim)."""
    chunks = list(shape)
    for i in range(len(chunks)):
        rest = int(np.prod(chunks[i + 1:], dtype=np.int64)) * itemsize
        if chunks[i] * rest <= limit:
            break
        chunks[i] = max(1, limit // max(rest, 1))
    return tuple(max(1, c) for c in chunks)


def _fingerprint(path: Path) -> list[int] | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return [len(data), zlib.crc32(data)]


def _write_packed(root: Path, name: str) -> dict[str, list[int]]:
    """Write array ``name`` (task-chunked, at the root) packed into
    ``.boardsweep/packing/name``; return its chunk files' fingerprints."""
    meta = json.loads((root / name / "zarr.json").read_text())
    shape = tuple(meta["shape"])
    data = chunkfiles.read(str(root), name)
    if data is None:
        raise ValueError(f"array {name} is not in boardsweep's chunk format")
    chunks = packed_chunks(shape, data.dtype.itemsize)
    meta["chunk_grid"]["configuration"]["chunk_shape"] = list(chunks)
    target = root / PACKING / name
    target.mkdir(parents=True)
    (target / "zarr.json").write_text(json.dumps(meta, indent=2))
    files = {}
    for coord in itertools.product(*[range(-(-n // c)) for n, c in zip(shape, chunks)]):
        region = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coord, chunks, shape))
        key = chunkfiles.write_chunk(str(root / PACKING), name, region, data[region])
        if key is None:
            raise ValueError(f"array {name}: packed chunk {coord} could not be written")
        files[key] = _fingerprint(root / PACKING / key)
    return files


def _check_room(root: Path, names: list[str]) -> None:
    """Raise ``OSError`` unless the disk has room for a packed copy of
    ``names``, bounded by their uncompressed size (read from their metadata)."""
    needed = 0
    for name in names:
        meta = json.loads((root / name / "zarr.json").read_text())
        needed += int(np.prod(meta["shape"], dtype=np.int64)) * np.dtype(meta["data_type"]).itemsize
    free = shutil.disk_usage(root).free
    if needed > free:
        raise OSError(f"packing needs up to {needed} bytes, {free} free")


def pack(url: str, verify: bool = True) -> bool:
    """Pack the store at ``url``, which the caller knows is complete (every
    cell done, or every grid point at its precision target); ``False``
    (nothing changed) where it is not local, damaged or already packed.

    ``verify=False`` skips the checksum check of every task chunk, for a
    caller that has just checked or written them all (a run: old cells are
    checked when it starts, new ones it wrote itself); a chunk that does not
    decode still stops the packing.
    """
    from . import arrays as store
    from . import integrity

    root = local_root(url)
    if root is None or layout(url) != TASKS:
        return False
    attrs = store.read_attrs(url)
    if verify and integrity.check(url, attrs):
        return False
    if not store.read_exact_done(url).all():
        return False
    shutil.rmtree(root / PACKING, ignore_errors=True)  # an earlier pack killed before its journal
    names = task_arrays(attrs)
    _check_room(root, names)
    files: dict[str, list[int]] = {}
    try:
        for name in names:
            files.update(_write_packed(root, name))
    except BaseException:
        shutil.rmtree(root / PACKING, ignore_errors=True)  # a full disk leaves nothing behind
        raise
    _write_journal(root, {"state": PACKING_STATE, "arrays": names, "files": files})
    _finish_packing(root, url)
    return True


def _finish_packing(root: Path, url: str) -> None:
    """Move each task-chunked array to ``.boardsweep/cells/`` and its packed
    copy into its place (each step skipped where already done)."""
    journal = _journal(url)
    (root / CELLS).mkdir(parents=True, exist_ok=True)
    for name in journal["arrays"]:
        here, cells, packed = root / name, root / CELLS / name, root / PACKING / name
        if not packed.exists():
            continue  # already swapped
        if here.exists() and not cells.exists():
            os.replace(here, cells)
        elif here.exists():
            shutil.rmtree(here)  # a half-removed leftover; the task-chunked copy is in cells/
        os.replace(packed, here)
    shutil.rmtree(root / PACKING, ignore_errors=True)
    _consolidate(url)
    _write_journal(root, {**journal, "state": PACKED})


def unpack(url: str) -> bool:
    """Return a packed store at ``url`` to the task layout: the task-chunked
    arrays move back, the packed copies go.  ``False`` where it was not packed."""
    root = local_root(url)
    if root is None or layout(url) not in (PACKED, UNPACKING):
        return False
    journal = _journal(url)
    _write_journal(root, {**journal, "state": UNPACKING})
    for name in journal["arrays"]:
        here, cells = root / name, root / CELLS / name
        if not cells.exists():
            continue  # already moved back
        if here.exists():
            shutil.rmtree(here)
        os.replace(cells, here)
    shutil.rmtree(root / CELLS, ignore_errors=True)
    _consolidate(url)
    _write_journal(root, None)
    return True


def recover(url: str) -> str:
    """Finish a layout change that a killed process left half done; return
    what was done, in words (empty where nothing was)."""
    state = layout(url)
    root = local_root(url)
    if state == PACKING_STATE:
        _finish_packing(root, url)
        return "an interrupted packing finished"
    if state == UNPACKING:
        unpack(url)
        return "an interrupted unpacking finished"
    if state == "unreadable":
        raise ValueError(f"store {url}: {JOURNAL} does not parse; it records the store's layout "
                         "(restore it, or replace the store with --overwrite)")
    if state == TASKS and root is not None and (root / PACKING).exists():
        shutil.rmtree(root / PACKING, ignore_errors=True)  # a pack killed before it began to swap
    return ""


def damaged_chunks(url: str) -> dict[str, str]:
    """Packed chunk files (store-relative) that are missing or differ from the
    journal, with the reason; empty for a store that is not packed."""
    root = local_root(url)
    journal = _journal(url)
    if root is None or journal.get("state") != PACKED:
        return {}
    bad = {}
    for key, expected in journal["files"].items():
        got = _fingerprint(root / key)
        if got is None:
            bad[key] = f"packed chunk {key} missing"
        elif got != expected:
            bad[key] = (f"packed chunk {key} has {got[0]} bytes, {expected[0]} written" if got[0] != expected[0]
                        else f"packed chunk {key} altered (checksum differs)")
    return bad


def chunk_region(url: str, key: str) -> tuple[str, tuple[slice, ...]]:
    """The array and the region (slices of every dim) a packed chunk file covers."""
    name, _, rest = key.partition("/c/")
    meta = json.loads((local_root(url) / name / "zarr.json").read_text())
    shape, chunks = meta["shape"], meta["chunk_grid"]["configuration"]["chunk_shape"]
    coord = [int(c) for c in rest.split("/")] if rest else [0] * len(shape)
    return name, tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coord, chunks, shape))


def _consolidate(url: str) -> None:
    """Rewrite the root's consolidated metadata (xarray reads arrays' chunk
    shapes from it)."""
    import zarr

    from .arrays import quiet_zarr

    with quiet_zarr():
        zarr.consolidate_metadata(url)
