"""What ``status`` prints: done and total replicates and the exact answer per grid point
(a digest for a large grid), and the precision target's line."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from rich.console import Console

from ..plan import answer_counts
from ..words import count, fmt_stderr, python_value
from .terminal import console, print_records


#: Grid points above which ``status`` prints a digest, not one row per point.
SUMMARY_POINTS = 24
#: A digest lists at most SUMMARY_FIRST + SUMMARY_WORST points not finished.
SUMMARY_FIRST = 5
SUMMARY_WORST = 5


def print_precision(out: Console, ds) -> None:
    """One line on a precision target: how many grid points met it, were
    capped or still run (per point: ``boardsweep status``)."""
    from ..plan import point_columns

    columns = point_columns(ds)
    if columns is None:
        return
    states = {k: sum(c["precision"] == k for c in columns) for k in ("met", "capped", "running")}
    reached = [c["stderr_reached"] for c in columns if c["stderr_reached"] is not None]
    largest = f"; largest s.e. reached {max(reached):.2g}" if reached else ""
    out.print(f"precision target s.e. <= {ds.attrs.get('precision_stderr'):g} (at most "
              f"{ds.attrs.get('max_replicates')} replicates): {states['met']} of {count(len(columns), 'grid point')} "
              f"met, {states['capped']} capped, {states['running']} running{largest} (per point: "
              "`boardsweep status`)", soft_wrap=True)


def print_status(ds, fmt: str, damage=None, damaged_text: str = "") -> None:
    """Done/total replicates and the exact state per grid point: ``stored``,
    ``none`` (no single exact answer exists; ``exact_note`` says why) or
    ``pending`` (not computed yet).  A cell counts as done only when its flag
    is set and its data intact (``damage`` excluded; its masks, read by the
    check, are reused)."""
    from dask.threaded import get as threads

    from ..store import EXACT_CODES, exact_codes, exact_state_text

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
    per_point, code, noted = done.sum(-1).ravel(), code.ravel(), dict(zip(noted_at.tolist(), notes.tolist()))
    replicates = int(done.shape[-1])

    def entries_at(indices) -> list[dict]:
        """The status entries of the grid points at flat ``indices`` (grid order)."""
        states = [EXACT_CODES[c] for c in code[list(indices)].tolist()]
        return [{**point, "done": int(per_point[i]), "total": replicates, "exact": state,
                 "exact_note": exact_state_text(state, noted.get(i, ""))}
                for i, state, point in zip(indices, states, _points_at(ds, axes, indices))]

    total_done, total = int(np.count_nonzero(done)), int(done.size)
    precise = "precision_state" in ds
    out = None if fmt == "json" else console()
    title = f"sweep {ds.attrs.get('sweep')}: {total_done}/{total} replicates done"
    if precise or fmt == "json" or per_point.size <= SUMMARY_POINTS:  # every entry, one dict per point
        entries = entries_at(range(per_point.size))
        if _precision_entries(ds, entries, done):
            total_done, total = sum(e["done"] for e in entries), sum(e["total"] for e in entries)
            title = f"sweep {ds.attrs.get('sweep')}: {total_done}/{total} replicates done"
        if fmt == "json":
            print(json.dumps({"store_sweep": ds.attrs.get("sweep"), "done": total_done, "total": total,
                              "damaged": damaged_text or None, "points": entries}, indent=2))
            return
        shown = entries
        if len(entries) > SUMMARY_POINTS:  # a screen, not hundreds of rows
            title, shown = _status_digest(out, title, entries)
        notes = {e["exact_note"] for e in entries if e["exact"] == "none"}
    else:  # a large grid without a precision target: counted in numpy, entries made for the points shown
        title, shown = _grid_digest(out, title, per_point, replicates, code, entries_at)
        none = int(np.count_nonzero(code == EXACT_CODES.index("none")))
        notes = {exact_state_text("none", n) for n in noted.values()} | (
            {exact_state_text("none")} if none > len(noted) else set())
    _print_points(out, ds, title, shown, precise)
    for note in sorted(notes):
        out.print(f"exact 'none': {note}")
    if damaged_text:
        out.print(f"damaged (done but data missing or altered): {damaged_text}")


def _print_points(out: Console, ds, title: str, shown: list[dict], precise: bool) -> None:
    """The status table of the entries ``shown``, with its legend (with a
    precision target: the standard error reached and the rule's state)."""
    axes = list(ds.attrs.get("grid_axes", []))
    records = [{**{a: str(e[a]) for a in axes}, "done/total": f"{e['done']}/{e['total']}",
                **({"stderr": fmt_stderr(e["stderr_reached"]), "precision": _PRECISION_WORD[e["precision"]]}
                   if precise else {}),
                "exact": EXACT_WORD[e["exact"]]} for e in shown]
    if records:
        print_records(out, title, records, axes, right={"done/total", "stderr"},
                      caption="done/total: finished replicates with intact data"
                              + (", out of those the precision rule uses; stderr: the largest standard error "
                                 f"reached (target {ds.attrs.get('precision_stderr'):g}); precision: met, "
                                 "CAPPED = max_replicates reached first, running = more replicates to come"
                                 if precise else "")
                              + "; exact: yes = exact answer stored, none exists = no single exact "
                                "answer, not yet = not computed")


EXACT_WORD = {"stored": "yes", "none": "none exists", "pending": "not yet"}


_PRECISION_WORD = {"met": "met", "capped": "CAPPED", "running": "running"}


def _precision_entries(ds, entries: list[dict], done) -> bool:
    """With a precision target, give each status entry its replicates used
    (as ``total``: done ones counted within them), the standard error
    reached and the rule's state; return whether the store has a target."""
    from ..plan import point_columns

    columns = point_columns(ds)
    if columns is None:
        return False
    flat = done.reshape(len(entries), -1)
    for entry, col, row in zip(entries, columns, flat):
        used = col["replicates_used"]
        entry.update(col, done=int(row[:used].sum()), total=used)
    return True


def _status_digest(out: Console, title: str, entries: list[dict]) -> tuple[str, list[dict]]:
    """Counts of points by state for a large grid; returns the table's title
    and the points to list: those not finished (at most SUMMARY_FIRST + SUMMARY_WORST)."""
    full = sum(e["done"] == e["total"] for e in entries)
    started = sum(0 < e["done"] < e["total"] for e in entries)
    exact = answer_counts([e["exact"] for e in entries])
    out.print(f"{title}; {len(entries)} grid points: {full} finished, {started} partly done, "
              f"{len(entries) - full - started} not started; exact answers: {exact['stored']} stored, "
              f"{exact['none']} none exists, {exact['pending']} not yet")
    unfinished = [e for e in entries if e["done"] < e["total"] or e["exact"] == "pending"]
    limit = SUMMARY_FIRST + SUMMARY_WORST
    more = f" (the first {limit} of {len(unfinished)})" if len(unfinished) > limit else ""
    out.print("every point: `--format json`", soft_wrap=True)
    return f"grid points not finished{more}", unfinished[:limit]


def _grid_digest(out: Console, title: str, per_point: np.ndarray, replicates: int, code: np.ndarray,
                 entries_at) -> tuple[str, list[dict]]:
    """:func:`_status_digest` counted in numpy over flat per-point arrays (done
    replicates, exact states by code, :func:`~boardsweep.pipeline.store.metadata.exact_codes`);
    ``entries_at(indices)`` makes the entries listed."""
    from ..store import EXACT_CODES

    full = int(np.count_nonzero(per_point == replicates))  # count_nonzero: 10x a bool sum or a bincount
    started = int(np.count_nonzero(per_point)) - full
    exact = {state: int(np.count_nonzero(code == k)) for k, state in enumerate(EXACT_CODES)}
    out.print(f"{title}; {per_point.size} grid points: {full} finished, {started} partly done, "
              f"{per_point.size - full - started} not started; exact answers: {exact['stored']} stored, "
              f"{exact['none']} none exists, {exact['pending']} not yet")
    unfinished = np.flatnonzero((per_point < replicates) | (code == EXACT_CODES.index("pending"))) if (
        full < per_point.size or exact["pending"]) else np.zeros(0, dtype=np.int64)  # a finished grid: none
    limit = SUMMARY_FIRST + SUMMARY_WORST
    more = f" (the first {limit} of {len(unfinished)})" if len(unfinished) > limit else ""
    out.print("every point: `--format json`", soft_wrap=True)
    return f"grid points not finished{more}", entries_at(unfinished[:limit].tolist())


def _points_at(ds, axes: list[str], indices) -> list[dict[str, Any]]:
    """The grid points at flat ``indices`` (grid order; a ``range`` over the
    whole grid: every point) as {axis: value}."""
    from ..analysis import grid_points

    if not len(indices):
        return []
    if not axes or isinstance(indices, range):
        return list(grid_points(ds))
    shape = [ds.sizes[a] for a in axes]
    coords = np.unravel_index(np.asarray(indices, dtype=np.int64), shape)
    values = [ds[a].values for a in axes]
    return [{a: python_value(v[i]) for a, v, i in zip(axes, values, point)} for point in zip(*coords)]
