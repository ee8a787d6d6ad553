"""What a run prints at its end: the headline answers, the verdict, its work and
timings.  The other commands' output: :mod:`.terminal` (console, verbosity, tables),
:mod:`.progress`, :mod:`.query_rows`, :mod:`.status`, :mod:`.games`, :mod:`.store_access`."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from ..run import RunReport
from ..words import count

from .progress import store_line, work_line
from .query_rows import every_row_command, quoted
from .status import print_precision
from .store_access import allow_many_reads
from .terminal import info

__all__ = ["run_summary", "RUN_LINES"]


def run_summary(out: Console, report: RunReport) -> None:
    """The headline answers and the verdict on one screen
    (:mod:`boardsweep.pipeline.views.overview`), then the run's work and timings."""
    from .overview import MAX_LINES, print_lines, replicate_line
    from ..analysis import BLOCK_POINTS, block_chunks, grid_size
    from ..store import Store, load_sweep, open_sweep

    allow_many_reads()
    st = Store(report.store)
    raw = st.open_raw()  # the grid's size, from the store opened once (the run has just checked and written it)
    if grid_size(raw) <= BLOCK_POINTS:  # else read and estimated block by block, a dask chunk each
        ds = load_sweep(st, check=False)
    else:
        ds = open_sweep(st, check=False, chunks=block_chunks(raw, BLOCK_POINTS))
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
        info(out, f"figures and tables: `boardsweep report {quoted(report.store)}`", soft_wrap=True)
    last = tail.get()
    budget = MAX_LINES - RUN_LINES - len(last.splitlines())  # the answers and the verdict: results, even under -q
    _overview(out, ds, report.store, budget - 1)
    agreement = replicate_line(ds)  # the replicate-disagreement flag, one line
    if agreement:
        out.print(agreement, markup=False)
    print_lines(out, last.splitlines())


def _overview(out: Console, ds, store: str, budget: int) -> None:
    """The headline tables and the verdict; a grid of more than a block's
    points block by block (:func:`boardsweep.pipeline.analysis.blocks.run_overview`),
    the spec's answer read once for both."""
    from .overview import print_block_overview, print_overview
    from ..analysis import BLOCK_POINTS, grid_size

    if grid_size(ds) <= BLOCK_POINTS:
        print_overview(out, ds, store, budget, every_row=every_row_command(store))
        return
    print_block_overview(out, ds, store, budget, every_row_command(store))


#: Lines a run prints before its summary: the banner (2), a precision line,
#: the compile notice, the dashboard line (2 where it wraps) and the bar.
RUN_LINES = 7
