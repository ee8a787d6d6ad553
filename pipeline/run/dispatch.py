"""Dispatch to Dask: submit a round's tasks, a bounded window at a time, and follow them.

Each task runs on a worker inside :func:`contained_call`, which announces its
start (the task deadline's clock, Dask's ``boardsweep.task-timeout``) and
names the worker in the timing record it returns.  Two watcher threads end
the wait: one when a task runs past the deadline, one when every worker has
left for longer than ``boardsweep.no-workers-timeout``.  A task's error is
collected (the others go on) unless it says that the store is lost or full,
which every other task would meet too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import logging
import threading
import time
import uuid
from typing import Callable

from ..cluster import LOOK_EVERY_S
from ..errors import NoWorkersLeft
from ..cluster import Target, no_workers_timeout, task_timeout
from ..errors import SchedulerLost, contained, disk_full, one_line, overdue
from ..plan import TaskLayout
from ..spec import Spec
from ..store import Store
from .failures import failed_point, lost, store_full, tasks_failed, tell_new_failure, where, worker_died
from .record import RunReport
from .worker import run_exact, run_task

__all__ = ["submit_and_wait", "contained_call", "token", "no_workers_deadline", "IN_FLIGHT_PER_WORKER",
           "MIN_IN_FLIGHT", "TASK_STARTED_TOPIC", "RESTART_TIMEOUT_S"]

#: Futures in flight per worker: enough to keep every worker busy, few enough
#: that the scheduler is never flooded (a grid of tens of thousands of points
#: submitted at once made the scheduler unresponsive and the client lose it).
IN_FLIGHT_PER_WORKER = 8
MIN_IN_FLIGHT = 32

#: Dask event topic on which a worker says that a task has started (message: the task's key):
#: the run's clock of :func:`cluster.task_timeout` starts then, not while the task queues.
TASK_STARTED_TOPIC = "boardsweep-task-started"

#: Seconds given to restarting the workers of a cluster boardsweep did not start whose thread a task
#: past its deadline holds (through their nannies: a thread cannot be stopped, a process can).
RESTART_TIMEOUT_S = 20.0


def contained_call(fn: Callable, *args):
    """``fn(*args)`` on a worker, a game's ``sys.exit()``, ``KeyboardInterrupt``
    or other BaseException turned into the task's error (:func:`errors.contained`):
    left alone, it ends the worker's thread and the run waits for the task forever.
    Its start is announced on :data:`TASK_STARTED_TOPIC` (the task deadline's clock)."""
    _announce_start()
    try:
        return fn(*args)
    except Exception:
        raise
    except BaseException as exc:  # noqa: BLE001 - see the docstring
        raise contained(exc) from None


def _announce_start() -> None:
    """Tell the run that this worker's current task starts now (nothing outside a Dask task)."""
    try:
        from distributed import get_worker

        worker = get_worker()
        key = worker.get_current_task()
    except (ImportError, ValueError, AttributeError):  # not in a Dask worker's task
        return
    worker.log_event(TASK_STARTED_TOPIC, str(key))


def token(spec: Spec, layout: TaskLayout) -> str:
    """The SHA-256 of the spec and its task layout (the store's arrays and
    chunks): a worker keeps a store's array metadata under it, between tasks
    and runs (a cluster given by ``--scheduler`` outlives a run).  The layout
    is hashed too because a ``[tasks] seconds`` spec is calibrated per run:
    the same spec may remake a store at the same URL with other chunks."""
    laid = json.dumps({"replicates_per_task": layout.block, "grid_chunks": [int(g) for g in layout.grid_chunks]})
    return hashlib.sha256((spec.canonical_json() + "\n" + laid).encode()).hexdigest()


def _jobs(spec: Spec, url: str, stamp: str, tasks: list, points: list, tag: str):
    """(function, args, key, description) of every task to run, exact answers first."""
    game = spec.game
    for exact in points:
        yield (contained_call, (run_exact, game, exact, spec.run_shape, spec.checkpoints, url, stamp),
               f"{exact.key}-{tag}", {"point": where(spec, exact), "task": "exact answer"})
    for task in tasks:
        yield (contained_call, (run_task, game, spec.seed, task, spec.run_shape, spec.checkpoints, url, stamp,
                               spec.series_batches),
               f"sim-{task.key}-{tag}",
               {"point": where(spec, task), "task": f"replicates {task.start}-{task.stop - 1}"})


def no_workers_deadline(target: Target) -> float | None:
    """Seconds a run waits once every worker has left (:func:`cluster.no_workers_timeout`),
    or None for the embedded cluster, whose workers are this process's threads (or
    processes its nannies restart)."""
    if target.client is None and not target.scheduler and not target.batch:
        return None
    if target.batch:  # replacement worker jobs wait in the batch queue as the first ones did
        return max(no_workers_timeout(), target.start_timeout)
    return no_workers_timeout()


def _watch_workers(client, deadline: float, live: set, gone: threading.Event, stop: threading.Event) -> None:
    """In a thread: once the scheduler has had no worker for ``deadline``
    seconds, set ``gone`` and cancel the ``live`` futures, which ends the
    run's wait (its tasks would otherwise wait for a worker forever)."""
    since = None
    while not stop.wait(LOOK_EVERY_S):
        try:
            workers = len(client.nthreads())
        except Exception:  # noqa: BLE001 - a lost scheduler: the run's own wait says so
            continue
        if workers:
            since = None
            continue
        since = time.monotonic() if since is None else since
        if time.monotonic() - since >= deadline:
            gone.set()
            _cancel(client, live)
            return


def _watch_deadline(client, deadline: float, started: dict, live: set, late: list, stuck: list,
                    stop: threading.Event) -> None:
    """In a thread: once a ``live`` future's task has run for ``deadline`` seconds
    since its worker announced it (``started``: key -> monotonic time), put its
    key in ``late`` and the workers running it in ``stuck``, and cancel the
    ``live`` futures, which ends the run's wait."""
    while not stop.wait(LOOK_EVERY_S):
        keys = {future.key for future in live.copy()}
        now = time.monotonic()
        over = [key for key, t0 in list(started.items()) if key in keys and now - t0 >= deadline]
        if over:
            try:
                stuck.extend(worker for worker, running in client.processing().items()
                             if set(map(str, running)) & set(over))
            except Exception:  # noqa: BLE001 - a scheduler gone: no worker to restart
                pass
            late.extend(over)
            _cancel(client, live)
            return


def _cancel(client, live: set) -> None:
    try:
        client.cancel(list(live.copy()))
    except Exception:  # noqa: BLE001 - the scheduler went too: the run's wait ends anyway
        pass


def _restart_stuck_workers(client, stuck: list[str]) -> bool:
    """Restart the workers ``stuck`` (:meth:`distributed.Client.restart_workers`);
    whether every one restarted (a worker without a nanny cannot be)."""
    if not stuck:
        return True
    try:
        answers = client.restart_workers(stuck, timeout=RESTART_TIMEOUT_S, raise_for_error=False)
        return all(answer == "OK" for answer in (answers or {}).values())
    except Exception:  # noqa: BLE001 - a worker without a nanny, a scheduler gone: said in the run's line
        return False


class _Round:
    """One round's tasks in flight: a window of futures, the watchers, and what each future is."""

    def __init__(self, client, spec: Spec, st: Store, jobs, address: str, no_workers_s: float | None,
                 window: int) -> None:
        from distributed import as_completed

        self.client, self.spec, self.st, self.jobs, self.address = client, spec, st, jobs, address
        self.no_workers_s, self.window = no_workers_s, window
        self.in_flight, self.what, self.live = as_completed(), {}, set()
        self.gone, self.stop = threading.Event(), threading.Event()
        self.deadline, self.started, self.late, self.stuck = task_timeout(), {}, [], []
        self.failures: list[dict] = []

    def submit_next(self) -> None:
        job = next(self.jobs, None)
        if job is not None:
            fn, args, key, described = job
            future = self.client.submit(fn, *args, key=key, pure=False)
            self.what[future.key] = described
            self.live.add(future)
            self.in_flight.add(future)

    def start(self) -> None:
        """The deadline's watcher, the first window of futures, then the workers' watcher."""
        if self.deadline is not None:  # the clock of each task starts when its worker says it has started
            self.client.subscribe_topic(TASK_STARTED_TOPIC,
                                        lambda event: self.started.__setitem__(event[1], time.monotonic()))
            threading.Thread(target=_watch_deadline, name="boardsweep-deadline-watch", daemon=True, args=(
                self.client, self.deadline, self.started, self.live, self.late, self.stuck, self.stop)).start()
        for _ in range(self.window):
            self.submit_next()

    def watch_workers(self) -> None:
        if self.no_workers_s is not None:
            threading.Thread(target=_watch_workers, name="boardsweep-workers-watch", daemon=True,
                             args=(self.client, self.no_workers_s, self.live, self.gone, self.stop)).start()

    def check_watchers(self) -> None:
        """Raise where a watcher ended the wait: a task past its deadline, or no workers left."""
        if self.late:
            task = self.what.get(self.late[0], {"task": self.late[0], "point": "?"})
            at = f"{task['task']} at {task['point']}"
            if self.no_workers_s is not None:  # a cluster boardsweep did not start: free its thread for the rerun
                at += (" (its worker was restarted)" if _restart_stuck_workers(self.client, self.stuck)
                       else " (restart its worker: its thread still runs the task)")
            raise overdue(at, self.deadline)
        if self.gone.is_set():
            raise NoWorkersLeft(
                f"every worker of the Dask scheduler at {self.address} left mid-sweep and none joined within "
                f"{self.no_workers_s:g} s (Dask's boardsweep.no-workers-timeout); finished tasks are kept in "
                f"{self.st.url}: start workers (dask worker {self.address}) and rerun the same command to resume")

    def failed(self, future, on_failure) -> None:
        """Note the error of ``future``; raise where it says the store is lost or full."""
        error = worker_died(self.spec, _remote_error(future, self.address, self.st.url))
        lost_store = self.st.lost(error)
        if lost_store is not None:  # every other task would fail the same way: stop now
            raise lost_store
        if disk_full(error):  # so would they here
            raise store_full(one_line(error), self.what[future.key]["point"], self.st.url)
        described = self.what.pop(future.key)
        at = failed_point(self.spec, error, described["point"])  # the point whose kernel failed, of many
        self.failures.append({**described, "point": at, "error": one_line(error)})
        tell_new_failure(self.failures, on_failure)

    def record(self, future) -> dict | None:
        """The timing record ``future`` returned; None where it erred while
        gathered (its worker died with the result, and the task, computed
        again, failed: its error is the future's, :meth:`failed`)."""
        if future.status == "cancelled":
            self.check_watchers()  # cancelled by a watcher: its own line
            raise lost(self.address, self.st.url)
        try:
            result = future.result()
        except (OSError, asyncio.CancelledError, concurrent.futures.CancelledError) as exc:
            self.check_watchers()
            raise lost(self.address, self.st.url) from exc
        except Exception:  # noqa: BLE001 - the task's own error, raised by the gather: a failure, as any
            if future.status != "error":
                raise
            return None
        self.what.pop(future.key, None)
        return result

    def close(self) -> None:
        self.stop.set()
        if self.client.status == "running" and self.live:
            self.client.cancel(list(self.live))
        if self.client.status == "running" and self.deadline is not None:
            self.client.unsubscribe_topic(TASK_STARTED_TOPIC)


def submit_and_wait(client, spec: Spec, layout: TaskLayout, st: Store, tasks: list, points: list,
                    report: RunReport, on_progress, target: Target, on_failure=None, on_submitted=None,
                    meanwhile=None) -> None:
    """Run ``points`` (exact answers) and ``tasks`` (simulation) on ``client``'s
    workers, at most a window at a time, counting each finished one in
    ``report``; raise :class:`TasksFailed` at the end where some raised.
    ``meanwhile`` is called once the first window is under way (this
    process's own work, done while the workers run theirs)."""
    jobs = _jobs(spec, st.url, token(spec, layout), tasks, points, uuid.uuid4().hex[:8])
    address = target.scheduler or getattr(client.scheduler, "address", None) or "(local cluster)"
    window = max(MIN_IN_FLIGHT, IN_FLIGHT_PER_WORKER * max(report.workers, 1))
    flight = _Round(client, spec, st, jobs, address, no_workers_deadline(target), window)
    total, finished = len(tasks) + len(points), 0
    try:
        flight.start()
        if on_submitted:
            on_submitted()
        flight.watch_workers()
        if meanwhile:
            meanwhile()
        for future in flight.in_flight:
            flight.started.pop(future.key, None)
            flight.check_watchers()
            # live while its record is gathered: a watcher's cancel also ends a gather that waits for
            # a dead worker's result to be computed again; one that failed then is a failure as any
            record = None if future.status == "error" else flight.record(future)
            if record is None:
                flight.failed(future, on_failure)
            else:
                report.add(record)
            flight.live.discard(future)
            report.max_in_flight = max(report.max_in_flight, len(flight.live) + 1)
            flight.submit_next()
            finished += 1
            if on_progress:
                on_progress(finished, total)
    except SchedulerLost:
        # the client's reconnection attempt logs a traceback when it is cut
        # short; the error raised here already says what happened
        _quiet_close(client)
        raise
    finally:
        flight.close()
    if flight.failures:
        raise tasks_failed(flight.failures, total, st.url)


def _remote_error(future, address: str, url: str) -> BaseException:
    try:
        return future.exception()
    except (OSError, asyncio.CancelledError, concurrent.futures.CancelledError):
        raise lost(address, url) from None


def _quiet_close(client) -> None:
    log = logging.getLogger("distributed.client")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        client.close(timeout=5)
    except Exception:  # noqa: BLE001 - the scheduler is gone; nothing left to close cleanly
        pass
    finally:
        log.setLevel(level)
