"""What the commands print: games, progress bar, run summary, query rows, status.

Tables fit the console (80 columns when output is piped): a table too wide
for it is printed as one narrower table per grid point, never with headers
or numbers cut short.  Standard errors have two significant digits
(``3.4e-05``); a legend under each table says what its cells mean.
"""

from __future__ import annotations

import csv
import json
import sys
import textwrap
import time
from typing import Any

import click
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

__all__ = ["console", "set_verbosity", "info", "announce", "TaskBar", "run_summary", "open_store",
           "select", "pick_variable", "print_rows", "print_status", "print_games", "print_game",
           "print_records", "fmt_value", "fmt_stderr"]

#: -1 quiet (results and errors only), 0 normal, 1+ verbose.
_VERBOSITY = 0

#: What ``-`` means in every table.
NO_EXACT = "'-': no exact value for this grid point"


def set_verbosity(level: int) -> None:
    """Set how much the commands print (-1 quiet, 0 normal, >= 1 verbose)."""
    global _VERBOSITY
    _VERBOSITY = level


def console() -> Console:
    return Console(highlight=False)


def info(out: Console, text: str) -> None:
    """Print an informational line (not under -q)."""
    if _VERBOSITY >= 0:
        out.print(text)


def announce(out: Console, spec: Spec, url: str, scheduler: str | None = None) -> None:
    points = int(np.prod(spec.shape)) if spec.shape else 1
    blocks = -(-spec.replicates // spec.block)
    where = f"Dask scheduler {scheduler}" if scheduler else "a local Dask cluster"
    info(out,
         f"sweep [bold]{spec.name}[/bold] ({spec.game_name}): {points} grid points x "
         f"{spec.replicates} replicates = {points * blocks} tasks of {spec.block} replicates, "
         f"plus {points} exact -> {url} on {where}")


def fmt_value(x: float | None) -> str:
    """An estimate or exact value: 6 significant digits, '-' for none."""
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.6g}"


def fmt_stderr(x: float | None) -> str:
    """A standard error: two significant digits in exponent form (3.4e-05)."""
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.1e}"


def _width(records: list[dict[str, str]], columns: list[str]) -> int:
    """Width of a rich table of these columns, borders and padding included."""
    return 1 + sum(3 + max([len(c), *(len(r[c]) for r in records)]) for c in columns)


def _table(title: str | None, columns: list[str], records: list[dict[str, str]],
           right: set[str]) -> Table:
    table = Table(title=title)
    for c in columns:
        table.add_column(c, justify="right" if c in right else "left", no_wrap=True,
                         min_width=max([len(c), *(len(r[c]) for r in records)]))
    for r in records:
        table.add_row(*(r[c] for c in columns))
    return table


def print_records(out: Console, title: str, records: list[dict[str, str]], group_by: list[str],
                  caption: str | None = None, right: set[str] | None = None) -> None:
    """Print ``records`` (rows of strings) as one table if it fits the console,
    else one table per value of the ``group_by`` columns under a heading line,
    else as ``column: value`` lines; full headers and values in every case."""
    columns = list(records[0]) if records else [*group_by]
    right = right or set()
    if _width(records, columns) <= out.width or not group_by:
        if _width(records, columns) <= out.width:
            out.print(_table(title, columns, records, right))
            if caption:
                out.print(caption, markup=False)
            return
    rest = [c for c in columns if c not in group_by]
    groups: dict[tuple, list[dict[str, str]]] = {}
    for r in records:
        groups.setdefault(tuple(r[c] for c in group_by), []).append(r)
    out.print(f"[bold]{title}[/bold]")
    for key, rows in groups.items():
        out.print(", ".join(f"{c}={v}" for c, v in zip(group_by, key)))
        if rest and _width(rows, rest) <= out.width:
            out.print(_table(None, rest, rows, right))
        else:
            for r in rows:
                out.print("  " + "  ".join(f"{c}: {r[c]}" for c in rest))
    if caption:
        out.print(caption, markup=False)


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
            disable=_VERBOSITY < 0,
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
        info(self.out, f"dashboard: {where}  workers: {report.workers}  tasks to run: {report.pending}")
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

    ds = open_sweep(report.store, check=False)  # the run has just checked and written it
    for line in report.repaired:
        out.print(f"repaired: {line}")
    if _VERBOSITY >= 0:
        _summary_tables(out, ds)
    done = ds["done"].values
    state = "complete" if report.complete else f"INCOMPLETE ({int(done.sum())}/{done.size} replicates done)"
    overhead = report.wall_s - report.kernel_s / max(report.workers, 1)
    out.print(f"{report.tasks_run} tasks run ({report.exact_run} exact), store {state}: {report.store}",
              soft_wrap=True)  # a path stays on one line
    info(out,
         f"wall {report.wall_s:.1f} s, kernel {report.kernel_s:.1f} s summed over "
         f"{report.workers or 0} workers, writes {report.write_s:.2f} s, "
         f"overhead ~ {max(overhead, 0):.1f} s")


