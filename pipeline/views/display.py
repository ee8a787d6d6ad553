"""What a run prints: its banner, the line while it waits for its first worker
(:class:`WaitingLine`), the progress bar, the lines that say what it computed
and what the store holds, and at its end the headline answers, the verdict,
its work and timings (:func:`run_summary`).  The other commands' output:
:mod:`.terminal` (console, verbosity, tables), :mod:`.query_rows`, :mod:`.status`, :mod:`.games`."""

from __future__ import annotations

import time
from typing import Any

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

from ..spec import Spec
from ..words import count
from .query_rows import every_row_command, print_precision, quoted
from .terminal import info, verbosity

__all__ = ["run_summary", "RUN_LINES", "announce", "exact_words", "TaskBar", "WaitingLine", "store_line",
           "work_line", "PLANNING_LINE_POINTS"]


#: Grids of at least this many points say that they are being planned (it takes seconds to minutes).
PLANNING_LINE_POINTS = 1000


def announce(out: Console, spec: Spec, url: str, work: Any, scheduler: str | None = None,
             where: str | None = None) -> None:
    """The run's first line: the sweep, its grid and replicates, its tasks
    (``work``: :func:`boardsweep.pipeline.analysis.planned_work` of the run's
    layout where known before it starts, else the spec's own), the store and where it runs."""
    points = work.points
    where = where or (f"Dask scheduler {scheduler}" if scheduler else "a local Dask cluster")
    exact = work.exact_tasks  # exact tasks: unknown where the run chooses the points per task
    if spec.task_seconds is not None:
        tasks = f"simulation tasks of about {spec.task_seconds:g} s each"
    elif work.grouped_s is not None:  # a new store's points per task are chosen by the run (a resumed one's recorded)
        tasks = f"simulation tasks of {count(spec.block, 'replicate')} x grid points grouped to about {work.grouped_s:g} s"
    else:
        tasks = f"{count(work.tasks, 'simulation task')} of {work.layout}"
    info(out,
         f"sweep [bold]{spec.name}[/bold] ({spec.game_name}): {count(points, 'grid point')} x "
         f"{count(spec.replicates, 'replicate')}: {tasks} + {exact_words(exact, work.exact_solves)} -> {url} "
         f"on {where}")
    if spec.precision_stderr is not None:
        info(out, f"precision: more replicates per grid point until the largest standard error is at most "
                  f"{spec.precision_stderr:g}, or {spec.max_replicates} replicates")
    if points >= PLANNING_LINE_POINTS:  # the store's metadata and the plan take a while: say so at once
        info(out, f"preparing the store and planning {points} grid points ...")


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
            disable=verbosity() < 0,
        )
        self.task = None
        self.t0 = time.perf_counter()

    def __enter__(self) -> "TaskBar":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.task is not None:
            self.progress.stop()

    def start(self, report: Any) -> None:
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


def exact_words(tasks: int | None, solves: int) -> str:
    """Exact work in the words every line uses (:mod:`boardsweep.pipeline.plan.tasks`):
    ``18 exact tasks (6 exact solves)``; ``exact tasks (6 exact solves)`` where
    the number of tasks is not known yet (None)."""
    return f"{count(tasks, 'exact task') if tasks is not None else 'exact tasks'} ({count(solves, 'exact solve')})"


def work_line(report: Any) -> str:
    """What this run computed, in the terms of its progress bar."""
    total = report.tasks_run + report.exact_run
    early = f", {report.head_start} during start-up" if report.head_start else ""
    solves = f", {count(report.exact_solves, 'exact solve')}" if report.exact_solves != report.exact_run else ""
    return (f"this run: {count(total, 'task')} ({report.tasks_run} simulation, "
            f"{report.exact_run} exact{solves}){early}")


def store_line(counts: tuple[int, int, int, int], report: Any) -> str:
    """The store's state: its replicates and exact answers, done of all
    (with a precision target, of the replicates each point uses): ``counts``,
    :func:`boardsweep.pipeline.analysis.store_counts`; ``report``: the run's."""
    done, wanted, exact_done, points = counts
    state = "complete" if report.complete else "INCOMPLETE"
    return (f"store {state}: {done} of {count(wanted, 'replicate')} and "
            f"{exact_done} of {count(points, 'exact answer')} done: {report.store}")


