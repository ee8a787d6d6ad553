"""How a local store's task-written arrays are laid out: read, never changed here.

An array is in the *task* layout (one chunk per task, as the run writes it)
or *packed* (few large chunks, the attribute :data:`LAYOUT_ATTR` recording
its task chunk shape and its chunk files' sizes and CRC-32s); a journal
(:data:`JOURNAL`) names a change of layout under way.  :func:`layout` says
which, from the arrays themselves; :func:`damaged_chunks` checks a packed
array's files against its record.  The changes themselves (pack, unpack,
recover) are in :mod:`.packing`.  A store behind an fsspec URL is always in
the task layout.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

from .chunkfiles import LAYOUT_ATTR, local_root
from .metadata import simulated_variables
from .zarr_private import chunk_shape

__all__ = ["JOURNAL", "CELLS", "PACKING", "REBUILD", "TASKS", "PACKING_STATE", "PACKED", "UNPACKING", "MIXED",
           "UNKNOWN", "LAYOUT_ATTR", "layout", "unrecognised", "task_arrays", "damaged_chunks", "chunk_region"]

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
            chunks = chunk_shape(meta)
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


def _fingerprint(path: Path) -> list[int] | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return [len(data), zlib.crc32(data)]


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
    shape, chunks = meta["shape"], chunk_shape(meta)
    coord = [int(c) for c in rest.split("/")] if rest else [0] * len(shape)
    return name, tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coord, chunks, shape))