def _summary_tables(out: Console, ds, k: int = 3) -> None:
    from boardsweep.pipeline.query import distribution_variables, exact_frequencies, rows

    found = distribution_variables(ds)
    shown = [v for v in found if exact_frequencies(ds, v) is not None] or list(found)[:1]
    axes = list(ds.attrs.get("grid_axes", []))
    for variable in shown:
        dim = found[variable]
        grouped: dict[tuple, list[dict]] = {}
        for row in rows(ds, variable, top=k):
            grouped.setdefault(tuple(row[a] for a in axes), []).append(row)
        records = []
        for point, entries in grouped.items():
            record = {a: str(v) for a, v in zip(axes, point)}
            for rank, e in enumerate(entries, 1):
                record[f"#{rank}"] = f"{e[dim]} {_fmt(e['estimate'])} ({_fmt(e['exact'])})"
            record["reps"] = str(entries[0]["replicates"])
            records.append(record)
        for record in records:
            for rank in range(1, k + 1):
                record.setdefault(f"#{rank}", "")
            record["reps"] = record.pop("reps")
        print_records(
            out, f"{variable}: top {k} {dim}s per grid point (most frequent first)", records, axes,
            caption=f"#n: {dim} label, mean frequency over replicates (exact frequency; {NO_EXACT}); "
                    "reps: finished replicates",
            right={f"#{r}" for r in range(1, k + 1)} | {"reps"},
        )


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def require_store(url: str, error: type[Exception]) -> None:
    """Raise ``error`` unless a boardsweep store is at ``url``."""
    from boardsweep.pipeline.store import inspect

    kind = inspect(url)
    if kind in ("absent", "empty"):
        raise error(f"store {url}: no sweep store there")
    if kind != "boardsweep":
        raise error(f"store {url}: not a boardsweep sweep store")


def open_store(url: str, error: type[Exception], check: bool = True):
    """The store's Dataset, or ``error`` in one line: no store, not ours, damaged."""
    from boardsweep.pipeline.integrity import StoreDamaged
    from boardsweep.pipeline.query import open_sweep

    require_store(url, error)
    try:
        return open_sweep(url, check=check)
    except StoreDamaged as exc:
        raise error(str(exc)) from None


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
        axes = list(ds.attrs.get("grid_axes", []))
        records = [{k: (fmt_stderr(v) if k == "stderr" else _cell(v)) for k, v in row.items()}
                   for row in found]
        print_records(
            console(), f"{variable} frequencies at the last checkpoint", records, axes,
            caption="estimate: mean over replicates of each replicate's frequency; "
                    f"stderr: its standard error; exact: the exact frequency ({NO_EXACT}); "
                    "replicates: finished replicates",
            right={"estimate", "stderr", "exact", "replicates"},
        )


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return fmt_value(value) if isinstance(value, float) else str(value)


