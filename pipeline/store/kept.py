"""A complete store's summary, computed once and kept in the store.

The verdict over a large grid reads every cell (:mod:`boardsweep.pipeline.analysis.blocks`):
tens of seconds at 10^6 grid points, for an answer that changes only when
the store's data does.  So it is kept in ``.boardsweep/`` (:data:`SUMMARY`:
JSON; :data:`P_VALUES`: the family's sorted p-values, ``.npy``) under a
*key*: the SHA-256 of the root attributes (the history apart) and of what
the caller says the summary depends on (its scheme and the code's version).

Only a packed store has a key (:func:`summary_key`): its root attributes
record every task-written array's packed chunk files with their sizes and
CRC-32s, and no change of layout is under way.  Any change to the data
changes the key: a run that resumes, grows or repairs a store unpacks it
first (the record goes), and packing it again records new checksums.  A
kept summary is read back only under the key the store has now, so one
written while the store changed is never read; a store without one (an
older boardsweep's, a store in the task layout) has its summary computed as
before.  Keeping it is best effort: a store that cannot be written (read
only, a full disk) is read as before, and nothing is said.
"""

from __future__ import annotations

import hashlib
import io
import json
from typing import Any

import numpy as np

from ..words import json_default
from .chunkfiles import LAYOUT_ATTR
from .identity import read_attrs
from .layout import JOURNAL
from .storage import open_storage
from .metadata import simulated_variables

__all__ = ["SUMMARY", "P_VALUES", "summary_key", "read_summary", "keep_summary"]

SUMMARY = ".boardsweep/summary.json"
P_VALUES = ".boardsweep/summary-p.npy"


def summary_key(url: str, depends: str) -> str | None:
    """The key of the store's kept summary (module docstring), ``None``
    where the store is not packed whole; ``depends``: what else the summary
    depends on (the analysis's scheme and version)."""
    try:
        attrs = read_attrs(url, check=False)
    except (OSError, ValueError, KeyError):
        return None
    try:
        arrays = json.loads(attrs[LAYOUT_ATTR])["arrays"]
    except (KeyError, TypeError, ValueError):
        return None
    names = [*simulated_variables(attrs), "done", *attrs.get("exact_variables", []), "exact_done"]
    if not all(isinstance(arrays.get(n), dict) and arrays[n].get("state") == "packed" for n in names):
        return None
    if open_storage(url).read(JOURNAL) is not None:  # a change of layout under way
        return None
    described = {k: v for k, v in attrs.items() if k != "history"}
    text = json.dumps([depends, described], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def read_summary(url: str, key: str) -> tuple[dict[str, Any], np.ndarray] | None:
    """(the kept summary, its p-values) where kept under ``key``, else ``None``."""
    files = open_storage(url)
    kept = files.json(SUMMARY)
    if not kept or kept.get("key") != key:
        return None
    raw = files.read(P_VALUES)
    if raw is None:
        return None
    try:
        p = np.load(io.BytesIO(raw), allow_pickle=False)
    except (OSError, ValueError):
        return None
    if p.shape != (kept.get("p_values"),) or kept.get("p_key") != _digest(p):
        return None
    return kept["summary"], p


def keep_summary(url: str, key: str, summary: dict[str, Any], p: np.ndarray) -> bool:
    """Keep ``summary`` (plain JSON: numbers, text, lists, dicts) and the
    p-values ``p`` in the store under ``key``; False where it cannot be written."""
    buffer = io.BytesIO()
    p = np.ascontiguousarray(p, dtype=np.float64)
    np.save(buffer, p, allow_pickle=False)
    record = {"key": key, "p_values": int(p.size), "p_key": _digest(p), "summary": summary}
    text = json.dumps(record, default=json_default, allow_nan=True).encode()
    try:
        _write(url, P_VALUES, buffer.getvalue())
        _write(url, SUMMARY, text)  # last: the record names the p-values it goes with
    except OSError:
        return False
    return True


def _digest(p: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(p, dtype=np.float64).tobytes()).hexdigest()


def _write(url: str, rel: str, data: bytes) -> None:
    """Write one file of the store whole (a reader sees the old file or the new one)."""
    open_storage(url).write(rel, data)
