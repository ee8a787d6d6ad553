"""What ``status`` prints: done and total replicates and the exact answer per grid point
(a digest for a large grid), and the precision target's line."""

from __future__ import annotations

import json

from rich.console import Console

from ..words import fmt_stderr
from .terminal import console, print_records


#: Grid points above which ``status`` prints a digest, not one row per point.
SUMMARY_POINTS = 24
#: A digest lists at most SUMMARY_FIRST + SUMMARY_WORST points not finished.
SUMMARY_FIRST = 5
SUMMARY_WORST = 5


def print_status(ds, fmt: str, damage=None, damaged_text: str = "") -> None:
    """Done/total replicates and the exact state per grid point: ``stored``,
    ``none`` (no single exact answer exists; ``exact_note`` says why) or
    ``pending`` (not computed yet), as :func:`boardsweep.pipeline.analysis.status_marks`
    counts them (a cell done only when its flag is set and its data intact:
    ``damage`` excluded)."""
    from ..analysis import grid_digest, none_notes, precision_entries, status_entries, status_marks

    marks = status_marks(ds, damage)
    total_done, total = marks.done_total, marks.cells
    precise = "precision_state" in ds
    out = None if fmt == "json" else console()
    title = f"sweep {ds.attrs.get('sweep')}: {total_done}/{total} replicates done"
    if precise or fmt == "json" or marks.per_point.size <= SUMMARY_POINTS:  # every entry, one dict per point
        entries = status_entries(ds, marks, range(marks.per_point.size))
        if precision_entries(ds, entries, marks.done):
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
        counts, listed = grid_digest(marks, SUMMARY_FIRST + SUMMARY_WORST)
        title = _digest_lines(out, title, counts)
        shown = status_entries(ds, marks, listed)
        notes = none_notes(marks)
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


def _status_digest(out: Console, title: str, entries: list[dict]) -> tuple[str, list[dict]]:
    """Counts of points by state for a large grid; returns the table's title
    and the points to list: those not finished (at most SUMMARY_FIRST + SUMMARY_WORST)."""
    from ..analysis import entries_digest

    counts, shown = entries_digest(entries, SUMMARY_FIRST + SUMMARY_WORST)
    return _digest_lines(out, title, counts), shown


def _digest_lines(out: Console, title: str, counts: dict[str, int]) -> str:
    """A large grid's digest (:func:`boardsweep.pipeline.analysis.entries_digest`'s
    ``counts``) in two lines; returns the title of the table of points not finished."""
    out.print(f"{title}; {counts['points']} grid points: {counts['finished']} finished, {counts['started']} partly "
              f"done, {counts['not_started']} not started; exact answers: {counts['stored']} stored, "
              f"{counts['none']} none exists, {counts['pending']} not yet")
    limit = SUMMARY_FIRST + SUMMARY_WORST
    more = f" (the first {limit} of {counts['unfinished']})" if counts["unfinished"] > limit else ""
    out.print("every point: `--format json`", soft_wrap=True)
    return f"grid points not finished{more}"
