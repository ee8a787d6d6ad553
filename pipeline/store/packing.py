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

The arrays themselves say how they are laid out: a packed array carries the
attribute ``boardsweep_layout`` (:data:`LAYOUT_ATTR`: its task chunk shape
and its chunk files' sizes and CRC-32s, which the integrity check verifies,
:func:`damaged_chunks`); a task-chunked array has the chunk shape its tasks
write.  So a store that lost ``.boardsweep/`` (copied with a glob that skips
dot-files) or whose journal was lost or edited is still read, checked and
run correctly; an array that is neither is refused in one line.  Tasks
never write a packed array (:func:`boardsweep.pipeline.store.chunkfiles.write_chunk`
refuses), and :func:`unpack` rebuilds the task chunks from the verified
packed data where the kept copy or its checksum records are gone.

Every step is a rename or a copy that can be done again, and a journal
(``.boardsweep/layout.json``) says which change is under way, so a process
killed at any point leaves a store that the next ``run`` puts right
(:func:`recover`) and that readers refuse meanwhile, in one line.

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
from .chunkfiles import LAYOUT_ATTR, LayoutError, local_root
from .metadata import simulated_variables

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
]

#: Largest packed chunk, uncompressed (dask's own default chunk size is 128 MiB).
PACKED_CHUNK_BYTES = 64 * 2**20

JOURNAL = ".boardsweep/layout.json"
CELLS = ".boardsweep/cells"
PACKING = ".boardsweep/packing"

REBUILD = ".boardsweep/rebuild"

TASKS, PACKING_STATE, PACKED, UNPACKING = "tasks", "packing", "packed", "unpacking"
#: Layouts read from the arrays: some packed and some not with no change under
#: way (a journal lost mid-change), or an array chunked neither way.
MIXED, UNKNOWN = "mixed", "unknown"


