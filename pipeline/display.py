"""What the sweep commands print: progress bar, run summary, query rows, status."""

from __future__ import annotations

import csv
import json
import sys
import time
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from boardsweep.pipeline.execute import RunReport
from boardsweep.pipeline.spec import Spec

__all__ = ["console", "announce", "TaskBar", "run_summary", "open_store", "select",
           "pick_variable", "print_rows", "print_status"]


def console() -> Console:
    return Console(highlight=False)


def announce(out: Console, spec: Spec, url: str) -> None:
    points = int(np.prod(spec.shape)) if spec.shape else 1
    blocks = -(-spec.replicates // spec.block)
    out.print(
        f"sweep [bold]{spec.name}[/bold] ({spec.game_name}): {points} grid points x "
        f"{spec.replicates} replicates = {points * blocks} tasks of {spec.block} replicates, plus {points} exact -> {url}"
    )


class TaskBar:
    """A rich progress bar fed by ``run_sweep``'s callbacks."""

    def __init__(self, out: Console) -> None:
        self.out = out
        self.progress = Progress(
            TextColumn("tasks"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=out,
            transient=False,
        )
        self.task = None
        self.t0 = time.perf_counter()

    def __enter__(self) -> "TaskBar":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.task is not None:
            self.progress.stop()

    def start(self, report: RunReport) -> None:
        where = report.dashboard or "(no dashboard)"
        self.out.print(f"dashboard: {where}  workers: {report.workers}  tasks to run: {report.pending}")
        self.progress.start()
        self.task = self.progress.add_task("tasks", total=report.pending, rate="")
        self.t0 = time.perf_counter()

    def update(self, done: int, total: int) -> None:
        if self.task is None:
            self.task = self.progress.add_task("tasks", total=total, rate="")
        rate = done / max(time.perf_counter() - self.t0, 1e-9)
        self.progress.update(self.task, completed=done, rate=f"{rate:.2f} tasks/s")


def run_summary(out: Console, report: RunReport) -> None:
    """Top locations per grid point with exact values, then timings."""
    from boardsweep.pipeline.query import open_sweep

    ds = open_sweep(report.store)
    _summary_tables(out, ds)
    done = ds["done"].values
    state = "complete" if report.complete else f"INCOMPLETE ({int(done.sum())}/{done.size} replicates done)"
    overhead = report.wall_s - report.kernel_s / max(report.workers, 1)
    out.print(
        f"{report.tasks_run} tasks run ({report.exact_run} exact), store {state}: {report.store}\n"
        f"wall {report.wall_s:.1f} s, kernel {report.kernel_s:.1f} s summed over "
        f"{report.workers or 0} workers, writes {report.write_s:.2f} s, "
        f"overhead ~ {max(overhead, 0):.1f} s"
    )


def _summary_tables(out: Console, ds, k: int = 3) -> None:
    from boardsweep.pipeline.query import distribution_variables, exact_frequencies, rows

    found = distribution_variables(ds)
    shown = [v for v in found if exact_frequencies(ds, v) is not None] or list(found)[:1]
    for variable in shown:
        dim = found[variable]
        table = Table(title=f"{variable}: top {k} {dim}s per grid point, estimate (exact)")
        axes = list(ds.attrs.get("grid_axes", []))
        for axis in axes:
            table.add_column(axis)
        for rank in range(1, k + 1):
            table.add_column(f"#{rank}", justify="right")
        table.add_column("reps", justify="right")
        grouped: dict[tuple, list[dict]] = {}
        for row in rows(ds, variable, top=k):
            grouped.setdefault(tuple(row[a] for a in axes), []).append(row)
        for point, entries in grouped.items():
            cells = [f"{e[dim]} {_fmt(e['estimate'])} ({_fmt(e['exact'])})" for e in entries]
            table.add_row(*map(str, point), *cells, str(entries[0]["replicates"]))
        out.print(table)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def open_store(url: str, error: type[Exception]):
    from boardsweep.pipeline.query import open_sweep
    from boardsweep.pipeline.store import store_exists

    if not store_exists(url):
        raise error(f"store {url}: no sweep store there")
    ds = open_sweep(url)
    if "spec_canonical" not in ds.attrs:
        raise error(f"store {url}: not a boardsweep sweep store")
    return ds


def select(ds, sels: tuple[str, ...], error: type[Exception]):
    """Apply ``--sel axis=value`` options (values parsed as the axis's type)."""
    axes = list(ds.attrs.get("grid_axes", []))
    for item in sels:
        if "=" not in item:
            raise error(f"--sel {item!r}: expected AXIS=VALUE")
        axis, text = (x.strip() for x in item.split("=", 1))
        if axis not in axes:
            raise error(f"--sel {item!r}: no grid axis {axis!r}; axes: {', '.join(axes) or '(none)'}")
        values = [v.item() if isinstance(v, np.generic) else v for v in ds[axis].values]
        match = [v for v in values if str(v) == text]
        if not match:
            raise error(f"--sel {item!r}: {text!r} is not on axis {axis!r}; values: {', '.join(map(str, values))}")
        ds = ds.sel({axis: [match[0]]})
    return ds


def pick_variable(ds, variable: str | None, error: type[Exception]) -> str:
    from boardsweep.pipeline.query import distribution_variables

    found = distribution_variables(ds)
    if variable is None and found:
        return next(iter(found))
    if variable not in found:
        raise error(f"--variable {variable!r}: expected one of {', '.join(found) or '(none)'}")
    return variable


def print_rows(ds, variable: str, top: int | None, fmt: str) -> None:
    from boardsweep.pipeline.query import rows

    if fmt == "table" and top is None:
        top = 5
    found = rows(ds, variable, top=top)
    if fmt == "json":
        print(json.dumps(found, indent=2))
    elif fmt == "csv":
        writer = csv.DictWriter(sys.stdout, fieldnames=list(found[0]) if found else [])
        writer.writeheader()
        writer.writerows(found)
    else:
        table = Table(title=f"{variable} frequencies at the last checkpoint")
        for column in (found[0] if found else {}):
            table.add_column(column, justify="right")
        for row in found:
            table.add_row(*(_cell(v) for v in row.values()))
        console().print(table)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.6f}" if isinstance(value, float) else str(value)


def print_status(ds, fmt: str) -> None:
    """Done/total replicates and the exact state per grid point: ``stored``,
    ``none`` (no single exact answer exists; ``exact_note`` says why) or
    ``pending`` (not computed yet)."""
    from boardsweep.pipeline.metadata import exact_state
    from boardsweep.pipeline.query import grid_points

    axes = list(ds.attrs.get("grid_axes", []))
    done = ds["done"].load()
    marks = ds[[v for v in ("exact_done", "exact_exists", "exact_note", *ds.attrs.get("exact_variables", []))
                if v in ds]].load()
    entries = []
    for point in grid_points(ds):
        cell = done.sel(point) if point else done
        state, text = exact_state(marks, point)
        entries.append({**point, "done": int(cell.sum()), "total": int(cell.size),
                        "exact": state, "exact_note": text})
    total_done, total = int(done.sum()), int(done.size)
    if fmt == "json":
        print(json.dumps({"store_sweep": ds.attrs.get("sweep"), "done": total_done,
                          "total": total, "points": entries}, indent=2))
        return
    table = Table(title=f"sweep {ds.attrs.get('sweep')}: {total_done}/{total} replicates done")
    for column in [*axes, "done/total", "exact"]:
        table.add_column(column, justify="right")
    for e in entries:
        table.add_row(*(str(e[a]) for a in axes), f"{e['done']}/{e['total']}", _EXACT_WORD[e["exact"]])
    out = console()
    out.print(table)
    notes = sorted({e["exact_note"] for e in entries if e["exact"] == "none"})
    for note in notes:
        out.print(f"exact 'none': {note}")


_EXACT_WORD = {"stored": "yes", "none": "none exists", "pending": "not yet"}
