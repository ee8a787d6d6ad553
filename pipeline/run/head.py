"""The head start: tasks the warm-up thread simulated while the run started,
taken from the workers' share and written as a worker writes its own."""

from __future__ import annotations

from ..errors import disk_full, one_line
from ..spec.parse import Spec
from ..store import Store
from .failures import failed_point, tasks_failed, tell_new_failure, where
from .record import RunReport
from .warm import WarmUp
from .worker import store_task

__all__ = ["head_start", "store_head"]


def head_start(warming: WarmUp | None, tasks: list) -> tuple[list, list]:
    """``tasks`` split in two: those the warm-up thread simulated (or is
    simulating) while the run started, and the rest, for the workers; the
    thread takes no more from now on."""
    taken = warming.claim() if warming is not None else set()
    if not taken:
        return [], tasks
    return [task for task in tasks if task.key in taken], [task for task in tasks if task.key not in taken]


def store_head(warming: WarmUp | None, st: Store, spec: Spec, stamp: str, report: RunReport, on_progress,
               finished: int, failures: list[dict], on_failure) -> list[dict]:
    """Write the tasks the warm-up thread simulated (waiting for the one
    under way) exactly as a worker writes its own (:func:`worker.store_task`,
    ``stamp``: the run's :func:`dispatch.token`), and count them in
    ``report``; return the failures of those it could not simulate,
    described as a worker's are (told through ``on_failure`` as they would
    be, after the round's ``failures``).

    Raises :class:`errors.StoreFull` at the first task that cannot write for a
    full disk (with the round's ``failures``), as a worker's task ends the
    run: no later task is written."""
    if warming is None:
        return []
    results, errors = warming.head_results()
    new: list[dict] = []

    def failed(task, exc: BaseException) -> None:
        new.append({"point": failed_point(spec, exc, where(spec, task)), "task": f"replicates {task.start}-{task.stop - 1}",
                    "error": one_line(exc)})
        if disk_full(exc):  # every later task would fail so too: the run stops here
            raise tasks_failed(failures + new, len(failures + new), st.url)  # a full disk among them: StoreFull
        tell_new_failure(failures + new, on_failure)

    for task, exc in sorted(errors, key=lambda error: (error[0].index, error[0].start)):  # task order
        failed(task, exc)
    for task, arrays, record in results:
        try:
            record = store_task(st.url, task, arrays, record, stamp)
        except OSError as exc:  # as a worker's failing write: the task's cells stay missing
            failed(task, exc)
            continue
        report.add(record, head_start=True)
        finished += 1
        if on_progress:
            on_progress(finished, 0)
    return new
