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
from typing import TYPE_CHECKING, Any

import click
import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ..run.record import RunReport
from ..plan.tasks import exact_solves, task_count
from ..plan.sizing import AUTO_TASK_S, groups_points
from ..spec.parse import Spec
from ..words import count, plural

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["console", "set_verbosity", "info", "announce", "TaskBar", "run_summary", "open_store",
           "select", "pick_variable", "print_rows", "print_status", "print_games", "print_game",
           "print_records", "fmt_value", "fmt_stderr", "fmt_significant", "plural", "print_summary",
           "print_headline_summary"]

#: -1 quiet (results and errors only), 0 normal, 1+ verbose.
_VERBOSITY = 0

#: Grids of at least this many points say that they are being planned (it takes seconds to minutes).
PLANNING_LINE_POINTS = 1000

#: What ``-`` means in every table.
NO_EXACT = "'-': no exact value for this grid point"


def verbosity() -> int:
    """-1 quiet, 0 normal, 1 and 2: ``-v`` and ``-vv``."""
    return _VERBOSITY


def set_verbosity(level: int) -> None:
    """Set how much the commands print (-1 quiet, 0 normal, >= 1 verbose)."""
    global _VERBOSITY
    _VERBOSITY = level


def console() -> Console:
    return Console(highlight=False)


def info(out: Console, text: str, soft_wrap: bool = False) -> None:
    """Print an informational line (not under -q); ``soft_wrap``: never cut
    (a line holding a path or a command to copy)."""
    if _VERBOSITY >= 0:
        out.print(text, soft_wrap=soft_wrap)


def announce(out: Console, spec: Spec, url: str, scheduler: str | None = None, where: str | None = None) -> None:
    points = int(np.prod(spec.shape)) if spec.shape else 1
    where = where or (f"Dask scheduler {scheduler}" if scheduler else "a local Dask cluster")
    per_task = int(np.prod(spec.task_grid, dtype=np.int64))
    of = count(spec.block, "replicate") + (f" x {count(per_task, 'grid point')}" if per_task > 1 else "")
    if spec.task_seconds is not None:
        tasks = f"simulation tasks of about {spec.task_seconds:g} s each"
    elif groups_points(spec):  # a new store's points per task are chosen by the run (a resumed one's recorded)
        tasks = f"simulation tasks of {count(spec.block, 'replicate')} x grid points grouped to about {AUTO_TASK_S:g} s"
    else:
        tasks = f"{count(task_count(spec), 'simulation task')} of {of}"
    info(out,
         f"sweep [bold]{spec.name}[/bold] ({spec.game_name}): {count(points, 'grid point')} x "
         f"{count(spec.replicates, 'replicate')}: {tasks} + {count(exact_solves(spec), 'exact solve')} -> {url} "
         f"on {where}")
    if spec.precision_stderr is not None:
        info(out, f"precision: more replicates per grid point until the largest standard error is at most "
                  f"{spec.precision_stderr:g}, or {spec.max_replicates} replicates")
    if points >= PLANNING_LINE_POINTS:  # the store's metadata and the plan take a while: say so at once
        info(out, f"preparing the store and planning {points} grid points ...")


def fmt_value(x: float | None) -> str:
    """An estimate or exact value: 6 significant digits, '-' for none."""
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.6g}"


def fmt_stderr(x: float | None) -> str:
    """A standard error: two significant digits in exponent form (3.4e-05)."""
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.1e}"


def fmt_significant(x: float | None, digits: int) -> str:
    """``x`` with ``digits`` significant digits (``0.76``, ``3.4e-05``), '-' for none."""
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.{digits}g}"


def _is_stderr(name: str) -> bool:
    """Whether a summary entry holds a standard error (two significant digits)."""
    return "std_error" in name or "stderr" in name or name.endswith("_se")


def _summary_cell(name: str, value: Any) -> str:
    if isinstance(value, float):
        return fmt_significant(value, 2 if _is_stderr(name) else 6)
    return str(value)


