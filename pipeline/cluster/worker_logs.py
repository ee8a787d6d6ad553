"""What the embedded cluster's workers log on the run's own stderr.

A task that raises is reported by the run itself: one line per distinct error
as it happens, and every failure, grouped by error, when the run ends (see
:func:`boardsweep.pipeline.run.execute.run_sweep`).  Dask's worker logs the same
failure as a multi-line "Compute Failed" record with the task's traceback;
:class:`QuietTaskErrors` drops that record on the embedded cluster's workers,
whose stderr is the run's.  Workers of a scheduler boardsweep did not start
keep their logs, and ``boardsweep -v`` keeps every record.
"""

from __future__ import annotations

import logging

from distributed.diagnostics.plugin import WorkerPlugin

__all__ = ["QuietTaskErrors", "dask_setup"]


class _NoComputeFailed(logging.Filter):
    """Drops a worker's "Compute Failed" record (a failed task and its traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Compute Failed")


class QuietTaskErrors(WorkerPlugin):
    """Installs :class:`_NoComputeFailed` on ``distributed.worker`` where the worker runs."""

    _filter = _NoComputeFailed()

    def setup(self, worker) -> None:
        logging.getLogger("distributed.worker").addFilter(self._filter)

    def teardown(self, worker) -> None:
        logging.getLogger("distributed.worker").removeFilter(self._filter)


def dask_setup(worker) -> None:
    """Preload of the embedded cluster's worker processes (``boardsweep.processes``):
    a Ctrl-C in the terminal reaches the whole process group, and each worker
    process would print a KeyboardInterrupt traceback; the ``boardsweep``
    process handles it, and closing its cluster ends them."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
