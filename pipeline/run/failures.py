"""Failed tasks in words: where each ran and what went wrong, each error said once."""

from __future__ import annotations

import errno
import os
from typing import Callable

from ..errors import SchedulerLost, StoreFull, SweepError, TasksFailed, WorkerDied
from ..spec import Spec

__all__ = ["tasks_failed", "store_full", "tell_new_failure", "failures_text", "where", "point", "failed_point", "lost",
           "worker_died"]


def store_full(error: str, at: str, url: str) -> StoreFull:
    """The run's end at the first task that could not write (``error``, in one
    line) because the store's disk or quota is full: every other would fail so too."""
    return StoreFull(f"the store's disk is full ({error}) at {at}: the run stopped there; finished tasks are kept "
                     f"in {url}: free space, then rerun the same command")


#: How a full disk or quota reads in a failure's one line (``OSError: [Errno 28] No space left on device``).
_FULL = tuple(f"[Errno {code}] {os.strerror(code)}" for code in (errno.ENOSPC, errno.EDQUOT))


def tasks_failed(failures: list[dict], total: int, url: str) -> SweepError:
    """The run's end where ``failures`` of ``total`` tasks raised (the others
    are stored); where one could not write for a full disk (the head start's,
    written after the workers' tasks), :func:`store_full`'s line, not a count
    of tasks that all failed the same way."""
    full = [f for f in failures if any(mark in f["error"] for mark in _FULL)]
    if full:
        error = store_full(full[0]["error"], full[0]["point"], url)
        others = [f for f in failures if not any(mark in f["error"] for mark in _FULL)]
        if others:
            error = StoreFull(f"{error}; other tasks failed too: {failures_text(others)}")
        return error
    return TasksFailed(
        f"{len(failures)} of {total} tasks failed: {failures_text(failures)}. The other "
        f"{total - len(failures)} tasks finished and are stored in {url}; fix the cause "
        "and rerun the same command to compute the missing cells",
        failures,
    )


def tell_new_failure(failures: list[dict], on_failure: Callable[[str], None] | None) -> None:
    """Call ``on_failure`` with the newest failure unless an earlier one had the same error."""
    new = failures[-1]
    if on_failure and all(f["error"] != new["error"] for f in failures[:-1]):
        on_failure(f"a task failed at {new['point']} ({new['task']}): {new['error']}; the run goes on "
                   "(an error is shown once; all failures are listed at the end)")


def failures_text(failures: list[dict], limit: int = 5) -> str:
    """Failures grouped by error, each error said once with where it happened:
    ``ErrorText (at dice_sides=4 (replicates 0-1), ... and 12 more)``."""
    by_error: dict[str, list[dict]] = {}
    for f in failures:
        by_error.setdefault(f["error"], []).append(f)
    parts = []
    for error, found in list(by_error.items())[:limit]:
        at = ", ".join(f"{f['point']} ({f['task']})" for f in found[:2])
        more = f" and {len(found) - 2} more" if len(found) > 2 else ""
        parts.append(f"{error} (at {at}{more})")
    if len(by_error) > limit:
        parts.append(f"and {len(by_error) - limit} other errors")
    return "; ".join(parts)


def where(spec: Spec, task) -> str:
    """The grid points of a task: its one point as :func:`point` says it,
    else the first and the count (``dice_sides=4, ... and 99 more points``)."""
    first = point(spec, task.params)
    more = len(task.cells) - 1
    return first if more <= 0 else f"{first} and {more} more grid point{'s' if more > 1 else ''}"


def failed_point(spec: Spec, error: BaseException, described: str) -> str:
    """Where ``error`` was raised: the grid point its kernel was simulating
    (:func:`worker.at_point`), else ``described`` (the task's own points)."""
    from .worker import failed_at  # numpy and the game registry: a worker's, loaded once a task fails

    params = failed_at(error)
    if params is None or any(axis not in params for axis in spec.axes):
        return described
    return point(spec, params)


def worker_died(spec: Spec, error: BaseException) -> BaseException:
    """``error`` in words where it is Dask's ``KilledWorker`` (the worker
    process running the task died, as many times as Dask tries a task):
    a :class:`WorkerDied` naming the game; any other error as it is."""
    try:
        from distributed import KilledWorker
    except ImportError:  # no Dask here: no worker to die
        return error
    if not isinstance(error, KilledWorker):
        return error
    tries = getattr(error, "allowed_failures", 0) + 1
    each = "" if tries == 1 else f", each of the {tries} times it was tried"
    return WorkerDied(f"the worker process running it died{each}: the kernel of game {spec.game.name!r} killed "
                      "it (abort(), a crash, a signal) or it ran out of memory")


def point(spec: Spec, params: dict) -> str:
    """The grid point of ``params`` as ``axis=value, ...`` (or the single point)."""
    if not spec.axes:
        return "the single grid point"
    return ", ".join(f"{axis}={params[axis]!r}" for axis in spec.axes)


def lost(address: str, url: str) -> SchedulerLost:
    """The run's end where the scheduler at ``address`` went away (finished tasks kept in ``url``)."""
    return SchedulerLost(
        f"lost the Dask scheduler at {address} mid-sweep; finished tasks are kept in {url}: "
        "rerun the same command (with --scheduler pointing at a running scheduler) to resume"
    )
