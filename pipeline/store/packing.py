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
arrays are moved, not rewritten, to ``.boardsweep/flat-cells/``, each chunk
file renamed flat into its array's folder (``c.3.0.0`` for ``c/3/0/0``: a
folder per array, not one per chunk and dimension; a store packed before
keeps them nested under ``.boardsweep/cells/``, still moved back).  Plain xarray
then reads a few large chunks.  Anything that must write cells again (a
repair, growing the store) first *unpacks*: the task-chunked arrays are
moved back (their bytes untouched) and the packed copies dropped; the run
packs again when the store is complete.  Packing costs a second copy of the
task-written arrays on disk.

The store itself says how its arrays are laid out: the root attribute
``boardsweep_layout`` (:data:`LAYOUT_ATTR`) records, per packed array, its
packed and task chunk shapes and its chunk files' sizes and CRC-32s, which
the integrity check verifies (:func:`damaged_chunks`); an array chunked as
its record says is packed, one with the chunk shape its tasks write is in
the task layout.  The record is written before the first array is swapped
and removed after the last is moved back, and it is kept out of the arrays'
own attributes (what a user reads with xarray and writes to netCDF).  So a
store that lost ``.boardsweep/`` (copied with a glob that skips dot-files)
or whose journal was lost or edited is still read, checked and run
correctly; an array that is neither is refused in one line.  A packed
integer array whose every replicate is done and holds no fill value drops
its ``_FillValue`` attribute, so plain xarray reads it as integers
(:func:`.integers.integer_fill`); unpacking puts it back.  Tasks
never write a packed array (:func:`boardsweep.pipeline.store.chunkfiles.write_chunk`
refuses), and :func:`unpack` rebuilds the task chunks from the verified
packed data where the kept copy or its checksum records are gone.

Every step is a rename or a copy that can be done again, and a journal
(``.boardsweep/layout.json``) says which change is under way, so a process
killed at any point leaves a store that the next ``run`` puts right
(:func:`recover`) and that readers refuse meanwhile, in one line.

A store behind an fsspec URL (object storage, where a rename is a copy) is
packed in place instead, by :mod:`.packing_inplace`: the same layout as
readers see it, the task chunks left where they are.  This module is the one
packer either way: :func:`pack`, :func:`unpack` and :func:`recover` check the
preconditions (the layout, the integrity check, every exact answer done)
once, and ask in one place (:func:`_folder`) which of the two changes the layout.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import zarr

from . import chunkfiles, integers, integrity, writes
from .identity import read_attrs
from ..errors import LayoutError
from .chunkfiles import LAYOUT_ATTR
from .storage import local_root
from . import packing_inplace
from .layout import (CELLS, JOURNAL, MIXED, NESTED_CELLS, PACKED, PACKED_CHUNK_BYTES, PACKING, PACKING_STATE, REBUILD, TASKS,
                     UNKNOWN, UNPACKING, array_states, file_fingerprint, read_journal, read_json, root_attrs, chunk_region,
                     damaged_chunks, layout, packed_chunks, packed_record, recover_unpacking, set_records, store_chunks, task_arrays,
                     unrecognised)
from .integers import integer_fill, restore_fill
from ..plan import per_chunk
from .metadata import simulated_variables
from .reads import read_exact_done
from .zarr_private import chunk_shape, quiet, with_chunk_shape

__all__ = [
    "PACKED_CHUNK_BYTES",
    "JOURNAL",
    "LAYOUT_ATTR",
    "unrecognised",
    "layout",
    "packed_chunks",
    "task_arrays",
    "pack",
    "unpack",
    "recover",
    "damaged_chunks",
    "chunk_region",
    "CELLS", "NESTED_CELLS", "PACKING", "REBUILD", "TASKS", "PACKING_STATE", "PACKED", "UNPACKING", "MIXED", "UNKNOWN",
]



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


