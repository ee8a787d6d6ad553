"""The head start written: tasks the warm-up thread (:mod:`.startup`) simulated while the run started,
taken from the workers' share and written as a worker writes its own, while
the workers run theirs where the store is local."""

from __future__ import annotations

from ..errors import disk_full, one_line
from ..spec import Spec
from ..store import Store, local_root
from .failures import failed_point, tasks_failed, tell_new_failure, where
from .record import RunReport
from .startup import WarmUp
from .worker import store_task

__all__ = ["head_start", "HeadWrites", "store_head"]


def head_start(warming: WarmUp | None, tasks: list) -> tuple[list, list]:
    """``tasks`` split in two: those the warm-up thread simulated (or is
    simulating) while the run started, and the rest, for the workers; the
    thread takes no more from now on."""
    taken = warming.claim() if warming is not None else set()
    if not taken:
        return [], tasks
    return [task for task in tasks if task.key in taken], [task for task in tasks if task.key not in taken]


class HeadWrites:
    """The tasks the warm-up thread simulated, written as a worker writes its
    own (:func:`worker.store_task`, ``stamp``: the run's
    :func:`dispatch.token`) once, by :meth:`write`: while the workers run the
    round's other tasks (:func:`dispatch.submit_and_wait`'s ``meanwhile``),
    else when :func:`store_head` counts them.  What each write did is kept for
    :func:`store_head`, which tells it in the order the run tells failures."""

    def __init__(self, warming: WarmUp, st: Store, stamp: str) -> None:
        self.warming, self.st, self.stamp = warming, st, stamp
        self.started = False
        self.errors: list = []  # (task, exception) of those the thread could not simulate
        self.written: list = []  # (task, its record, or the OSError its write raised)
        self.raised: Exception | None = None  # raised while writing (the head task past its deadline): raised later

    def meanwhile(self):
        """:meth:`write` where the store is local, to call while the workers
        run; None on object storage, where the writes wait for the round's
        end: a write there that hangs (a silent network) would hold the
        thread that ends the run when the storage is lost, for a request's
        whole deadline per head task."""
        return self.write if local_root(self.st.url) is not None else None

    def write(self) -> None:
        """Write every simulated task (waiting for the one under way), stopping
        after the first write that finds the disk full: a full disk ends the
        run, as a worker's task does, and no later task is written."""
        if self.started:
            return
        self.started = True
        try:
            results, self.errors = self.warming.head_results()
            for task, arrays, record in results:
                try:
                    self.written.append((task, store_task(self.st.url, task, arrays, record, self.stamp)))
                except OSError as exc:  # as a worker's failing write: the task's cells stay missing
                    self.written.append((task, exc))
                    if disk_full(exc):
                        break
        except Exception as exc:  # noqa: BLE001 - raised where the run counts the head start (store_head)
            self.raised = exc


def store_head(writes: HeadWrites | None, spec: Spec, st: Store, report: RunReport, on_progress, finished: int,
               failures: list[dict], on_failure) -> list[dict]:
    """The head start's tasks (:class:`HeadWrites`, written now if they are
    not yet), counted in ``report``; return the failures of those it could not
    simulate or write, described as a worker's are (told through
    ``on_failure`` as they would be, after the round's ``failures``).

    Raises :class:`errors.StoreFull` at the first task that could not write for
    a full disk (with the round's ``failures``), as a worker's task ends the
    run; :class:`errors.TaskOverdue` where the task under way ran past its
    deadline (:meth:`WarmUp.head_results`)."""
    if writes is None:
        return []
    writes.write()
    if writes.raised is not None:
        raise writes.raised
    new: list[dict] = []

    def failed(task, exc: BaseException) -> None:
        new.append({"point": failed_point(spec, exc, where(spec, task)), "task": f"replicates {task.start}-{task.stop - 1}",
                    "error": one_line(exc)})
        if disk_full(exc):  # every later task would fail so too: the run stops here
            raise tasks_failed(failures + new, len(failures + new), st.url)  # a full disk among them: StoreFull
        tell_new_failure(failures + new, on_failure)

    for task, exc in sorted(writes.errors, key=lambda error: (error[0].index, error[0].start)):  # task order
        failed(task, exc)
    for task, record in writes.written:
        if isinstance(record, OSError):
            failed(task, record)
            continue
        report.add(record, head_start=True)
        finished += 1
        if on_progress:
            on_progress(finished, 0)
    return new
