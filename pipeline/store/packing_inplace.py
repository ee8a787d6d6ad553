"""The packed layout of a finished store on object storage, written in place.

On object storage a rename is a copy and a delete of every object, so the
local packing (:mod:`.packing`: move the task-chunked arrays aside, move the
packed copy in) does not carry over.  Here a packed array keeps its task
chunks where they are, and its large chunks sit beside them under other
keys: the packed array's ``zarr.json`` names the chunk key separator ``.``
(keys ``c.0.0``) where the task layout's is ``/`` (keys ``c/0/0``).  Which
chunks are read is decided by the array's metadata alone, and both sets
hold the same values, so a change of layout is three steps, each of which
can be done again:

1. write the chunks of the new layout (packing: the packed chunks; unpacking:
   nothing, the task chunks never moved);
2. write the journal ``.boardsweep/layout.json`` holding every array's new
   ``zarr.json``, then put those (one object each), then the root's
   consolidated metadata (which xarray reads);
3. drop what the old layout no longer needs (unpacking: the packed chunks),
   then the journal.

A process killed anywhere leaves either the old layout (before the journal:
at most some unreferenced packed chunks, overwritten by the next packing) or
a journal the next ``run`` finishes (:func:`finish_in_place`, through
:func:`.packing.recover`); a reader meanwhile
reads correct values from either metadata, and ``status`` names the
interrupted change.  The root attribute :data:`LAYOUT_ATTR` records, per
packed array, its packed and task chunk shapes, its task key encoding and its
packed chunks' sizes and CRC-32s, which the integrity check verifies (it is
written before any array's metadata changes and removed after the last is
back, so it names every array that may be packed); the task chunks stay under their
checksum records, so unpacking is a metadata change and a repair rebuilds
nothing.  An array whose task chunk already is the whole array is packed by
its record alone (its chunk is the packed chunk: nothing is written or
dropped).  Whether a store is packed, and the preconditions of a change, are
asked once for both kinds of storage in :mod:`.packing`, which calls this.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import zarr

from .integers import integer_fill, restore_fill
from .reads import READ_CONCURRENCY
from ..errors import LayoutError
from .chunkfiles import LAYOUT_ATTR, PACKED_SEPARATOR, encode_chunks
from .layout import (JOURNAL, PACKED, PACKING_STATE, UNPACKING, array_metas, fingerprint, packed_chunks,
                     read_journal, record_in_journal, root_attrs, root_records, set_records, task_arrays)
from .storage import ObjectStorage
from .zarr_private import chunk_shape, quiet, with_chunk_shape

__all__ = ["PACKED_SEPARATOR", "pack_in_place", "unpack_in_place", "finish_in_place"]



# -- every change to the store goes through these (a test kills a process at each) --

def _put(files: ObjectStorage, rel: str, data: bytes) -> None:
    files.write(rel, data)


def _put_many(files: ObjectStorage, objects: dict[str, bytes]) -> None:
    """Write several objects (concurrent requests)."""
    files.write_many(objects)


def _drop(files: ObjectStorage, rels: list[str]) -> None:
    """Remove objects; those already gone are fine."""
    files.delete(rels)


def _consolidate(url: str) -> None:
    """Rewrite the root's consolidated metadata (xarray reads the arrays' chunks from it)."""
    with quiet():
        zarr.consolidate_metadata(url)


# -- packing ------------------------------------------------------------------

def pack_in_place(url: str, attrs: dict[str, Any], exact_done: np.ndarray, done: np.ndarray | None = None) -> bool:
    """Pack the store at ``url`` in place; :func:`.packing.pack` has checked
    that it is in the task layout, intact (``attrs``: its root attributes)
    and complete (``exact_done``: the mask it read, every cell done).
    ``done``: the ``done`` mask as the caller read it after the store's last
    write, taken instead of a second read where every cell is done (a chunk
    missing or not decoding reads as not done, so such a mask is what is stored)."""
    files = ObjectStorage(url)
    metas = array_metas(url, attrs)
    names = task_arrays(attrs)
    _drop(files, _packed_leftovers(files, names))  # a packing killed before its journal
    with quiet(), zarr.config.set({"async.concurrency": READ_CONCURRENCY}):
        group = zarr.open_group(url, mode="r")
        done = _as_stored(done if done is not None and bool(done.all()) else None, group["done"])
        if done is None:
            done = np.asarray(group["done"][...])
        complete = bool(done.all())
        read = {"done": done, "exact_done": exact_done}  # each mask read once: one request per task chunk
        new, records = {}, {}
        for name in names:
            meta = metas[name]
            if meta is None:
                raise LayoutError(f"store {url}: array {name} has no readable metadata; a run recreates it")
            data = _as_stored(read.get(name), group[name])
            if data is None:
                data = np.asarray(group[name][...])
            new[name], records[name] = _packed_meta(
                files, name, meta, data, packed_chunks(tuple(meta["shape"]), data.dtype.itemsize))
            integer_fill(new[name], data, complete)
    _switch(files, {"state": PACKING_STATE, "arrays": names, "meta": new, "records": records, "drop": []})
    return True


def _as_stored(values: np.ndarray | None, array) -> np.ndarray | None:
    """``values`` (a mask already read) where they are the whole of ``array``
    as zarr reads it (its shape and dtype), else ``None`` (read it again)."""
    if values is None or values.shape != array.shape or values.dtype != array.dtype:
        return None
    return values


def _packed_meta(files: ObjectStorage, name: str, meta: dict[str, Any], data: np.ndarray,
                 chunks: tuple[int, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Write array ``name``'s packed chunks beside its task chunks; return its
    packed ``zarr.json`` and its record (for the root attribute)."""
    task_chunks = chunk_shape(meta)
    packed = copy.deepcopy(meta)
    in_place = list(chunks) == list(task_chunks)  # one task chunk is the whole array: it is the packed chunk
    if not in_place:
        with_chunk_shape(packed, chunks)
        packed["chunk_key_encoding"] = {"name": "default", "configuration": {"separator": PACKED_SEPARATOR}}
    encoded = encode_chunks(packed, data)
    if encoded is None:
        raise LayoutError(f"array {name} of {files.url} is not in boardsweep's chunk format")
    if in_place:  # as written by the tasks: fingerprint what is there
        raw = files.read_many([f"{name}/{key}" for key in encoded])
        fingerprints = {f"{name}/{key}": fingerprint(raw[f"{name}/{key}"]) for key in encoded}
        missing = {k: encoded[k.split("/", 1)[1]] for k, f in fingerprints.items() if f is None}
        _put_many(files, missing)  # fill-only chunks zarr skipped
        fingerprints.update({k: fingerprint(v) for k, v in missing.items()})
    else:
        _put_many(files, {f"{name}/{key}": raw for key, raw in encoded.items()})
        fingerprints = {f"{name}/{key}": fingerprint(raw) for key, raw in encoded.items()}
    sep = (packed["chunk_key_encoding"].get("configuration") or {}).get("separator", "/")
    record = {"state": PACKED, "chunks": chunk_shape(packed), "separator": sep, "task_chunks": task_chunks,
              "task_key_encoding": meta["chunk_key_encoding"], "files": fingerprints}
    return packed, record