class WaitingLine:
    """A status line while the run waits for its first worker (a batch job, or
    one joining ``--scheduler``): updated in place on a terminal, else printed
    when it changes and every ``EVERY_S`` seconds (logs)."""

    EVERY_S = 30.0

    def __init__(self, console, target) -> None:
        self.console, self.status, self.started, self.printed = console, None, False, None
        if (target.batch or target.scheduler) and verbosity() >= 0:
            self.status = console.status("")
            target.on_wait = self.update

    def update(self, text: str) -> None:
        if not self.console.is_terminal:  # a new state at once, the same one every EVERY_S
            state = text.rsplit(" (", 1)[0]
            if self.printed is None or state != self.printed[0] or time.monotonic() - self.printed[1] >= self.EVERY_S:
                self.console.print(text, highlight=False, soft_wrap=True)
                self.printed = (state, time.monotonic())
            return
        if not self.started:
            self.status.start()
            self.started = True
        self.status.update(text)

    def __enter__(self) -> "WaitingLine":
        return self

    def __exit__(self, *exc) -> None:
        if self.status is not None:
            self.status.stop()




def run_summary(out: Console, report: Any, read: tuple[Any, bool]) -> None:
    """The headline answers and the verdict on one screen
    (:mod:`boardsweep.pipeline.views.overview`), then the run's work and timings.
    ``report``: the run's :class:`~boardsweep.pipeline.run.RunReport`; ``read``:
    (its store's Dataset, whether block by block), as
    :func:`boardsweep.pipeline.analysis.read_finished` read it."""
    from .overview import MAX_LINES, print_lines, replicate_line
    from ..analysis import store_counts

    ds, in_blocks = read
    for line in report.repaired:
        out.print(f"repaired: {line}")
    if report.calibration:
        info(out, f"task size: {escape(report.calibration)}")  # "[tasks]" is no markup
    with out.capture() as tail:  # the last lines, printed last, counted first
        print_precision(out, ds)
        out.print(work_line(report), soft_wrap=True)
        out.print(store_line(store_counts(ds), report), soft_wrap=True)  # a path stays on one line
        if report.packing:
            out.print(report.packing)
        overhead = report.wall_s - report.kernel_s / max(report.workers, 1)
        compile_s = report.compile_wait_s  # as waited for: while the run started, then the slowest worker's
        compiled = f", compiling kernels {compile_s:.1f} s" if compile_s >= 0.05 else ""
        info(out,
             f"wall {report.wall_s:.1f} s{compiled}, kernel {report.kernel_s:.1f} s summed over "
             f"{count(report.workers or 0, 'worker')}, writes {report.write_s:.2f} s, "
             f"overhead ~ {max(overhead, 0):.1f} s")
        info(out, f"figures and tables: `boardsweep report {quoted(report.store)}`", soft_wrap=True)
    last = tail.get()
    budget = MAX_LINES - RUN_LINES - len(last.splitlines())  # the answers and the verdict: results, even under -q
    _overview(out, ds, report.store, budget - 1, in_blocks)
    agreement = replicate_line(ds)  # the replicate-disagreement flag, one line
    if agreement:
        out.print(agreement, markup=False)
    print_lines(out, last.splitlines())


def _overview(out: Console, ds, store: str, budget: int, in_blocks: bool) -> None:
    """The headline tables and the verdict; a grid read ``in_blocks`` block by block
    (:func:`boardsweep.pipeline.analysis.blocks.run_overview`), the spec's answer read once for both."""
    from .overview import print_block_overview, print_overview

    if not in_blocks:
        print_overview(out, ds, store, budget, every_row=every_row_command(store))
        return
    print_block_overview(out, ds, store, budget, every_row_command(store))


#: Lines a run prints before its summary: the banner (2), a precision line,
#: the compile notice, the dashboard line (2 where it wraps) and the bar.
RUN_LINES = 7
