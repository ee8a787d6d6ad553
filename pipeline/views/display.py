"""What a run prints at its end: the headline answers, the verdict, its work and
timings.  The other commands' output: :mod:`.terminal` (console, verbosity, tables),
:mod:`.progress`, :mod:`.query_rows`, :mod:`.status`, :mod:`.games`."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from ..words import count

from .progress import store_line, work_line
from .query_rows import every_row_command, quoted
from .status import print_precision
from .terminal import info

__all__ = ["run_summary", "RUN_LINES"]


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