def _packed_leftovers(files: ObjectStorage, names: list[str]) -> list[str]:
    """Packed chunk objects (``c.*``, store-relative) under arrays ``names`` (one listing per array)."""
    return [f"{name}/{entry}" for name in names for entry in files.list(name)
            if entry.startswith(f"c{PACKED_SEPARATOR}")]


# -- the switch, and unpacking ---------------------------------------------------

def _switch(files: ObjectStorage, journal: dict[str, Any]) -> None:
    """Steps 2 and 3: the journal, every array's new metadata, the
    consolidated root, the objects to drop, no journal."""
    _put(files, JOURNAL, json.dumps(journal).encode())
    _finish(files, journal)


def _finish(files: ObjectStorage, journal: dict[str, Any]) -> None:
    """Put the journal's records (packing) and metadata, remove the records
    (unpacking), consolidate, drop, remove the journal (each step can be done again)."""
    if journal.get("records"):
        set_records(files.url, journal["records"])
    for name, meta in journal.get("meta", {}).items():
        _put(files, f"{name}/zarr.json", json.dumps(meta, indent=2).encode())
    if journal.get("state") == UNPACKING:
        set_records(files.url, None)
    _consolidate(files.url)
    _drop(files, list(journal.get("drop", [])))
    _drop(files, [JOURNAL])


def unpack_in_place(url: str, state: str) -> None:
    """Return the packed store at ``url`` (``state``: its layout, packed,
    mixed or unpacking, as :func:`.packing.unpack` read it) to the task
    layout: each packed array's metadata back to its task chunks (which
    never moved), then its packed chunks dropped."""
    files = ObjectStorage(url)
    if state == UNPACKING:
        _finish(files, read_journal(url))
        return
    metas, drop = {}, []
    records = root_records(root_attrs(url))
    for name, meta in array_metas(url).items():
        record = record_in_journal(meta, name, {}, records) if meta is not None else None
        if record is None or "task_chunks" not in record:
            continue  # in the task layout already
        task = copy.deepcopy(meta)
        task.get("attributes", {}).pop(LAYOUT_ATTR, None)  # a format-2 store kept it here
        with_chunk_shape(task, record["task_chunks"])
        task["chunk_key_encoding"] = record.get("task_key_encoding", task["chunk_key_encoding"])
        metas[name] = restore_fill(task)
        drop += [key for key in record.get("files", {}) if _is_packed_key(key)]
    _switch(files, {"state": UNPACKING, "arrays": sorted(metas), "meta": metas, "drop": drop})


def _is_packed_key(key: str) -> bool:
    """Whether ``name/c.0.1`` is a packed chunk (not a task chunk kept in place)."""
    return key.split("/", 1)[-1].startswith(f"c{PACKED_SEPARATOR}")


def finish_in_place(url: str) -> None:
    """Finish the packing its journal records (a process killed during step 2 or 3)."""
    _finish(ObjectStorage(url), read_journal(url))
