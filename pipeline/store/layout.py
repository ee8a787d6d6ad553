"""How a store's task-written arrays are laid out: read here, and its record written (:func:`set_records`).

An array is in the *task* layout (one chunk per task, as the run writes it)
or *packed* (few large chunks, recorded in the store's root attribute
:data:`LAYOUT_ATTR`: per packed array, its packed and task chunk shapes and
its chunk files' sizes and CRC-32s); a journal (:data:`JOURNAL`) names a
change of layout under way.  The record lives in the root attributes, never
on the arrays a user reads (store format 3); a format-2 store kept it on
each packed array, which is still read (:func:`record_in_journal`).  :func:`layout` says
which, from the arrays themselves; :func:`damaged_chunks` checks a packed
array's files against its record; :func:`store_chunks` reads the grid
points per task, and :func:`marked` whether a growth (:mod:`.growth`) is
under way.  The record is written by :func:`set_records` alone; the changes
themselves (pack, unpack, recover) are in :mod:`.packing` (a folder) and :mod:`.packing_inplace`
(object storage, where a packed array keeps its task chunks in place).
Every function here reads a folder or an fsspec URL alike (:func:`.storage.open_storage`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping


import numpy as np
import zarr

from ..errors import LayoutError
from .chunkfiles import LAYOUT_ATTR, fingerprint
from .metadata import simulated_variables
from .storage import open_storage
from .zarr_private import chunk_shape, quiet

__all__ = ["JOURNAL", "CELLS", "NESTED_CELLS", "PACKING", "REBUILD", "TASKS", "PACKING_STATE", "PACKED", "UNPACKING", "MIXED",
           "UNKNOWN", "LAYOUT_ATTR", "PACKED_CHUNK_BYTES", "layout", "packed_chunks", "array_metas",
           "fingerprint", "unrecognised", "task_arrays", "damaged_chunks", "chunk_region", "root_records",
           "records_text", "packed_record", "GRID_CHUNKS_ATTR", "store_chunks", "GROWING", "interrupted", "marked",
           "GENERATION_ATTR", "set_records"]

JOURNAL = ".boardsweep/layout.json"
#: Where packing keeps the task-chunked arrays, each chunk file flat in its
#: array's folder (``c.3.0.0``, not ``c/3/0/0``: one folder per array, not one
#: per chunk and dimension).
CELLS = ".boardsweep/flat-cells"
#: Where packing kept them before, nested as zarr writes them: still read and
#: moved back, never written (a boardsweep that knows only this folder finds,
#: by its code, no kept copy in a newer store and rebuilds it from the packed data).
NESTED_CELLS = ".boardsweep/cells"
PACKING = ".boardsweep/packing"

REBUILD = ".boardsweep/rebuild"

#: Largest packed chunk, uncompressed: a reader holds one decoded chunk per
#: array at a time (13 arrays of the money game: about 200 MiB; at 64 MiB,
#: 800 MiB), and a few hundred files hold 10^7 grid points.
PACKED_CHUNK_BYTES = 16 * 2**20

TASKS, PACKING_STATE, PACKED, UNPACKING = "tasks", "packing", "packed", "unpacking"
#: Layouts read from the arrays: some packed and some not with no change under
#: way (a journal lost mid-change), or an array chunked neither way.
MIXED, UNKNOWN = "mixed", "unknown"

#: Root attribute: grid points per task along each grid axis (absent: one).
GRID_CHUNKS_ATTR = "grid_chunks"
#: Root attribute set while a growth is being applied (:mod:`.growth`): the target canonical spec.
GROWING = "growing"


def store_chunks(attrs: Mapping[str, Any]) -> tuple[int, ...] | None:
    """Grid points per task along each axis, as a store records them
    (root attribute ``grid_chunks``; ``None`` for a store of one point per task)."""
    found = attrs.get(GRID_CHUNKS_ATTR)
    if not isinstance(found, list) or not all(isinstance(g, int) and g >= 1 for g in found):
        return None
    return tuple(found)


def interrupted(attrs: Mapping[str, Any]) -> str | None:
    """The target canonical JSON of a growth that did not finish, else ``None``."""
    value = attrs.get(GROWING)
    return str(value) if value else None


def marked(root: bytes | None) -> bool:
    """Whether the root metadata ``root`` (``zarr.json``'s bytes, as a reader
    read them) marks a growth under way (:data:`GROWING` set, :func:`interrupted`)."""
    try:
        attrs = json.loads(root or b"{}").get("attributes", {})
        return interrupted(attrs) is not None
    except (ValueError, AttributeError, TypeError):
        return False



#: Root attribute counting the store's layout changes (each packing or unpacking
#: step that rewrites :data:`LAYOUT_ATTR`): a reader that compares the root
#: metadata before and after its read (:func:`boardsweep.pipeline.store.open.layout_stamp`)
#: sees a pack and unpack that both ended inside its read, which restore the same
#: records (A, B, A), as a change.
GENERATION_ATTR = "boardsweep_layout_generation"


def set_records(url: str, records: dict[str, Any] | None) -> None:
    """Write the packed arrays' records into the root attribute
    :data:`LAYOUT_ATTR` (``None`` or empty: remove it), and count the change
    in :data:`GENERATION_ATTR`."""
    with quiet():
        group = zarr.open_group(url, mode="r+")
        attrs = dict(group.attrs)
        if records:
            attrs[LAYOUT_ATTR] = records_text(records)
        else:
            attrs.pop(LAYOUT_ATTR, None)
        generation = attrs.get(GENERATION_ATTR, 0)
        attrs[GENERATION_ATTR] = (generation if isinstance(generation, int) else 0) + 1
        group.attrs.put(attrs)



#: A JSON document at least this long is parsed once while its bytes stay the same (:func:`json_document`).
BIG_DOCUMENT = 2**20
_last_document: tuple[bytes, Any] | None = None


def json_document(raw: bytes) -> Any:
    """``json.loads(raw)``; a large document (a store's root metadata: 20 MB
    at 10^7 grid points, the spec's text and canonical form, read by several
    checks of one command) parsed once while its bytes stay the same.  Each
    call gives its own dicts two levels down (the document and its
    ``attributes``), which the caller may change."""
    global _last_document
    last = _last_document
    if len(raw) < BIG_DOCUMENT:
        return json.loads(raw)
    if last is None or last[0] != raw:
        last = (bytes(raw), json.loads(raw))
        _last_document = last
    found = last[1]
    if not isinstance(found, dict):
        return found
    return {k: dict(v) if isinstance(v, dict) else v for k, v in found.items()}


def _parse(raw: bytes | None) -> dict[str, Any] | None:
    """A JSON object's bytes parsed, else ``None``."""
    if raw is None:
        return None
    try:
        found = json_document(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return found if isinstance(found, dict) else None


def read_journal(url: str | Path) -> dict[str, Any]:
    """The journal (``{}`` where there is none, ``{"state": "unreadable"}``
    where it does not parse as a JSON object)."""
    raw = open_storage(url).read(JOURNAL)
    if raw is None:
        return {}
    journal = _parse(raw)
    return journal if journal is not None else {"state": "unreadable"}


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        return _parse(path.read_bytes())
    except OSError:
        return None


def root_attrs(root: str | Path) -> dict[str, Any]:
    meta = _parse(open_storage(root).read("zarr.json")) or {}
    attrs = meta.get("attributes")
    return attrs if isinstance(attrs, dict) else {}


def root_records(attrs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The packed arrays' records kept in the root attribute :data:`LAYOUT_ATTR`
    (JSON text: array name -> record); ``{}`` where there is none or it does not parse."""
    text = attrs.get(LAYOUT_ATTR)
    if text is None:
        return {}
    try:
        found = json.loads(text)
    except (TypeError, ValueError):
        return {}
    arrays = found.get("arrays") if isinstance(found, dict) else None
    return {k: v for k, v in arrays.items() if isinstance(v, dict)} if isinstance(arrays, dict) else {}


def records_text(records: dict[str, dict[str, Any]]) -> str:
    """The root attribute :data:`LAYOUT_ATTR` holding ``records`` (array name -> record)."""
    return json.dumps({"arrays": records}, separators=(",", ":"))


def _separator(meta: dict[str, Any]) -> str:
    return ((meta.get("chunk_key_encoding") or {}).get("configuration") or {}).get("separator", "/")


def _task_chunks(attrs: dict[str, Any], name: str, shape: list[int]) -> list[list[int]]:
    """The chunk shapes array ``name`` has in the task layout (one grid
    point or the recorded ``grid_chunks`` along grid axes, one task block
    along ``replicate``; zarr may record a block larger
    than the replicates as it is or cut to them)."""
    k = len(attrs.get("grid_axes", []))
    grid = list(store_chunks(attrs) or [1] * k)
    grids = [grid, [min(g, n) for g, n in zip(grid, shape)]]  # as recorded, or cut to the axes, as zarr may
    if name in (*simulated_variables(attrs), "done"):
        block = int(attrs.get("replicates_per_task", 1))
        rest = list(shape[k + 1:])
        blocks = {block, min(block, shape[k]) if len(shape) > k else block}
        return [g + [b] + rest for g in grids for b in blocks]
    return [g + list(shape[k:]) for g in grids]


def record_in_journal(meta: dict[str, Any], name: str, journal: dict[str, Any],
            records: dict[str, dict[str, Any]] | None = None) -> dict[str, Any] | None:
    """The packed record of an array, else ``None``: its entry in the root
    records (:func:`root_records`) where the array is chunked as that record
    says; a format-2 store: the array's own :data:`LAYOUT_ATTR`; a store
    packed before the record existed: the journal's files."""
    record = (records or {}).get(name)
    if isinstance(record, dict) and isinstance(record.get("files"), dict):
        try:
            same = (list(chunk_shape(meta)) == list(record.get("chunks", []))
                    and _separator(meta) == record.get("separator", "/"))
        except (KeyError, TypeError, IndexError):
            same = False
        if same:
            return record
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


def array_metas(url: str | Path, attrs: dict[str, Any] | None = None) -> dict[str, dict[str, Any] | None]:
    """Each task array's ``zarr.json``, parsed (``None`` where missing or unreadable)."""
    files = open_storage(url)
    attrs = root_attrs(url) if attrs is None else attrs
    names = task_arrays(attrs)
    raw = files.read_many([f"{name}/zarr.json" for name in names])
    return {name: _parse(raw[f"{name}/zarr.json"]) for name in names}


def array_states(root: str | Path, journal: dict[str, Any] | None = None) -> dict[str, str]:
    """Each task array's layout as its own metadata says: ``packed``,
    ``tasks``, ``missing`` (no readable ``zarr.json``) or ``unknown``."""
    journal = journal if journal is not None else read_journal(root)
    attrs = root_attrs(root)
    records = root_records(attrs)
    states = {}
    for name, meta in array_metas(root, attrs).items():
        if meta is None:
            states[name] = "missing"
            continue
        text = (meta.get("attributes") or {}).get(LAYOUT_ATTR)
        if text is not None or record_in_journal(meta, name, journal, records) is not None:
            states[name] = PACKED if record_in_journal(meta, name, journal, records) is not None else UNKNOWN
            continue
        try:
            chunks = chunk_shape(meta)
            states[name] = TASKS if chunks in _task_chunks(attrs, name, meta["shape"]) else UNKNOWN
        except (KeyError, TypeError, IndexError):
            states[name] = UNKNOWN
    return states


def unrecognised(url: str) -> dict[str, str]:
    """Task arrays whose layout is neither the task layout nor a packed one
    that records itself, with the reason in words."""
    return {name: (f"chunked neither as its tasks write nor as a packed array recorded in the root "
                   f"attribute {LAYOUT_ATTR}; restore the array or replace the store with --overwrite")
            for name, state in array_states(url).items() if state == UNKNOWN}


def layout(url: str) -> str:
    """``tasks`` or ``packed`` as the store's arrays say; an interrupted
    change the journal records (``packing``, ``unpacking``); ``mixed``
    (some arrays packed, some not, no change recorded: a journal lost
    mid-change) or ``unknown`` (an array chunked neither way)."""
    journal = read_journal(url)
    if journal.get("state") in (PACKING_STATE, UNPACKING):
        return str(journal["state"])
    states = set(array_states(url, journal).values()) - {"missing"}
    if UNKNOWN in states:
        return UNKNOWN
    if states and states <= {PACKED}:
        return PACKED
    return TASKS if states <= {TASKS} else MIXED


def recover_unpacking(url: str, state: str, unpack: Callable[[str], Any]) -> str | None:
    """The part of recovering a store (``state``: its :func:`layout`) that
    the local and in-place packings share: an interrupted unpacking, or a
    change whose journal is lost (``mixed``), finished with ``unpack``; an
    array of unknown layout refused (:class:`LayoutError`).  Returns what
    was done, in words, or None where ``state`` is none of these."""
    if state in (UNPACKING, MIXED):
        unpack(url)
        return "an interrupted unpacking finished" if state == UNPACKING else \
            "a layout change interrupted with its journal lost: returned to the task layout"
    if state == UNKNOWN:
        names = unrecognised(url)
        raise LayoutError(f"store {url}: array {', '.join(names)} is {next(iter(names.values()))}")
    return None


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


def task_arrays(attrs: dict[str, Any]) -> list[str]:
    """The arrays tasks write, one chunk per task: what packing rewrites."""
    return [*simulated_variables(attrs), "done", *attrs.get("exact_variables", []), "exact_done"]


def file_fingerprint(path: Path) -> list[int] | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return fingerprint(data)


def damaged_chunks(url: str) -> dict[str, str]:
    """Chunk files (store-relative) of the packed arrays that are missing or
    differ from the array's own record, with the reason; empty where no
    array is packed."""
    files = open_storage(url)
    journal = read_journal(url)
    records = root_records(root_attrs(url))
    bad = {}
    for name, state in array_states(url, journal).items():
        if state != PACKED:
            continue
        record = record_in_journal(_parse(files.read(f"{name}/zarr.json")), name, journal, records)
        found = files.read_many(list(record["files"]))
        for key, expected in record["files"].items():
            got = fingerprint(found[key])
            if got is None:
                bad[key] = f"packed chunk {key} {files.why_unread(key)}"
            elif got != expected:
                bad[key] = (f"packed chunk {key} has {got[0]} bytes, {expected[0]} written"
                            if got[0] != expected[0] else f"packed chunk {key} altered (checksum differs)")
    return bad


def chunk_region(url: str, key: str) -> tuple[str, tuple[slice, ...]]:
    """The array and the region (slices of every dim) a packed chunk file covers."""
    name, _, rest = key.partition("/c")
    meta = _parse(open_storage(url).read(f"{name}/zarr.json"))
    shape, chunks = meta["shape"], chunk_shape(meta)
    rest = rest[1:]  # "/0/1" on a folder, ".0.1" where packed in place
    coord = [int(c) for c in rest.replace(".", "/").split("/")] if rest else [0] * len(shape)
    return name, tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coord, chunks, shape))


def packed_record(url: str | Path, name: str, meta: dict[str, Any]) -> dict[str, Any] | None:
    """The packed record of array ``name`` (``meta``: its ``zarr.json``, parsed)
    from the root attributes, or a format-2 store's own attribute; ``None``
    where it is in the task layout."""
    record = record_in_journal(meta, name, {}, root_records(root_attrs(url)))
    if record is None or "task_chunks" not in record:
        return None
    return record