def print_status(ds, fmt: str, damage=None, damaged_text: str = "") -> None:
    """Done/total replicates and the exact state per grid point: ``stored``,
    ``none`` (no single exact answer exists; ``exact_note`` says why) or
    ``pending`` (not computed yet).  A cell counts as done only when its flag
    is set and its data intact (``damage`` excluded)."""
    from boardsweep.pipeline.metadata import exact_state
    from boardsweep.pipeline.query import grid_points

    axes = list(ds.attrs.get("grid_axes", []))
    done = ds["done"].load().copy()
    marks = ds[[v for v in ("exact_done", "exact_exists", "exact_note", *ds.attrs.get("exact_variables", []))
                if v in ds]].load().copy(deep=True)
    if damage:
        block = int(ds.attrs.get("replicates_per_task", 1))
        for index, start in damage.sim:
            done.values[index + (slice(start, start + block),)] = False
        for index in damage.exact:
            marks["exact_done"].values[index] = False
    entries = []
    for point in grid_points(ds):
        cell = done.sel(point) if point else done
        state, text = exact_state(marks, point)
        entries.append({**point, "done": int(cell.sum()), "total": int(cell.size),
                        "exact": state, "exact_note": text})
    total_done, total = int(done.sum()), int(done.size)
    if fmt == "json":
        print(json.dumps({"store_sweep": ds.attrs.get("sweep"), "done": total_done, "total": total,
                          "damaged": damaged_text or None, "points": entries}, indent=2))
        return
    records = [{**{a: str(e[a]) for a in axes}, "done/total": f"{e['done']}/{e['total']}",
                "exact": _EXACT_WORD[e["exact"]]} for e in entries]
    out = console()
    print_records(out, f"sweep {ds.attrs.get('sweep')}: {total_done}/{total} replicates done",
                  records, axes, right={"done/total"},
                  caption="done/total: finished replicates with intact data; exact: yes = exact answer "
                          "stored, none exists = no single exact answer, not yet = not computed")
    for note in sorted({e["exact_note"] for e in entries if e["exact"] == "none"}):
        out.print(f"exact 'none': {note}")
    if damaged_text:
        out.print(f"damaged (done but data missing or altered): {damaged_text}")


_EXACT_WORD = {"stored": "yes", "none": "none exists", "pending": "not yet"}


def print_games(fmt: str) -> None:
    """The installed games: name, distribution, exact answer, description."""
    from boardsweep.core.games import game_names, game_source, get_game

    found = []
    for name in game_names():
        game = get_game(name)
        found.append({"name": name, "distribution": game_source(name)[1],
                      "exact": "yes" if game.has_exact else "no", "description": game.description})
    if fmt == "json":
        print(json.dumps(found, indent=2))
        return
    for g in found:
        click.echo(f"{g['name']}  (from {g['distribution']}; exact answer: {g['exact']})")
        click.echo(_wrap(g["description"], "    "))
    if _VERBOSITY >= 0:
        click.echo("\n`boardsweep games NAME` lists a game's parameters and outputs.")


def _wrap(text: str, indent: str, hang: str = "") -> str:
    """``text`` wrapped to the console width; continuation lines get ``hang`` more."""
    width = max(console().width, 40)
    return textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent + hang,
                         break_on_hyphens=False)


def print_game(game, fmt: str) -> None:
    """One game: parameters (type, allowed values, default), run shape, outputs."""
    from boardsweep.core.games import game_source

    described = {
        "name": game.name,
        "distribution": game_source(game.name)[1],
        "description": game.description,
        "exact": game.has_exact,
        "parameters": [{"name": p.name, "type": p.kind.__name__, "allowed": p.allowed(),
                        "default": p.default, "help": p.help} for p in game.params],
        "run_shape": {"entries": dict(game.run_shape), "checkpoints_count": game.checkpoint_of},
        "variables": {n: {"dims": list(v.dims), "dtype": v.dtype, "description": v.description}
                      for n, v in game.variables.items()},
        "exact_variables": {n: {"dims": list(v.dims), "dtype": v.dtype, "description": v.description}
                            for n, v in game.exact_variables.items()},
    }
    if fmt == "json":
        print(json.dumps(described, indent=2))
        return
    echo = click.echo
    echo(_wrap(f"{game.name} (from {described['distribution']}): {game.description}", "", "    "))
    echo(f"exact answer: {'yes' if game.has_exact else 'no'}")
    echo("\nparameters (--set NAME=VALUE, or [params] / [grid] in a spec):")
    for p in described["parameters"]:
        echo(_wrap(f"{p['name']} ({p['type']}, default {p['default']!r}): {p['allowed']}", "  ", "    "))
        if p["help"]:
            echo(_wrap(p["help"], "        "))
    echo(f"\nrun shape ([run] in a spec; checkpoints count {game.checkpoint_of}):")
    for key, default in game.run_shape.items():
        echo(f"  {key} (int, default {default})")
    for title, variables in (("outputs", described["variables"]),
                             ("exact outputs", described["exact_variables"])):
        echo(f"\n{title}:" if variables else f"\n{title}: none")
        for name, v in variables.items():
            dims = ", ".join(v["dims"]) or "scalar"
            echo(_wrap(f"{name} ({v['dtype']}; {dims}): {v['description']}", "  ", "    "))
