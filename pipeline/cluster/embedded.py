"""The embedded cluster: a :class:`distributed.LocalCluster` on this machine,
its workers threads of this process on 127.0.0.1 only (or worker processes,
when Dask's config asks), and the client a run gets from it."""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import signal
import threading
from contextlib import ExitStack, contextmanager
from typing import Iterator

from ..errors import ClusterNotStarted, one_line
from .dashboard import dashboard_address, pages_on_first_visit
from .settings import Target

__all__ = ["embedded_cluster", "embedded_client", "start_task_threads"]

#: Seconds a worker's task threads may take to start (:func:`start_task_threads`).
THREAD_START_S = 10.0
#: Seconds the workers' task threads have to be running once the cluster is up (:func:`_start_threads`).
THREADS_READY_S = 2 * THREAD_START_S
#: Seconds the whole start (cluster, client, task threads) may take in a main thread (:func:`_start_deadline`).
START_S = 25.0
#: Seconds the cluster's close may take before the run goes on without it (:func:`close_within`).
CLOSE_S = 10.0


def start_task_threads(dask_worker) -> None:
    """Start ``dask_worker``'s task threads now, before any task is given to it.

    Dask's thread pool counts a thread whose start failed (``ulimit -v`` or
    ``ulimit -u`` reached) as running, so the worker would never start another
    and its tasks would wait forever; started here, a failure is the run's one
    line ("cannot start a thread") before anything is computed.  Run on every
    worker of a cluster started here (``client.run``)."""
    pool = dask_worker.executors["default"]
    started = [pool.submit(int) for _ in range(dask_worker.state.nthreads)]
    for future in started:
        future.result(timeout=THREAD_START_S)



def embedded_cluster(workers: int | None, dashboard: str = "127.0.0.1:0"):
    """The cluster ``boardsweep run`` starts when given no other: ``workers``
    single-threaded workers (default: one per CPU), on 127.0.0.1 only, its
    dashboard at ``dashboard``.

    By default the workers are threads of this process (no process to spawn,
    kernels compiled once; every kernel releases the GIL) that talk to the
    scheduler in-process (``inproc://``: no message is serialised or sent
    through a socket, about 4 ms less per task); worker processes, over TCP on
    127.0.0.1, when Dask's config says ``boardsweep.processes: true``
    (``DASK_BOARDSWEEP__PROCESSES=True``): each given one task at a time,
    and a task whose worker process died (a kernel that calls ``abort()``)
    failed at once (Dask's ``KilledWorker``), not given to every worker in
    turn to kill it too.  Either way only web servers
    listen, on ``dashboard``'s host (the scheduler's) and 127.0.0.1 (the
    workers'); :func:`dashboard_link` gives the scheduler's link.

    The scheduler's web server listens at ``dashboard`` from the start, but
    its Bokeh pages are added on the first visit (:func:`pages_on_first_visit`):
    importing Bokeh costs half a second of CPU, which a run nobody watches
    never pays."""
    import dask
    from distributed import LocalCluster

    processes = _uses_processes()
    late = importlib.util.find_spec("bokeh") is not None  # without Bokeh: Dask's own "needs bokeh" page at once
    scheduler_kwargs = {"dashboard": False} if late else {}
    if processes:  # a task whose worker process died (a kernel's abort()) fails, not given to the next
        scheduler_kwargs["allowed_failures"] = 0  # worker to kill too; one task a worker: only it is blamed
    one_each = {"distributed.scheduler.worker-saturation": 1.0} if processes else {}
    with dask.config.set(one_each):
        cluster = LocalCluster(
            n_workers=workers or os.cpu_count() or 1,  # as targets.local_workers counts them
            threads_per_worker=1,
            processes=processes,
            memory_limit="auto" if processes else 0,  # threads share one process: no per-worker limit
            protocol="tcp://" if processes else "inproc://",
            host="127.0.0.1" if processes else None,  # processes: scheduler and workers on loopback only
            worker_class=None if processes else _loopback_worker(),
            dashboard_address=dashboard,
            # a failing task is reported once by the run, not by each worker; -v keeps Dask's own records
            silence_logs=False if logging.getLogger().handlers else logging.CRITICAL,
            scheduler_kwargs=scheduler_kwargs or None,
            **({"preload": ["boardsweep.pipeline.cluster.worker_logs"]} if processes else {}),  # Ctrl-C left here
        )
    if late:
        pages_on_first_visit(cluster.scheduler)
    return cluster