def _journal(url: str) -> dict[str, Any]:
    """The journal (``{}`` where there is none, ``{"state": "unreadable"}``
    where it does not parse as a JSON object)."""
    root = local_root(url)
    if root is None:
        return {}
    try:
        journal = json.loads((root / JOURNAL).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return {"state": "unreadable"}
    return journal if isinstance(journal, dict) else {"state": "unreadable"}


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _root_attrs(root: Path) -> dict[str, Any]:
    meta = _read_json(root / "zarr.json") or {}
    attrs = meta.get("attributes")
    return attrs if isinstance(attrs, dict) else {}


def _task_chunks(attrs: dict[str, Any], name: str, shape: list[int]) -> list[list[int]]:
    """The chunk shapes array ``name`` has in the task layout (one grid
    point, one task block along ``replicate``; zarr may record a block larger
    than the replicates as it is or cut to them)."""
    k = len(attrs.get("grid_axes", []))
    if name in (*simulated_variables(attrs), "done"):
        block = int(attrs.get("replicates_per_task", 1))
        rest = list(shape[k + 1:])
        return [[1] * k + [b] + rest for b in {block, min(block, shape[k]) if len(shape) > k else block}]
    return [[1] * k + list(shape[k:])]


def _record(meta: dict[str, Any], name: str, journal: dict[str, Any]) -> dict[str, Any] | None:
    """The packed record of an array (its :data:`LAYOUT_ATTR`), else ``None``;
    a store packed before the record existed: the journal's files."""
    text = (meta.get("attributes") or {}).get(LAYOUT_ATTR)
    if text is not None:
        try:
            record = json.loads(text)
        except (TypeError, ValueError):
            return None
        return record if isinstance(record, dict) and isinstance(record.get("files"), dict) else None
    if journal.get("state") == PACKED and name in journal.get("arrays", []) and "files" in journal:
        files = {k: v for k, v in journal["files"].items() if k.split("/c", 1)[0] == name}
        return {"state": PACKED, "files": files}
    return None


def _array_states(root: Path, journal: dict[str, Any] | None = None) -> dict[str, str]:
    """Each task array's layout as its own metadata says: ``packed``,
    ``tasks``, ``missing`` (no readable ``zarr.json``) or ``unknown``."""
    journal = journal if journal is not None else _journal(str(root))
    attrs = _root_attrs(root)
    states = {}
    for name in task_arrays(attrs):
        meta = _read_json(root / name / "zarr.json")
        if meta is None:
            states[name] = "missing"
            continue
        text = (meta.get("attributes") or {}).get(LAYOUT_ATTR)
        if text is not None or _record(meta, name, journal) is not None:
            states[name] = PACKED if _record(meta, name, journal) is not None else UNKNOWN
            continue
        try:
            chunks = list(meta["chunk_grid"]["configuration"]["chunk_shape"])
            states[name] = TASKS if chunks in _task_chunks(attrs, name, meta["shape"]) else UNKNOWN
        except (KeyError, TypeError, IndexError):
            states[name] = UNKNOWN
    return states


def unrecognised(url: str) -> dict[str, str]:
    """Task arrays whose layout is neither the task layout nor a packed one
    that records itself, with the reason in words."""
    root = local_root(url)
    if root is None:
        return {}
    return {name: (f"chunked neither as its tasks write nor as a packed array that records its "
                   f"layout ({LAYOUT_ATTR}); restore the array or replace the store with --overwrite")
            for name, state in _array_states(root).items() if state == UNKNOWN}


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
    """``tasks`` or ``packed`` as the store's arrays say; an interrupted
    change the journal records (``packing``, ``unpacking``); ``mixed``
    (some arrays packed, some not, no change recorded: a journal lost
    mid-change) or ``unknown`` (an array chunked neither way)."""
    root = local_root(url)
    if root is None:
        return TASKS
    journal = _journal(url)
    if journal.get("state") in (PACKING_STATE, UNPACKING):
        return str(journal["state"])
    states = set(_array_states(root, journal).values()) - {"missing"}
    if UNKNOWN in states:
        return UNKNOWN
    if states and states <= {PACKED}:
        return PACKED
    return TASKS if states <= {TASKS} else MIXED


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
    task_chunks = list(meta["chunk_grid"]["configuration"]["chunk_shape"])
    meta["chunk_grid"]["configuration"]["chunk_shape"] = list(chunks)
    target = root / PACKING / name
    target.mkdir(parents=True)
    (target / "zarr.json").write_text(json.dumps(meta, indent=2))
    files = {}
    for coord in itertools.product(*[range(-(-n // c)) for n, c in zip(shape, chunks)]):
        region = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coord, chunks, shape))
        key = chunkfiles.write_chunk(str(root / PACKING), name, region, data[region], packed=True)
        if key is None:
            raise ValueError(f"array {name}: packed chunk {coord} could not be written")
        files[key] = _fingerprint(root / PACKING / key)
    record = {"state": PACKED, "task_chunks": task_chunks, "files": files}
    meta.setdefault("attributes", {})[LAYOUT_ATTR] = json.dumps(record, separators=(",", ":"))
    (target / "zarr.json").write_text(json.dumps(meta, indent=2))  # last: the array says it is packed
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
        _write_journal(root, {"state": PACKING_STATE, "arrays": names})
    except BaseException:
        shutil.rmtree(root / PACKING, ignore_errors=True)  # a full disk leaves nothing behind
        (root / JOURNAL).unlink(missing_ok=True)
        raise
    try:
        _finish_packing(root, url)
    except OSError:
        _roll_back(root, names)  # a full disk while finishing: back to the task layout, by renames
        raise
    return True


def _roll_back(root: Path, names: list[str]) -> None:
    """Undo a packing whose finishing failed (the root metadata could not be
    rewritten, so it still describes the task layout): the task-chunked
    arrays move back, the packed copies and the journal go.  Renames and
    removals only: this works on a full disk."""
    for name in names:
        here, cells = root / name, root / CELLS / name
        if cells.exists():
            if here.exists():
                shutil.rmtree(here)
            os.replace(cells, here)
    shutil.rmtree(root / CELLS, ignore_errors=True)
    shutil.rmtree(root / PACKING, ignore_errors=True)
    (root / JOURNAL).unlink(missing_ok=True)


def _finish_packing(root: Path, url: str) -> None:
    """Move each task-chunked array to ``.boardsweep/cells/`` and its packed
    copy into its place (each step skipped where already done), rewrite the
    root metadata, then drop the journal (the arrays say they are packed)."""
    journal = _journal(url)
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
    shutil.rmtree(root / PACKING, ignore_errors=True)
    _consolidate(url)
    _write_journal(root, None)


def unpack(url: str) -> bool:
    """Return a packed store at ``url`` to the task layout: the task-chunked
    arrays move back, the packed copies go.  Where the kept task-chunked
    copy or the checksum records are gone (``.boardsweep/`` lost), the task
    chunks are rebuilt from the verified packed data and recorded afresh;
    cells of a damaged packed chunk are left not done.  ``False`` where the
    store was not packed."""
    root = local_root(url)
    state = layout(url)
    if root is None or state not in (PACKED, UNPACKING, MIXED):
        return False
    journal = _journal(url)
    if state != UNPACKING:
        states = _array_states(root, journal)
        packed = [n for n, s in states.items() if s == PACKED]
        rebuild = _needs_rebuild(root, packed)
        if rebuild:
            _rebuild_cells(root, url, packed)
        moved = [n for n, s in states.items() if s in (PACKED, "missing")]  # a lost packed array: its kept copy
        journal = {"state": UNPACKING, "arrays": moved, "record": rebuild}
        _write_journal(root, journal)
    for name in journal.get("arrays", []):
        here, cells = root / name, root / CELLS / name
        if not cells.exists():
            continue  # already moved back
        if here.exists():
            shutil.rmtree(here)
        os.replace(cells, here)
    shutil.rmtree(root / CELLS, ignore_errors=True)
    _consolidate(url)
    if journal.get("record"):
        _record_manifests(url)
    _write_journal(root, None)
    return True


def _needs_rebuild(root: Path, packed: list[str]) -> bool:
    """Whether the kept task-chunked copy of a packed array, or the checksum
    records of the task chunks, are gone."""
    from .integrity import MANIFEST_DIR

    missing = [n for n in packed if _read_json(root / CELLS / n / "zarr.json") is None]
    return bool(missing) or not (root / MANIFEST_DIR).is_dir()


def _rebuild_cells(root: Path, url: str, names: list[str]) -> None:
    """Write the task-chunked copy of each packed array ``names`` into
    ``.boardsweep/cells/`` from its packed data (verified by its record);
    the cells of a damaged packed chunk read as missing and not done."""
    attrs = _root_attrs(root)
    bad = damaged_chunks(url)
    data = {name: _read_packed(root, name, bad) for name in names}
    sim = {*simulated_variables(attrs), "done"}
    k, block = len(attrs.get("grid_axes", [])), int(attrs.get("replicates_per_task", 1))
    for key in bad:
        name, region = chunk_region(url, key)
        flag = "done" if name in sim else "exact_done"
        if flag not in data:
            raise LayoutError(f"store {url}: packed chunk {key} is damaged and {flag} is not packed with it; "
                              "replace the store with --overwrite")
        lead = list(region[:k + (flag == "done")])
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
    """A packed array's values, the fill value where a chunk is damaged."""
    meta = chunkfiles._plain_meta(root / name)
    if meta is None:
        raise LayoutError(f"array {name} of {root} is not in boardsweep's chunk format; "
                          "replace the store with --overwrite")
    shape, chunks, dtype, fill, sep = meta
    out = np.full(shape, fill, dtype=dtype)
    for coord in itertools.product(*[range(-(-n // c)) for n, c in zip(shape, chunks)]):
        region = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coord, chunks, shape))
        if f"{name}/{chunkfiles._chunk_key(coord, sep)}" not in bad:
            out[region] = chunkfiles.read(str(root), name, region)
    return out


def _write_task_chunked(root: Path, name: str, values: np.ndarray) -> None:
    """Write ``values`` as array ``name`` in the task layout into ``.boardsweep/rebuild/``."""
    meta = _read_json(root / name / "zarr.json")
    record = json.loads(meta["attributes"][LAYOUT_ATTR]) if LAYOUT_ATTR in meta.get("attributes", {}) else {}
    chunks = record.get("task_chunks")
    if chunks is None:
        raise LayoutError(f"array {name} of {root}: its layout record does not name its task chunks; "
                          "replace the store with --overwrite")
    del meta["attributes"][LAYOUT_ATTR]
    meta["chunk_grid"]["configuration"]["chunk_shape"] = list(chunks)
    target = root / REBUILD / name
    target.mkdir(parents=True)
    (target / "zarr.json").write_text(json.dumps(meta, indent=2))
    fill = chunkfiles._plain_meta(target)[3]
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
    import zarr

    from . import integrity
    from .arrays import quiet_zarr

    root = local_root(url)
    attrs = _root_attrs(root)
    block = int(attrs.get("replicates_per_task", 1))
    sim = [*simulated_variables(attrs), "done"]
    exact = [*attrs.get("exact_variables", []), "exact_done"]
    shutil.rmtree(root / integrity.MANIFEST_DIR, ignore_errors=True)
    with quiet_zarr():
        group = zarr.open_group(url, mode="r")
        done = chunkfiles.read(url, "done")
        blocks = {(tuple(int(i) for i in c[:-1]), int(c[-1]) // block * block) for c in np.argwhere(done)}
        for index, start in sorted(blocks):
            integrity.record(url, integrity.chunk_paths(group, sim, index + (start // block,)), index, start)
        for cell in np.argwhere(chunkfiles.read(url, "exact_done")):
            index = tuple(int(i) for i in cell)
            integrity.record(url, integrity.chunk_paths(group, exact, index), index, None)


def recover(url: str) -> str:
    """Finish a layout change that a killed process left half done; return
    what was done, in words (empty where nothing was).  A journal lost or
    edited while no change was under way needs nothing (the arrays say the
    layout); an array chunked neither way raises :class:`LayoutError`."""
    state = layout(url)
    root = local_root(url)
    if root is None:
        return ""
    if state == PACKING_STATE:
        try:
            _finish_packing(root, url)
        except OSError as exc:
            _roll_back(root, _journal(url).get("arrays", []))
            return f"an interrupted packing could not be finished ({exc.strerror or exc}): back to the task layout"
        return "an interrupted packing finished"
    if state in (UNPACKING, MIXED):
        unpack(url)
        return "an interrupted unpacking finished" if state == UNPACKING else \
            "a layout change interrupted with its journal lost: returned to the task layout"
    if state == UNKNOWN:
        names = unrecognised(url)
        raise LayoutError(f"store {url}: array {', '.join(names)} is {next(iter(names.values()))}")
    if state == TASKS and (root / PACKING).exists():
        shutil.rmtree(root / PACKING, ignore_errors=True)  # a pack killed before it began to swap
    return ""  # a journal lost or edited needs nothing: the arrays say the layout


def damaged_chunks(url: str) -> dict[str, str]:
    """Chunk files (store-relative) of the packed arrays that are missing or
    differ from the array's own record, with the reason; empty where no
    array is packed."""
    root = local_root(url)
    if root is None:
        return {}
    journal = _journal(url)
    bad = {}
    for name, state in _array_states(root, journal).items():
        if state != PACKED:
            continue
        record = _record(_read_json(root / name / "zarr.json"), name, journal)
        for key, expected in record["files"].items():
            got = _fingerprint(root / key)
            if got is None:
                bad[key] = f"packed chunk {key} missing"
            elif got != expected:
                bad[key] = (f"packed chunk {key} has {got[0]} bytes, {expected[0]} written"
                            if got[0] != expected[0] else f"packed chunk {key} altered (checksum differs)")
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