def print_summary(summary: dict[str, Any], dims: dict[str, tuple] | None = None) -> None:
    """Print a game's JSON-ready summary (``simulate``, ``exact``, ``replay``):
    its single values as ``name: value`` lines, then one table per set of
    labels, with a column per result over those labels (win share, its
    interval, final money: one table of seats), turned a quarter where only
    that fits the console, split by results where neither does.  ``dims`` ({dim: labels})
    names the label column; standard errors have two significant digits,
    other numbers six."""
    out = console()
    groups: dict[tuple, list[str]] = {}
    for key, value in summary.items():
        if isinstance(value, dict) and value and all(not isinstance(v, (dict, list)) for v in value.values()):
            groups.setdefault(tuple(str(k) for k in value), []).append(key)
        elif isinstance(value, (dict, list)):
            out.print(f"[bold]{key}[/bold]: {json.dumps(value)}", markup=True)
        else:
            out.print(f"[bold]{key}[/bold]: {_summary_cell(key, value)}")
    for labels, names in groups.items():
        dim = next((d for d, known in (dims or {}).items() if set(labels) <= {str(x) for x in known}), "label")
        records = [{dim: label, **{n: _summary_cell(n, summary[n][label]) for n in names}}
                   for label in labels]
        flipped = [{dim: n, **{label: r[n] for label, r in zip(labels, records)}} for n in names]
        if _width(records, [dim, *names]) > out.width and _width(flipped, [dim, *labels]) <= out.width:
            out.print(_table(None, [dim, *labels], flipped, set(labels)))
            continue
        for part in _fitting(records, dim, names, out.width):  # too wide either way: results split
            out.print(_table(None, [dim, *part], records, set(part)))


def _fitting(records: list[dict[str, str]], dim: str, names: list[str], width: int) -> list[list[str]]:
    """``names`` in consecutive groups whose tables (``dim`` column first) fit ``width``."""
    parts: list[list[str]] = [[]]
    for name in names:
        if parts[-1] and _width(records, [dim, *parts[-1], name]) > width:
            parts.append([])
        parts[-1].append(name)
    return parts


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