@functools.lru_cache(maxsize=None)
def _loopback_worker():
    """Dask's :class:`distributed.Worker` with its web server (``/health``,
    ``/metrics``; no Bokeh pages) on 127.0.0.1 only: a worker that talks
    in-process has no host of its own, and would listen on every interface."""
    from distributed import Worker

    class LoopbackWorker(Worker):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **{**kwargs, "dashboard_address": "127.0.0.1:0", "dashboard": False})

        async def close(self, *args, executor_wait: bool = False, **kwargs):
            # never wait for a kernel still running (a Ctrl-C, a task past its deadline): its
            # thread cannot be stopped; it is a daemon, and ends with the process
            return await super().close(*args, executor_wait=executor_wait, **kwargs)

    return LoopbackWorker



def _uses_processes() -> bool:
    """Whether the embedded cluster's workers are processes (Dask's config ``boardsweep.processes``)."""
    import dask

    return bool(dask.config.get("boardsweep.processes", False))


def _start_threads(client) -> None:
    """:func:`start_task_threads` on every worker, given :data:`THREADS_READY_S`
    seconds: under ``ulimit -v`` a thread whose start fails may never say so
    (Python waits for it), and the run would wait for good."""
    try:
        client.run(start_task_threads, callback_timeout=THREADS_READY_S)
        return
    except TimeoutError:
        pass
    # raised outside the handler (no TimeoutError as its context): the one line of a thread that cannot start
    raise RuntimeError(f"can't start new thread: the workers' task threads were not running after "
                       f"{THREADS_READY_S:.0f} s")


@contextmanager
def _start_deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`ClusterNotStarted` in this thread after ``seconds`` (SIGALRM), in
    the main thread where no one else handles SIGALRM; elsewhere no deadline.

    Under ``ulimit -v`` a thread whose start fails can leave Python waiting for
    it for good (``Thread.start`` waits for the thread to say it runs): the
    client's start waited on an event loop stuck so (one run in twelve at 450 MB).
    A signal's handler runs in a wait of the main thread; no timeout on another
    thread can end such a wait."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None):
        yield
        return

    def overdue(signum, frame):
        raise ClusterNotStarted(f"the local Dask cluster did not start within {seconds:.0f} s (a thread that could "
                                "not start under this process's limits, ulimit -v or ulimit -u?); nothing was "
                                "computed, rerun with higher limits or fewer --workers")

    previous = signal.signal(signal.SIGALRM, overdue)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def close_within(closing, seconds: float | None) -> None:
    """Close ``closing`` (a cluster, a client), waiting at most ``seconds``:
    under ``ulimit -v`` a worker's close waited forever for a thread that
    never started (asyncio's ``to_thread``; Python waits for a thread's
    start).  Their threads are daemons: what is left ends with the process
    (``None``: wait)."""
    try:
        closing.close(timeout=seconds)
    except Exception:  # noqa: BLE001 - a close that times out or fails (a MemoryError under a limit): the
        pass  # run's results are written; what it would have released ends with the process


def embedded_client(stack: ExitStack, target: Target):
    """A client of a new :func:`embedded_cluster` for ``target`` (both closed
    by ``stack``); :class:`ClusterNotStarted` (one line) where it cannot start."""
    from distributed import Client

    try:
        with _start_deadline(START_S):
            cluster = embedded_cluster(target.workers, dashboard_address(target.dashboard_address))
            stack.callback(close_within, cluster, None if _uses_processes() else CLOSE_S)  # processes: wait (no orphans)
            client = Client(cluster)  # its event loop's thread, too, may fail to start
            stack.callback(close_within, client, CLOSE_S)
            _start_threads(client)
    except (OSError, RuntimeError) as exc:  # Dask's "Cluster failed to start", caused by the OSError
        cause = exc.__cause__ or exc.__context__ if isinstance(exc, RuntimeError) else exc
        if not isinstance(cause, OSError):
            raise
        raise ClusterNotStarted(f"the local Dask cluster could not start: {one_line(cause)} (no free port, too "
                                "many threads or files for this process's limits?); nothing was computed, "
                                "rerun once the cause is gone") from None
    if not logging.getLogger().handlers:  # -v (or a script's logging setup) keeps Dask's own records
        from .worker_logs import QuietTaskErrors

        client.register_plugin(QuietTaskErrors(), name="boardsweep-quiet-task-errors")
    return client