def _write_packed(root: Path, name: str, complete: bool) -> dict[str, Any]:
    """Write array ``name`` (task-chunked, at the root) packed into
    ``.boardsweep/packing/name``, one packed chunk read and written at a
    time (memory: one chunk of at most :data:`PACKED_CHUNK_BYTES`, whatever
    the array's size); return its record (chunk shapes, chunk files'
    fingerprints).  ``complete``: every replicate is done."""
    meta = json.loads((root / name / "zarr.json").read_text())
    shape = tuple(meta["shape"])
    probe = chunkfiles.read(str(root), name, (slice(0, min(1, shape[0])),) if shape else ())  # its dtype
    if probe is None:
        raise ValueError(f"array {name} is not in boardsweep's chunk format")
    dtype = probe.dtype
    chunks = packed_chunks(shape, dtype.itemsize)
    task_chunks = chunk_shape(meta)
    with_chunk_shape(meta, chunks)
    target = root / PACKING / name
    target.mkdir(parents=True)
    (target / "zarr.json").write_text(json.dumps(meta, indent=2))
    fill = (meta.get("attributes") or {}).get("_FillValue")
    if fill is not None and integers.declared(meta.get("attributes")) is not None:
        fill = integers.mark(integers.declared(meta.get("attributes")))  # a float64 array of integers, read in its integer view
    files, filled = {}, False
    for coord in itertools.product(*[range(-(-n // c)) for n, c in zip(shape, chunks)]):
        region = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coord, chunks, shape))
        data = chunkfiles.read(str(root), name, region)
        filled = filled or (fill is not None and bool((data == fill).any()))
        key = chunkfiles.write_chunk(str(root / PACKING), name, region, data, packed=True)
        if key is None:
            raise ValueError(f"array {name}: packed chunk {coord} could not be written")
        files[key] = file_fingerprint(root / PACKING / key)
    seen = np.array([fill] if filled else [], dtype=dtype)  # what integer_fill asks: is a fill value held?
    (target / "zarr.json").write_text(json.dumps(integer_fill(meta, seen, complete), indent=2))
    return {"state": PACKED, "chunks": list(chunks), "separator": "/", "task_chunks": task_chunks, "files": files}


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


def pack(url: str, verify: bool = True, done: np.ndarray | None = None) -> bool:
    """Pack the store at ``url``, which the caller knows is complete (every
    cell done, or every grid point at its precision target); ``False``
    (nothing changed) where it is damaged, not complete or not in the task
    layout.  The preconditions are checked here once, for a folder and for
    object storage alike; then :func:`_pack_folder` or
    :func:`.packing_inplace.pack_in_place` changes the layout.

    ``verify=False`` skips the checksum check of every task chunk, for a
    caller that has just checked or written them all (a run: old cells are
    checked when it starts, new ones it wrote itself); a chunk that does not
    decode still stops the packing.  ``done``: the ``done`` mask as the
    caller read it after its last write, which object storage then does not
    read again where every cell is done.
    """
    if layout(url) != TASKS:
        return False
    attrs = read_attrs(url)
    if verify and integrity.check(url, attrs):
        return False
    exact_done = read_exact_done(url)
    if not exact_done.all():
        return False
    root = _folder(url)
    if root is None:
        return packing_inplace.pack_in_place(url, attrs, exact_done, done)
    _pack_folder(root, url, attrs)
    return True


def _folder(url: str) -> Path | None:
    """The store's folder, or ``None`` behind an fsspec URL (object storage,
    where a rename is a copy: packed in place, :mod:`.packing_inplace`): the
    one place the packer asks which."""
    return local_root(url)


def _pack_folder(root: Path, url: str, attrs: dict[str, Any]) -> None:
    """Pack the complete, intact store in the folder ``root``: packed copies
    written, the journal, then the swap by renames (:func:`_finish_packing`)."""
    shutil.rmtree(root / PACKING, ignore_errors=True)  # an earlier pack killed before its journal
    names = task_arrays(attrs)
    _check_room(root, names)
    complete = bool(chunkfiles.read(url, "done").all())
    records: dict[str, Any] = {}
    try:
        for name in names:
            records[name] = _write_packed(root, name, complete)
        _write_journal(root, {"state": PACKING_STATE, "arrays": names, "records": records})
    except BaseException:
        shutil.rmtree(root / PACKING, ignore_errors=True)  # a full disk leaves nothing behind
        (root / JOURNAL).unlink(missing_ok=True)
        raise
    try:
        _finish_packing(root, url)
    except OSError:
        _roll_back(root, names)  # a full disk while finishing: back to the task layout, by renames
        raise


def _roll_back(root: Path, names: list[str]) -> None:
    """Undo a packing whose finishing failed (the root metadata could not be
    rewritten, so it still describes the task layout): the task-chunked
    arrays move back, the packed copies and the journal go.  Renames and
    removals only: this works on a full disk."""
    _move_back(root, names)
    shutil.rmtree(root / PACKING, ignore_errors=True)
    try:
        set_records(str(root), None)
    except OSError:
        pass  # a full disk: a record no array matches is ignored (the arrays are task-chunked)
    (root / JOURNAL).unlink(missing_ok=True)


def _finish_packing(root: Path, url: str) -> None:
    """Record the packed arrays in the root attributes, move each
    task-chunked array to ``.boardsweep/flat-cells/`` and its packed copy into its
    place (each step skipped where already done), its chunk files flat
    (:func:`_flatten`), rewrite the root metadata,
    then drop the journal (the root record and the arrays' chunks say they
    are packed)."""
    journal = read_journal(url)
    if journal.get("records"):
        set_records(url, journal["records"])
    (root / CELLS).mkdir(parents=True, exist_ok=True)
    for name in journal.get("arrays", []):
        here, cells, packed = root / name, root / CELLS / name, root / PACKING / name
        if not packed.exists():
            continue  # already swapped
        if here.exists() and not cells.exists():
            os.replace(here, cells)
        elif here.exists():
            shutil.rmtree(here)  # a half-removed leftover; the task-chunked copy is in cells/
        os.replace(packed, here)
    _flatten(*(root / CELLS / name for name in journal.get("arrays", [])))
    shutil.rmtree(root / PACKING, ignore_errors=True)
    _consolidate(url)
    _write_journal(root, None)


def unpack(url: str) -> bool:
    """Return a packed store at ``url`` to the task layout: the task-chunked
    arrays move back (a folder) or their metadata does (object storage,
    :func:`.packing_inplace.unpack_in_place`: the task chunks never moved),
    the packed copies go.  Where the kept task-chunked copy or the checksum
    records of a folder's store are gone (``.boardsweep/`` lost), the task
    chunks are rebuilt from the verified packed data and recorded afresh;
    cells of a damaged packed chunk are left not done.  ``False`` where the
    store was not packed."""
    state = layout(url)
    if state not in (PACKED, UNPACKING, MIXED):
        return False
    root = _folder(url)
    if root is None:
        packing_inplace.unpack_in_place(url, state)
        return True
    journal = read_journal(url)
    if state != UNPACKING:
        states = array_states(root, journal)
        packed = [n for n, s in states.items() if s == PACKED]
        rebuild = _needs_rebuild(root, packed)
        if rebuild:
            _rebuild_cells(root, url, packed)
        moved = [n for n, s in states.items() if s in (PACKED, "missing")]  # a lost packed array: its kept copy
        journal = {"state": UNPACKING, "arrays": moved, "record": rebuild}
        _write_journal(root, journal)
    _move_back(root, journal.get("arrays", []))
    set_records(url, None)
    _consolidate(url)
    if journal.get("record"):
        _record_manifests(url)
    _write_journal(root, None)
    return True


def _move_back(root: Path, names: list[str]) -> None:
    """Each array ``names``' kept task-chunked copy back into its place (those already moved skipped)."""
    for name in names:
        here, cells = root / name, _kept(root, name)
        if not cells.exists():
            continue  # already moved back
        _nest(cells)
        if here.exists():
            shutil.rmtree(here)
        os.replace(cells, here)
    _drop_kept(root)


def _kept(root: Path, name: str) -> Path:
    """The folder of the kept task-chunked copy of array ``name``: flat, or
    nested where a store was packed before (:data:`NESTED_CELLS`)."""
    flat = root / CELLS / name
    return flat if flat.exists() or not (root / NESTED_CELLS / name).exists() else root / NESTED_CELLS / name


def _drop_kept(root: Path) -> None:
    shutil.rmtree(root / CELLS, ignore_errors=True)
    shutil.rmtree(root / NESTED_CELLS, ignore_errors=True)


def _flatten(*arrays: Path) -> None:
    """Each chunk file ``array/c/3/0/0`` of each of ``arrays`` renamed
    ``array/c.3.0.0``, then the emptied folders removed (all arrays'
    together, :func:`_remove_folders`).  Renames only, each done once: a
    process killed midway leaves some of each, which this (or
    :func:`_nest`) finishes."""
    folders = []
    for array in arrays:
        for folder, _, files in os.walk(array / "c"):  # nothing where the array is flat already
            folders.append(folder)
            for name in files:
                path = Path(folder, name)
                os.replace(path, array / ".".join(path.relative_to(array).parts))
    _remove_folders(folders)
    for array in arrays:
        shutil.rmtree(array / "c", ignore_errors=True)  # anything else left there


#: Threads that remove emptied chunk folders side by side (:func:`_remove_folders`).
RMDIR_THREADS = 8


def _remove_folders(folders: list[str]) -> None:
    """Remove the empty ``folders`` (what :func:`_flatten` leaves: one per
    task and dimension), the deepest first, those of one depth side by side
    on :data:`RMDIR_THREADS` threads: on a busy virtual disk an ``rmdir``
    waits 0.3-2 ms, and a store of 100 tasks has hundreds of folders.  One
    that is not empty is left (to ``shutil.rmtree``)."""
    levels: dict[int, list[str]] = {}
    for folder in folders:
        levels.setdefault(folder.count(os.sep), []).append(folder)
    with ThreadPoolExecutor(RMDIR_THREADS) as pool:
        for depth in sorted(levels, reverse=True):
            list(pool.map(_rmdir, levels[depth]))


def _rmdir(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass  # not empty after all: left to shutil.rmtree


def _nest(array: Path) -> None:
    """The inverse of :func:`_flatten`: each flat chunk file ``c.3.0.0`` back
    to ``c/3/0/0``, where zarr reads it."""
    if not array.is_dir():
        return
    for entry in list(os.scandir(array)):
        if entry.name.startswith("c.") and entry.is_file():
            target = array.joinpath(*entry.name.split("."))
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(entry.path, target)


def _needs_rebuild(root: Path, packed: list[str]) -> bool:
    """Whether the kept task-chunked copy of a packed array, or the checksum
    records of the task chunks, are gone."""
    missing = [n for n in packed if read_json(_kept(root, n) / "zarr.json") is None]
    return bool(missing) or not (root / writes.MANIFEST_DIR).is_dir()


def _rebuild_cells(root: Path, url: str, names: list[str]) -> None:
    """Write the task-chunked copy of each packed array ``names`` into
    ``.boardsweep/cells/`` from its packed data (verified by its record);
    the cells of a damaged packed chunk read as missing and not done."""
    attrs = root_attrs(root)
    bad = damaged_chunks(url)
    data = {name: _read_packed(root, name, bad) for name in names}
    sim = {*simulated_variables(attrs), "done"}
    k, block = len(attrs.get("grid_axes", [])), int(attrs.get("replicates_per_task", 1))
    grid = store_chunks(attrs) or (1,) * k
    for key in bad:
        name, region = chunk_region(url, key)
        flag = "done" if name in sim else "exact_done"
        if flag not in data:
            raise LayoutError(f"store {url}: packed chunk {key} is damaged and {flag} is not packed with it; "
                              "replace the store with --overwrite")
        lead = [slice(r.start // g * g, -(-r.stop // g) * g) for r, g in zip(region[:k], grid)]  # whole task chunks
        lead += list(region[k:k + (flag == "done")])
        if flag == "done":
            reps = lead[-1]
            lead[-1] = slice(reps.start // block * block, -(-reps.stop // block) * block)
        data[flag][tuple(lead)] = False
    shutil.rmtree(root / REBUILD, ignore_errors=True)
    for name in names:
        _write_task_chunked(root, name, data[name])
        target = root / CELLS / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target)
        os.replace(root / REBUILD / name, target)
    shutil.rmtree(root / REBUILD, ignore_errors=True)


def _read_packed(root: Path, name: str, bad: dict[str, str]) -> np.ndarray:
    """A packed array's values, the fill value where a chunk is damaged (a
    float64 array of integers: in its integer view, :mod:`.integers`)."""
    meta = chunkfiles.plain_meta(root / name)
    if meta is None:
        raise LayoutError(f"array {name} of {root} is not in boardsweep's chunk format; "
                          "replace the store with --overwrite")
    shape, chunks, dtype, fill, sep = meta
    out = np.full(shape, fill, dtype=dtype)
    for coord in itertools.product(*[range(-(-n // c)) for n, c in zip(shape, chunks)]):
        region = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coord, chunks, shape))
        if f"{name}/{chunkfiles.chunk_file_key(coord, sep)}" not in bad:
            out[region] = chunkfiles.read(str(root), name, region)
    view = integers.declared((read_json(root / name / "zarr.json") or {}).get("attributes"))
    return out if view is None else integers.integer(out, view)


def _write_task_chunked(root: Path, name: str, values: np.ndarray) -> None:
    """Write ``values`` as array ``name`` in the task layout into ``.boardsweep/rebuild/``."""
    meta = read_json(root / name / "zarr.json")
    record = packed_record(root, name, meta) or {}
    chunks = record.get("task_chunks")
    if chunks is None:
        raise LayoutError(f"array {name} of {root}: its layout record does not name its task chunks; "
                          "replace the store with --overwrite")
    meta.get("attributes", {}).pop(LAYOUT_ATTR, None)  # a format-2 store kept it here
    with_chunk_shape(meta, chunks)
    restore_fill(meta)
    target = root / REBUILD / name
    target.mkdir(parents=True)
    (target / "zarr.json").write_text(json.dumps(meta, indent=2))
    as_int = integers.declared(meta.get("attributes"))
    fill = integers.mark(as_int) if as_int is not None else chunkfiles.plain_meta(target)[3]
    shape = values.shape
    for coord in itertools.product(*[range(-(-n // c)) for n, c in zip(shape, chunks)]):
        region = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coord, chunks, shape))
        part = values[region]
        empty = np.isnan(part).all() if values.dtype.kind == "f" else bool((part == fill).all())
        if not empty:  # as zarr: a chunk holding only the fill value is not written
            chunkfiles.write_chunk(str(root / REBUILD), name, region, part)


def _record_manifests(url: str) -> None:
    """Record the checksums of every finished task block and exact point
    afresh (after the task chunks were rebuilt from the packed data)."""
    root = local_root(url)
    attrs = root_attrs(root)
    block = int(attrs.get("replicates_per_task", 1))
    sim = [*simulated_variables(attrs), "done"]
    exact = [*attrs.get("exact_variables", []), "exact_done"]
    shutil.rmtree(root / writes.MANIFEST_DIR, ignore_errors=True)
    sweep = writes.sweep_of(attrs)
    with quiet():
        group = zarr.open_group(url, mode="r")
        done = chunkfiles.read(url, "done")
        grid = store_chunks(attrs) or (1,) * (done.ndim - 1)
        for cell in np.argwhere(per_chunk(done, grid, block)):  # every task chunk with a finished cell
            index, start = tuple(int(i) for i in cell[:-1]), int(cell[-1]) * block
            writes.record(url, writes.chunk_paths(group, sim, index + (start // block,)), index, start,
                             sweep=sweep)
        for cell in np.argwhere(per_chunk(chunkfiles.read(url, "exact_done"), grid)):
            index = tuple(int(i) for i in cell)
            writes.record(url, writes.chunk_paths(group, exact, index), index, None, sweep=sweep)


def recover(url: str) -> str:
    """Finish a layout change that a killed process left half done; return
    what was done, in words (empty where nothing was).  A journal lost or
    edited while no change was under way needs nothing (the arrays say the
    layout); an array chunked neither way raises :class:`LayoutError`."""
    state = layout(url)
    root = _folder(url)
    if state == PACKING_STATE:
        if root is None:
            packing_inplace.finish_in_place(url)
            return "an interrupted packing finished"
        try:
            _finish_packing(root, url)
        except OSError as exc:
            _roll_back(root, read_journal(url).get("arrays", []))
            return f"an interrupted packing could not be finished ({exc.strerror or exc}): back to the task layout"
        return "an interrupted packing finished"
    done = recover_unpacking(url, state, unpack)
    if done is not None:
        return done
    if root is not None and state == TASKS and (root / PACKING).exists():
        shutil.rmtree(root / PACKING, ignore_errors=True)  # a pack killed before it began to swap
    return ""  # a journal lost or edited needs nothing: the arrays say the layout


def _consolidate(url: str) -> None:
    """Rewrite the root's consolidated metadata (xarray reads arrays' chunk
    shapes from it)."""
    with quiet():
        zarr.consolidate_metadata(url)
