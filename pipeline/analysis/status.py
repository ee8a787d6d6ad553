"""What ``status`` counts: done replicates and the exact state per grid point,
and the digest of a large grid (points finished, partly done, not started;
exact answers by state).  Counted here; :mod:`boardsweep.pipeline.views.status` words them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["StatusMarks", "status_marks", "status_entries", "precision_entries", "entries_digest", "grid_digest",
           "none_notes"]


@dataclass
class StatusMarks:
    """A store's status, flat in grid order: ``done`` (points x replicates,
    bool: flag set and data intact), ``per_point`` (done replicates a point),
    ``code`` (exact state a point, an index into ``EXACT_CODES``), ``noted``
    ({flat index: why no single exact answer exists}), ``replicates``."""

    done: np.ndarray
    per_point: np.ndarray
    code: np.ndarray
    noted: dict[int, str]
    replicates: int

    @property
    def done_total(self) -> int:
        """Cells done, of :attr:`cells`: sum over points and replicates of ``done``."""
        return int(np.count_nonzero(self.done))

    @property
    def cells(self) -> int:
        """Grid points x replicates."""
        return int(self.done.size)


def status_marks(ds: Any, damage: Any = None) -> StatusMarks:
    """The done replicates and exact state of every grid point of ``ds``:
    a cell counts as done only when its flag is set and its data intact
    (``damage``, the store's check, excluded; its masks reused)."""
    from dask.threaded import get as threads

    from ..store import exact_codes

    axes = list(ds.attrs.get("grid_axes", []))
    read = damage is not None and damage.done is not None
    names = ["exact_exists", "exact_note"] if "exact_exists" in ds else ds.attrs.get("exact_variables", [])
    marks = ds[[n for n in (*names, *(() if read else ("exact_done",))) if n in ds and n != "exact_note"]].load(
        scheduler=threads)  # threads: dask looking for a distributed client imports distributed (0.15 s)
    if "exact_note" in names and "exact_note" in ds:  # read by exact_codes only where an answer is missing
        marks["exact_note"] = ds["exact_note"]
    if read:
        done, exact_done = damage.intact(int(ds.attrs.get("replicates_per_task", 1)))
        marks["exact_done"] = (axes, exact_done)
    else:  # older stores (no checksums): the flags are all there is
        done = ds["done"].transpose(*axes, "replicate").values.astype(bool)
    code, noted_at, notes = exact_codes(marks)  # one byte a point: no Python string per point
    return StatusMarks(done, done.sum(-1).ravel(), code.ravel(), dict(zip(noted_at.tolist(), notes.tolist())),
                       int(done.shape[-1]))


def status_entries(ds: Any, marks: StatusMarks, indices) -> list[dict]:
    """The status entries of the grid points at flat ``indices`` (grid order;
    a ``range`` over the grid: every point): {axis: value, done, total, exact, exact_note}."""
    from ..store import EXACT_CODES, exact_state_text
    from .dataset import grid_points, grid_points_at

    if not len(indices):
        return []
    axes = list(ds.attrs.get("grid_axes", []))
    points = list(grid_points(ds)) if not axes or isinstance(indices, range) else grid_points_at(ds, list(indices))
    states = [EXACT_CODES[c] for c in marks.code[list(indices)].tolist()]
    return [{**point, "done": int(marks.per_point[i]), "total": marks.replicates, "exact": state,
             "exact_note": exact_state_text(state, marks.noted.get(i, ""))}
            for i, state, point in zip(indices, states, points)]


def precision_entries(ds: Any, entries: list[dict], done: np.ndarray) -> bool:
    """With a precision target, give each status entry its replicates used
    (as ``total``: done ones counted within them), the standard error
    reached and the rule's state; return whether the store has a target."""
    from .work import precision_columns

    columns = precision_columns(ds)
    if columns is None:
        return False
    flat = done.reshape(len(entries), -1)
    for entry, col, row in zip(entries, columns, flat):
        used = col["replicates_used"]
        entry.update(col, done=int(row[:used].sum()), total=used)
    return True


def entries_digest(entries: list[dict], limit: int) -> tuple[dict[str, int], list[dict]]:
    """The digest of a grid's ``entries``: ({points, finished, started (partly
    done), not_started, stored, none, pending, unfinished: counts}, the first
    ``limit`` entries not finished)."""
    from ..plan import answer_counts

    full = sum(e["done"] == e["total"] for e in entries)
    started = sum(0 < e["done"] < e["total"] for e in entries)
    unfinished = [e for e in entries if e["done"] < e["total"] or e["exact"] == "pending"]
    counts = {"points": len(entries), "finished": full, "started": started,
              "not_started": len(entries) - full - started, **answer_counts([e["exact"] for e in entries]),
              "unfinished": len(unfinished)}
    return counts, unfinished[:limit]


def grid_digest(marks: StatusMarks, limit: int) -> tuple[dict[str, int], list[int]]:
    """:func:`entries_digest` counted in numpy over the flat per-point arrays:
    (the counts, the flat indices of the first ``limit`` points not finished)."""
    from ..store import EXACT_CODES

    per_point, code, replicates = marks.per_point, marks.code, marks.replicates
    full = int(np.count_nonzero(per_point == replicates))  # count_nonzero: 10x a bool sum or a bincount
    started = int(np.count_nonzero(per_point)) - full
    exact = {state: int(np.count_nonzero(code == k)) for k, state in enumerate(EXACT_CODES)}
    unfinished = np.flatnonzero((per_point < replicates) | (code == EXACT_CODES.index("pending"))) if (
        full < per_point.size or exact["pending"]) else np.zeros(0, dtype=np.int64)  # a finished grid: none
    counts = {"points": int(per_point.size), "finished": full, "started": started,
              "not_started": int(per_point.size) - full - started, **exact, "unfinished": len(unfinished)}
    return counts, unfinished[:limit].tolist()


def none_notes(marks: StatusMarks) -> set[str]:
    """Why no single exact answer exists, in words, for the points of a grid where none does."""
    from ..store import EXACT_CODES, exact_state_text

    none = int(np.count_nonzero(marks.code == EXACT_CODES.index("none")))
    return {exact_state_text("none", n) for n in marks.noted.values()} | (
        {exact_state_text("none")} if none > len(marks.noted) else set())