def print_records(out: Console, title: str | None, records: list[dict[str, str]], group_by: list[str],
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
    if title:
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
        exact = report.pending_exact
        grouped = f", {report.points_per_task} grid points each" if report.points_per_task > 1 else ""
        info(self.out, f"dashboard: {where}  workers: {report.workers}  tasks to run: {report.pending} "
                       f"({report.pending - exact} simulation, {exact} exact){grouped}")
        self.progress.start()
        self.task = self.progress.add_task("tasks", total=report.pending, rate="")
        self.t0 = time.perf_counter()

    def compiling(self) -> None:
        """A worker started compiling kernels (numba caches them on disk)."""
        info(self.out, "compiling kernels (first run only)")

    def failed(self, line: str) -> None:
        """A task failed with an error not seen before in this run (not under -q)."""
        info(self.out, line)

    def update(self, done: int, total: int) -> None:
        if self.task is None:
            self.task = self.progress.add_task("tasks", total=total, rate="")
        rate = done / max(time.perf_counter() - self.t0, 1e-9)
        self.progress.update(self.task, completed=done, total=total, rate=f"{rate:.2f} tasks/s")


def run_summary(out: Console, report: RunReport) -> None:
    """The headline answers and the verdict on one screen
    (:mod:`boardsweep.pipeline.views.overview`), then the run's work and timings."""
    from .overview import MAX_LINES, print_lines, print_overview
    from ..analysis.query import load_sweep

    _many_reads()
    ds = load_sweep(report.store, check=False)  # the run has just checked and written it
    for line in report.repaired:
        out.print(f"repaired: {line}")
    if report.calibration:
        info(out, f"task size: {escape(report.calibration)}")  # "[tasks]" is no markup
    with out.capture() as tail:  # the last lines, printed last, counted first
        print_precision(out, ds)
        out.print(work_line(report), soft_wrap=True)
        out.print(store_line(ds, report), soft_wrap=True)  # a path stays on one line
        if report.packing:
            out.print(report.packing)
        overhead = report.wall_s - report.kernel_s / max(report.workers, 1)
        compile_s = report.compile_wait_s  # as waited for: while the run started, then the slowest worker's
        compiled = f", compiling kernels {compile_s:.1f} s" if compile_s >= 0.05 else ""
        info(out,
             f"wall {report.wall_s:.1f} s{compiled}, kernel {report.kernel_s:.1f} s summed over "
             f"{count(report.workers or 0, 'worker')}, writes {report.write_s:.2f} s, "
             f"overhead ~ {max(overhead, 0):.1f} s")
        info(out, f"figures and tables: `boardsweep report {_quoted(report.store)}`", soft_wrap=True)
    last = tail.get()
    if _VERBOSITY >= 0:
        budget = MAX_LINES - RUN_LINES - len(last.splitlines())
        print_overview(out, ds, report.store, budget, every_row=_every_row(report.store))
    print_lines(out, last.splitlines())


#: Lines a run prints before its summary: the banner (2), a precision line,
#: the compile notice, the dashboard line (2 where it wraps) and the bar.
RUN_LINES = 7


def _quoted(url: str) -> str:
    import shlex

    return shlex.quote(url)


def _every_row(store: str) -> str:
    return f"`boardsweep query {_quoted(store)} --summary --all`"


def work_line(report: RunReport) -> str:
    """What this run computed, in the terms of its progress bar."""
    total = report.tasks_run + report.exact_run
    early = f", {report.head_start} during start-up" if report.head_start else ""
    solves = f", {count(report.exact_solves, 'exact solve')}" if report.exact_solves != report.exact_run else ""
    return (f"this run: {count(total, 'task')} ({report.tasks_run} simulation, "
            f"{report.exact_run} exact{solves}){early}")


def store_line(ds, report: RunReport) -> str:
    """The store's state: its replicates and exact answers, done of all
    (with a precision target, of the replicates each point uses)."""
    axes = list(ds.attrs.get("grid_axes", []))
    done = np.asarray(ds["done"].transpose(*axes, "replicate").values, dtype=bool)
    flat = done.reshape(-1, done.shape[-1])
    if "replicates_used" in ds:  # a precision target: the replicates each point uses
        used = np.asarray(ds["replicates_used"].transpose(*axes).values).reshape(-1)
    else:
        used = np.full(flat.shape[0], flat.shape[-1])
    wanted = np.arange(flat.shape[-1]) < used[:, None]
    exact_done = int(np.asarray(ds["exact_done"].values).sum()) if "exact_done" in ds else 0
    state = "complete" if report.complete else "INCOMPLETE"
    return (f"store {state}: {int((flat & wanted).sum())} of {count(int(wanted.sum()), 'replicate')} and "
            f"{exact_done} of {count(flat.shape[0], 'exact answer')} done: {report.store}")


#: Grid points above which ``status`` prints a digest, not one row per point.
SUMMARY_POINTS = 24
SUMMARY_FIRST = 5
SUMMARY_WORST = 5


def print_headline_summary(ds, fmt: str, every: bool = False, store: str = "STORE") -> None:
    """``query --summary``: the headline answers on one screen
    (:func:`boardsweep.pipeline.views.overview.print_overview`) and the verdict;
    ``every``: the whole az.summary-style table
    (:func:`boardsweep.pipeline.analysis.headlines.summary`), one row per grid point,
    headline and label.  CSV and JSON always hold every row."""
    import pandas as pd

    from ..analysis import headlines
    from .overview import MAX_LINES, print_overview

    found = headlines.estimates(ds)
    verdict = headlines.verdict(ds, found=found)
    if fmt == "table" and not every:
        print_overview(console(), ds, store, MAX_LINES, every_row=_every_row(store), found=found, verdict=verdict)
        return
    table = headlines.summary(ds, found=found)
    if fmt in ("csv", "json"):
        table = table.assign(label=pd.Series(_label_values(ds, table, found), index=table.index, dtype=object))
    if fmt == "csv":
        table.to_csv(sys.stdout, index=False)
        return
    if fmt == "json":
        rows = json.loads(table.to_json(orient="records"))
        print(json.dumps({"verdict": {k: v for k, v in verdict.items() if k != "p_holm"}, "rows": rows},
                         indent=2, default=str))
        return
    out = console()
    axes = list(ds.attrs.get("grid_axes", []))
    level = f"{headlines.LEVEL:.0%}"
    records = []
    for row in table.to_dict("records"):
        if not np.isfinite(row["estimate"]) or (row["estimate"] == 0 and not row["exact"]):
            continue  # a seat that does not play; a bin nothing can fall in (in the CSV and JSON)
        record = {a: str(row[a]) for a in axes}
        record.update(headline=row["headline"], label=str(row["label"]),
                      estimate=_interval(row["estimate"], row["low"], row["high"], row["se"]),
                      se=fmt_stderr(row["se"]), df=_fmt_int(row["df"]), exact=fmt_value(row["exact"]),
                      z=_fmt_z(row["z"]), p=_fmt_p(row["p"]))
        records.append(record)
    print_records(out, "headline answers", records, axes,
                  caption=f"estimate ± half-width of its {level} t interval with df degrees of freedom (a share or "
                          "histogram bin: exact binomial, [low, high] where uneven); se: "
                          "standard error; z = (estimate - exact) / se; p: two-sided, from t, before the "
                          "Holm adjustment the verdict makes",
                  right={"estimate", "se", "exact", "z", "p", "df"})
    out.print(f"[bold]verdict[/bold]: {verdict['text']}", soft_wrap=False)
    if verdict["power"]["text"]:
        out.print(verdict["power"]["text"], markup=False)


def _interval(x: float, low: float, high: float, se: float) -> str:
    from .overview import fmt_interval

    return fmt_interval(x, low, high, se)


def _label_values(ds, table, found) -> list:
    """The summary's labels for machine readers: a histogram bin as its number,
    a scalar headline's empty label as null, other labels as text."""
    dims = {name: est.attrs["dim"] for name, est in found.items()}
    out = []
    for name, label in zip(table["headline"], table["label"]):
        dim = dims.get(name)
        kind = ds[dim].dtype.kind if dim else ""
        out.append(None if label == "" else int(label) if kind in "iu" else float(label) if kind == "f" else label)
    return out


def _fmt_z(x: float) -> str:
    return "-" if not np.isfinite(x) else f"{x:.2f}"


def _fmt_p(x: float) -> str:
    return "-" if not np.isfinite(x) else f"{x:.2g}"


def _fmt_int(x: float) -> str:
    return "-" if not np.isfinite(x) else str(int(x))


def _many_reads() -> None:
    """Let zarr keep more chunk reads in flight in this (CLI) process: a
    store holds one small chunk per task and variable."""
    from ..store import many_reads

    many_reads()


def require_store(url: str, error: type[Exception], growing_ok: bool = False) -> Store:
    """The boardsweep store at ``url``, opened once for the command
    (:class:`~boardsweep.pipeline.store.Store`: what it finds is kept), or
    ``error`` in one line: no store, not ours, or (unless ``growing_ok``) one
    whose growth was interrupted half-way."""
    from ..plan.growth import interrupted
    from ..store import Store, StoreMismatch, normalize_url

    try:
        normalize_url(url)  # an unknown protocol, a missing package: the line `run` gives
    except StoreMismatch as exc:  # "--store URL: why": this command's STORE argument
        raise error("store " + str(exc).removeprefix("--store ")) from None
    st = Store(url)
    if st.kind == "rootless":
        from ..store.identity import rootless_line
        from ..store.integrity import StoreDamaged

        raise StoreDamaged(rootless_line(url))
    if st.kind in ("absent", "empty"):
        raise error(f"store {url}: no sweep store there")
    if st.kind != "boardsweep":
        raise error(f"store {url}: not a boardsweep sweep store")
    if not growing_ok and interrupted(st.attrs) is not None:
        raise error(f"store {url}: growing it to a larger spec was interrupted; rerun "
                    f"`boardsweep run SPEC --store {url} --extend` with that spec to finish")
    return st


def open_store(url: str | Store, error: type[Exception], check: bool = True, sels: tuple[str, ...] = (),
               eager: bool = True):
    """The store's Dataset in memory (only the cells ``--sel`` options pick,
    when given), or ``error`` in one line: no store, not ours, damaged, a bad
    selection.  ``url``: a path or URL, or the store :func:`require_store`
    opened.  ``eager=False``: lazily (:func:`query.open_sweep`), for
    commands that read a few small arrays."""
    from ..store import Store
    from ..store.integrity import StoreDamaged
    from ..analysis.query import load_sweep, open_sweep

    st = url if isinstance(url, Store) else require_store(url, error)
    _many_reads()
    try:
        if check:  # before the selection: a relabelled store must not pick its cells by the wrong labels
            st.assert_intact()
        picked = select(st.open_raw(), sels, error) if sels else None
        return (load_sweep if eager else open_sweep)(st, check=check, sel=picked)
    except StoreDamaged as exc:
        raise error(str(exc)) from None


def select(ds, sels: tuple[str, ...], error: type[Exception]) -> dict[str, list]:
    """The selection ``--sel axis=value`` options make: {axis: [values]}, each
    value parsed as the axis's type.  ``--sel axis=a,b`` and repeated
    ``--sel`` options on one axis select every value given, in that order
    (a value that itself holds a comma, e.g. a per-seat list, matches whole)."""
    axes = list(ds.attrs.get("grid_axes", []))
    picked: dict[str, dict] = {}  # axis -> {value: None}: the values in order, each once
    by_text: dict[str, dict[str, Any]] = {}  # axis -> {str(value): value}, the first value of each text
    for item in sels:
        if "=" not in item:
            raise error(f"--sel {item!r}: expected AXIS=VALUE or AXIS=VALUE,VALUE,...")
        axis, text = (x.strip() for x in item.split("=", 1))
        if axis not in axes:
            raise error(f"--sel {item!r}: no grid axis {axis!r}; axes: {', '.join(axes) or '(none)'}")
        if axis not in by_text:  # once per axis: a selection costs the axis's length plus its values
            by_text[axis] = {}
            for v in ds[axis].values:
                v = v.item() if isinstance(v, np.generic) else v
                by_text[axis].setdefault(str(v), v)
        known = by_text[axis]
        texts = [text] if text in known else [t.strip() for t in text.split(",")]
        for wanted in texts:
            if wanted not in known:
                raise error(f"--sel {item!r}: {wanted!r} is not on axis {axis!r}; values: {_some(list(known))}")
            picked.setdefault(axis, {})[known[wanted]] = None
    return {axis: list(values) for axis, values in picked.items()}


#: Values an error line lists of an axis, at most (an axis may hold 10^5).
LISTED_VALUES = 20


def _some(texts: list[str]) -> str:
    """``texts`` joined by commas, at most :data:`LISTED_VALUES` of them and a count of the rest."""
    if len(texts) <= LISTED_VALUES:
        return ", ".join(texts)
    half = LISTED_VALUES // 2
    return f"{', '.join(texts[:half])}, ... ({len(texts) - 2 * half} more), {', '.join(texts[-half:])}"


def pick_variable(ds, variable: str | None, error: type[Exception]) -> str:
    from ..analysis.query import distribution_variables

    found = distribution_variables(ds)
    if variable is None and found:
        return next(iter(found))
    if variable not in found:
        raise error(f"--variable {variable!r}: expected one of {', '.join(found) or '(none)'}")
    return variable


def print_rows(ds, variable: str, top: int | None, fmt: str) -> None:
    from ..analysis.query import rows

    if fmt == "table" and top is None:
        top = 5
    found = _with_precision(ds, rows(ds, variable, top=top, numeric=fmt != "table"), fmt != "table")
    if fmt == "json":
        print(json.dumps(found, indent=2))
    elif fmt == "csv":
        writer = csv.DictWriter(sys.stdout, fieldnames=list(found[0]) if found else [])
        writer.writeheader()
        writer.writerows(found)
    else:
        from ..analysis.headlines import LEVEL

        axes = list(ds.attrs.get("grid_axes", []))
        dim = [k for k in found[0] if k not in axes][0] if found else "label"
        records = []
        for row in found:
            exact = fmt_value(row["exact"])
            if row["exact"] is None and row["exact_state"] != "stored":
                exact = _EXACT_WORD.get(row["exact_state"], "-")
            nan = float("nan")
            se = row["se"] if row["se"] is not None else nan
            records.append({**{a: str(row[a]) for a in axes}, dim: str(row[dim]),
                            "estimate": _interval(*(row[c] if row[c] is not None else nan
                                                       for c in ("estimate", "low", "high")), se),
                            "se": fmt_stderr(row["se"]), "exact": exact,
                            "z": _fmt_z(row["z"] if row["z"] is not None else float("nan")),
                            "replicates": str(row["replicates"])})
        shown = f"the {top} most frequent {plural(dim)} per grid point" if top else f"every {dim}"
        print_records(
            console(), f"{variable}: {shown}", records, axes,
            caption=f"estimate ± half-width of its {LEVEL:.0%} t interval (the estimate every command prints: "
                    "ratio of sums over the finished replicates); se: standard error; exact: the exact value "
                    "('none exists': no single exact answer, `boardsweep status` says why; 'not yet': not "
                    "computed yet); z = (estimate - exact) / se",
            right={"estimate", "se", "exact", "z", "replicates"},
        )
        print_precision(console(), ds)


def _with_precision(ds, found: list[dict], add: bool) -> list[dict]:
    """Query rows with their point's precision columns (replicates used,
    standard error reached and target, met/capped/running) when ``add`` and
    the store has a precision target."""
    from ..plan.precision import point_columns
    from ..analysis.query import grid_points

    columns = point_columns(ds) if add else None
    if columns is None:
        return found
    axes = list(ds.attrs.get("grid_axes", []))
    by_point = {tuple(p[a] for a in axes): c for p, c in zip(grid_points(ds), columns)}
    return [{**row, **by_point[tuple(row[a] for a in axes)]} for row in found]


def print_precision(out: Console, ds) -> None:
    """One line on a precision target: how many grid points met it, were
    capped or still run (per point: ``boardsweep status``)."""
    from ..plan.precision import point_columns

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
    from ..store.metadata import exact_states

    axes = list(ds.attrs.get("grid_axes", []))
    read = damage is not None and damage.done is not None
    names = ["exact_exists", "exact_note"] if "exact_exists" in ds else ds.attrs.get("exact_variables", [])
    marks = ds[[n for n in (*names, *(() if read else ("exact_done",))) if n in ds]].load()
    if read:
        done, exact_done = damage.intact(int(ds.attrs.get("replicates_per_task", 1)))
        marks["exact_done"] = (axes, exact_done)
    else:  # older stores (no checksums): the flags are all there is
        done = ds["done"].transpose(*axes, "replicate").values.astype(bool)
    states, texts = exact_states(marks)
    per_point, states, texts = done.sum(-1).ravel(), states.ravel(), texts.ravel()
    replicates = int(done.shape[-1])

    def entries_at(indices) -> list[dict]:
        """The status entries of the grid points at flat ``indices`` (grid order)."""
        return [{**point, "done": int(per_point[i]), "total": replicates, "exact": str(states[i]),
                 "exact_note": str(texts[i])} for i, point in zip(indices, _points_at(ds, axes, indices))]

    total_done, total = int(done.sum()), int(done.size)
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
        title, shown = _grid_digest(out, title, per_point, replicates, states, entries_at)
        notes = set(texts[states == "none"].tolist())
    records = [{**{a: str(e[a]) for a in axes}, "done/total": f"{e['done']}/{e['total']}",
                **({"stderr": fmt_stderr(e["stderr_reached"]), "precision": _PRECISION_WORD[e["precision"]]}
                   if precise else {}),
                "exact": _EXACT_WORD[e["exact"]]} for e in shown]
    if records:
        print_records(out, title, records, axes, right={"done/total", "stderr"},
                      caption="done/total: finished replicates with intact data"
                              + (", out of those the precision rule uses; stderr: the largest standard error "
                                 f"reached (target {ds.attrs.get('precision_stderr'):g}); precision: met, "
                                 "CAPPED = max_replicates reached first, running = more replicates to come"
                                 if precise else "")
                              + "; exact: yes = exact answer stored, none exists = no single exact "
                                "answer, not yet = not computed")
    for note in sorted(notes):
        out.print(f"exact 'none': {note}")
    if damaged_text:
        out.print(f"damaged (done but data missing or altered): {damaged_text}")


_EXACT_WORD = {"stored": "yes", "none": "none exists", "pending": "not yet"}
_PRECISION_WORD = {"met": "met", "capped": "CAPPED", "running": "running"}


def _precision_entries(ds, entries: list[dict], done) -> bool:
    """With a precision target, give each status entry its replicates used
    (as ``total``: done ones counted within them), the standard error
    reached and the rule's state; return whether the store has a target."""
    from ..plan.precision import point_columns

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
    exact = {k: sum(e["exact"] == k for e in entries) for k in _EXACT_WORD}
    out.print(f"{title}; {len(entries)} grid points: {full} finished, {started} partly done, "
              f"{len(entries) - full - started} not started; exact answers: {exact['stored']} stored, "
              f"{exact['none']} none exists, {exact['pending']} not yet")
    unfinished = [e for e in entries if e["done"] < e["total"] or e["exact"] == "pending"]
    limit = SUMMARY_FIRST + SUMMARY_WORST
    more = f" (the first {limit} of {len(unfinished)})" if len(unfinished) > limit else ""
    out.print("every point: `--format json`", soft_wrap=True)
    return f"grid points not finished{more}", unfinished[:limit]


def _grid_digest(out: Console, title: str, per_point: np.ndarray, replicates: int, states: np.ndarray,
                 entries_at) -> tuple[str, list[dict]]:
    """:func:`_status_digest` counted in numpy over flat per-point arrays (done
    replicates, exact states); ``entries_at(indices)`` makes the entries listed."""
    full, started = int((per_point == replicates).sum()), int(((per_point > 0) & (per_point < replicates)).sum())
    exact = {k: int((states == k).sum()) for k in _EXACT_WORD}
    out.print(f"{title}; {per_point.size} grid points: {full} finished, {started} partly done, "
              f"{per_point.size - full - started} not started; exact answers: {exact['stored']} stored, "
              f"{exact['none']} none exists, {exact['pending']} not yet")
    unfinished = np.flatnonzero((per_point < replicates) | (states == "pending"))
    limit = SUMMARY_FIRST + SUMMARY_WORST
    more = f" (the first {limit} of {len(unfinished)})" if len(unfinished) > limit else ""
    out.print("every point: `--format json`", soft_wrap=True)
    return f"grid points not finished{more}", entries_at(unfinished[:limit].tolist())


def _points_at(ds, axes: list[str], indices) -> list[dict[str, Any]]:
    """The grid points at flat ``indices`` (grid order; a ``range`` over the
    whole grid: every point) as {axis: value}."""
    from ..analysis.dataset import _py, grid_points

    if not len(indices):
        return []
    if not axes or isinstance(indices, range):
        return list(grid_points(ds))
    shape = [ds.sizes[a] for a in axes]
    coords = np.unravel_index(np.asarray(indices, dtype=np.int64), shape)
    values = [ds[a].values for a in axes]
    return [{a: _py(v[i]) for a, v, i in zip(axes, values, point)} for point in zip(*coords)]


def print_games(fmt: str) -> None:
    """The installed games: name, distribution, exact answer, description."""
    from ...core.games import game_names, game_source, get_game

    found = []
    for name in game_names():
        try:
            game = get_game(name)
        except Exception as exc:  # noqa: BLE001 - one broken plugin must not hide the other games
            text = " ".join(str(exc).split()) or type(exc).__name__
            click.echo(f"boardsweep: warning: game {name!r} cannot be loaded ({type(exc).__name__}: {text})",
                       err=True)
            continue
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
    from ...core.games import game_source

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
