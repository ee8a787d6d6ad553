"""Run a sweep on Dask: prepare the store, submit the missing tasks, follow them.

``run_sweep`` is what ``boardsweep run`` calls.  It takes the store's lock,
creates the store (or checks that an existing one was made by the same spec),
reads the done masks, and submits only the missing tasks to an embedded
:class:`distributed.LocalCluster` or to an existing scheduler.  Workers write
their own regions (see :mod:`boardsweep.pipeline.run.worker`); the client only receives small
timing records, and writes only the tasks its warm-up thread simulated while
the run started (the head start, :class:`boardsweep.pipeline.run.warm.WarmUp`),
with the workers' own function.

Failures are reported, never hidden, and never cost finished work:

* a task that raises does not stop the others; when every task has ended the
  run raises :class:`TasksFailed`, naming each failing grid point and its error
  (the failed cells stay missing, the others are done);
* a worker that dies mid-task is replaced by Dask, which reruns the task
  elsewhere; the rerun rewrites the whole region (writes are idempotent and the
  done flags are written last, see :func:`boardsweep.pipeline.store.write_region`);
* losing the scheduler raises :class:`SchedulerLost` naming its address; a
  rerun against a live scheduler resumes from the done masks.

The client, and the cluster behind it, come from
:mod:`boardsweep.pipeline.cluster.client`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import concurrent.futures
import logging
import re
import threading
import time
import uuid

import numpy as np
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Callable

from ..plan import growth as grow, precision, sizing
from ..cluster.client import LOOK_EVERY_S, NotAScheduler, NoWorkersLeft, Target, no_workers_timeout, task_timeout, check_dashboard_address, check_dask_config, check_workers, connect, dashboard_link, handshake, threads_here, tls_security  # noqa: F401 - tls_security is part of this module's API
from ..store.manifests import store_chunks
from ..store.remote import use_storage_options
from ..errors import InputError, SchedulerLost, StoreFull, contained, disk_full, overdue, StoreCreationFailed, SweepError, TasksFailed, one_line as _one_line
from ..plan.tasks import plan_exact, plan_tasks, task_count, task_shape
from .record import RunReport
from ..spec.parse import Spec
from ..store import Store, normalize_url
from .worker import run_exact, run_task, simulate_task, store_task, time_replicate
from .warm import COMPILING_TOPIC, WarmUp, once
from ..words import count

__all__ = [
    "RunReport", "run_sweep", "normalize_url", "SweepError", "SchedulerLost", "TasksFailed",
    "StoreCreationFailed",
    "tls_security",
]


class BadSchedulerAddress(InputError):
    """A ``--scheduler`` address that is not one Dask can connect to."""


_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?|\[?[0-9A-Fa-f:.]+\]?)$")


def check_scheduler_address(address: str) -> None:
    """Raise :class:`BadSchedulerAddress` (one line) unless ``address`` is
    ``[scheme://]host[:port]`` with a scheme Dask knows and a well-formed host and port."""
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    try:
        scheme, location = parse_address(address)
        get_backend(scheme)
        if scheme in ("tcp", "tls", "ws", "wss"):
            host, port = parse_host_port(location, 8786)
            if not _HOST.match(host) or not 0 < int(port) < 65536:
                raise ValueError(f"{location!r} is not HOST:PORT")
    except (ValueError, TypeError) as exc:
        raise BadSchedulerAddress(f"--scheduler {address!r}: not a Dask scheduler address ({_one_line(exc)}); "
                                  "expected e.g. tcp://HOST:8786 (nothing was created)") from None


def _check_scheduler_answers(address: str, security) -> None:
    """Raise :class:`SchedulerLost` (one line, nothing created) unless a Dask
    scheduler answers at ``address`` within Dask's connect timeout."""
    try:
        handshake(address, security)
    except NotAScheduler as exc:
        raise SchedulerLost(f"cannot reach the Dask scheduler at {address}: {exc} (nothing was created)") from None

#: The one line for ``--extend`` with ``--overwrite`` (``extend=True, overwrite=True``).
EXTEND_AND_OVERWRITE = "--extend grows a store in place and --overwrite replaces it: give one of them"


def run_sweep(
    spec: Spec,
    url: str | None = None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    overwrite: bool = False,
    extend: bool = False,
    max_tasks: int | None = None,
    security=None,
    pack: bool = True,
    on_start: Callable[[RunReport], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    target: Target | None = None,
    on_compile: Callable[[], None] | None = None,
    on_failure: Callable[[str], None] | None = None,
    warming: WarmUp | None = None,
) -> RunReport:
    """Run (or resume) ``spec`` into the store at ``url``.

    Parameters
    ----------
    spec : Spec
        The validated sweep.
    url : str, optional
        Store path or fsspec URL (default: the spec's, else results/<name>.zarr).
    workers : int, optional
        Workers of the embedded cluster (default: one per CPU; see :func:`cluster.embedded_cluster`).
    scheduler : str, optional
        Address of an existing Dask scheduler; no local cluster is started.
    overwrite : bool
        Replace a store made by a different spec.
    extend : bool
        Grow the existing store in place to ``spec`` (new grid values, more
        replicates; see :mod:`boardsweep.pipeline.plan.growth`); only new cells run.
    max_tasks : int, optional
        Submit at most this many simulation tasks (the rest stay missing, as
        after an interruption); for tests and staged runs.
    security : distributed.security.Security, optional
        TLS settings for the client of ``scheduler`` (see :func:`tls_security`).
    pack : bool
        Pack the store once it is complete and intact (few large chunks that
        plain ``xarray.open_zarr`` reads fast, :mod:`boardsweep.pipeline.store.packing`);
        ``False`` keeps one chunk per task.
    on_start, on_progress : callable, optional
        Called with the report once the client is up, and with (done, total)
        after each finished task.
    target : cluster.Target, optional
        Where the tasks run, in full (an existing client, worker jobs on a
        batch system, the dashboard, a performance report); replaces
        ``workers``, ``scheduler`` and ``security``.
    on_compile : callable, optional
        Called (from another thread) when a worker starts compiling numba
        kernels, once per run.
    on_failure : callable, optional
        Called with one line when a task fails with an error not seen before
        in this run (the run goes on; every failure is raised at the end).
    warming : warm.WarmUp, optional
        The kernels of ``spec`` already warming in a thread of this process,
        started by the caller before importing Dask (``boardsweep run`` does);
        by default the run starts one itself when its workers are threads of
        this process and the store is new.

    Returns
    -------
    RunReport

    Raises
    ------
    SchedulerLost
        The scheduler is unreachable or went away (finished tasks are kept).
    TasksFailed
        Some tasks raised; every other task ran to the end and is stored.
    """
    if extend and overwrite:
        raise InputError(EXTEND_AND_OVERWRITE)
    url = normalize_url(url or spec.default_store())
    use_storage_options(url, spec.storage_options)  # before any file system is made, workers included
    target = target or Target(workers=workers, scheduler=scheduler, security=security)
    check_workers(target.workers)  # before anything is created or started
    check_dashboard_address(target.dashboard_address)
    check_dask_config()
    if isinstance(target.scheduler, str) and target.scheduler:
        check_scheduler_address(target.scheduler)  # before anything is created
        _check_scheduler_answers(target.scheduler, target.security)
    t0 = time.perf_counter()
    st = Store(url)
    kind = st.refuse_foreign(overwrite)
    if kind == "rootless" and not overwrite:  # root metadata lost, arrays and records there: rebuilt from spec
        kind = st.rebuild_root(spec)
    sizing.check_fits(spec, url, existing=kind == "boardsweep")
    resumed = kind == "boardsweep" and not overwrite
    if resumed:  # refusals before the lock: nothing touched
        st.check_writable()
        spec, _ = grow.check(url, spec, extend, st.attrs)
    options = _Options(target, overwrite, max_tasks, pack, on_start, on_progress, on_compile, on_failure, warming)
    try:
        with st.losing_storage_ends_the_run(), ExitStack() as stack:
            stack.enter_context(st.lock())
            if resumed:
                spec = _grow(st, spec, extend)
            report = _run_locked(stack, st, spec, resumed, options)
    finally:
        if kind == "absent":
            st.remove_if_empty()
    report.wall_s = time.perf_counter() - t0
    return report


@dataclass
class _Options:
    """How a run goes: where its tasks run, what it may replace and how far it goes, who hears of it."""

    target: Target
    overwrite: bool = False
    max_tasks: int | None = None
    pack: bool = True
    on_start: Callable[[RunReport], None] | None = None
    on_progress: Callable[[int, int], None] | None = None
    on_compile: Callable[[], None] | None = None
    on_failure: Callable[[str], None] | None = None
    warming: WarmUp | None = None


def _grow(st: Store, spec: Spec, extend: bool) -> Spec:
    """``spec`` aligned with the store; with ``extend``, the store grown to it
    first (checked again now that the lock is held)."""
    spec, growth = grow.check(st.url, spec, extend, st.attrs)
    if extend and (growth or grow.interrupted(st.attrs)):
        st.apply_growth(spec, growth.describe(), spec.source)
    return spec


def _run_locked(stack: ExitStack, st: Store, spec: Spec, resumed: bool, options: _Options) -> RunReport:
    """The run itself, with the store's lock held."""
    auto = sizing.groups_points(spec)  # before the store's chunks are known
    if resumed:  # the store's grid chunks, whatever the grid now (a grown axis keeps them)
        spec = spec.with_block(spec.block, grid_chunks=store_chunks(st.attrs) or (1,) * len(spec.axes))
    clients: list = []
    on_compile = once(options.on_compile)

    def client_once():
        if not clients:
            clients.append(connect(stack, options.target))
            if on_compile:
                _on_first_compile(clients[0], on_compile)
        return clients[0]

    warming = options.warming
    if warming is None and not resumed and threads_here(options.target):  # workers share this process's kernels
        warming = WarmUp(spec, on_compile)
    if warming is not None:
        stack.enter_context(warming)
        if (not resumed and spec.task_seconds is None and not auto and spec.precision_stderr is None
                and options.max_tasks is None):
            warming.head_start(plan_tasks(spec), lambda task: simulate_task(
                spec.game, spec.seed, task, spec.run_shape, spec.checkpoints))
        else:
            warming.head_start([])
    calibration = ""
    if spec.task_seconds is not None:
        spec, calibration = _task_size(spec, st, resumed, client_once)
    elif auto:
        spec, calibration = _auto_size(spec, resumed, client_once)
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="boardsweep-prepare")
    preparing = pool.submit(_prepare, st, spec, options.overwrite)
    pool.shutdown(wait=False)
    try:
        if not resumed:  # a new store has every task to run: the cluster starts while it is prepared
            client_once()
    finally:
        concurrent.futures.wait([preparing])
    relaid, repaired, done, exact_done, tasks, finished = preparing.result()
    points = plan_exact(spec, exact_done)  # chunks of grid points with exact answers missing
    report = RunReport(store=st.url, tasks_total=task_count(spec))
    report.repaired = relaid + repaired
    report.block, report.calibration = spec.block, calibration
    report.points_per_task = int(np.prod(spec.task_grid, dtype=np.int64))
    max_tasks = options.max_tasks
    if max_tasks is not None:
        tasks = tasks[:max_tasks]
    head, tasks = _head_start(warming, tasks)
    if tasks or points or head:
        st.unpack()  # a packed store takes new cells only in the task layout
        if resumed:
            st.append_history(f"run {spec.source}: {len(tasks)} simulation tasks and "
                              f"{len(points)} exact answers missing, computing them"
                              + "".join(f"; repaired {r}" for r in report.repaired))
        client = client_once()
        report.dashboard = dashboard_link(client)
        report.workers = len(client.scheduler_info().get("workers", {}))
        report.pending = len(tasks) + len(points) + len(head)
        report.pending_exact = len(points)
        started: list = []

        def on_submitted() -> None:  # the first tasks are under way: the start is told
            if not started:
                started.append(True)
                if options.on_start:
                    options.on_start(report)

        progress = _Rounds(options.on_progress)
        while tasks or points or head:  # one round; a precision target may ask for more
            size = len(tasks) + len(points) + len(head)
            on_round = progress.round(size)
            failed: list[dict] = []
            try:
                if tasks or points:
                    _submit_and_wait(client, spec, st, tasks, points, report, on_round, options.target.scheduler,
                                     options.on_failure, on_submitted, _no_workers_deadline(options.target))
                else:  # the head start took every task
                    on_submitted()
            except TasksFailed as exc:
                failed = exc.failures
            failed += _store_head(warming, st, spec, report, on_round, len(tasks) + len(points), failed,
                                  options.on_failure)
            if failed:  # as a worker's failures: listed with the round's others
                raise _tasks_failed(failed, size, st.url)
            head = []
            done, points = st.read_done(), []
            tasks, finished = _plan(spec, st, done)
            if max_tasks is not None:
                tasks = tasks[:max(0, max_tasks - report.tasks_run)]
    report.complete = finished
    if warming is not None and report.tasks_run + report.exact_run:
        report.warm_s = warming.finish()
    elif warming is not None:  # nothing ran: no task waits for its kernels
        warming.abandon()
    if report.complete and options.pack:
        t0 = time.perf_counter()
        report.packing = st.pack(done)  # read after the last write: packing on S3 need not read it again
        report.pack_s = time.perf_counter() - t0
    return report


def _head_start(warming: WarmUp | None, tasks: list) -> tuple[list, list]:
    """``tasks`` split in two: those the warm-up thread simulated (or is
    simulating) while the run started, and the rest, for the workers; the
    thread takes no more from now on."""
    taken = warming.claim() if warming is not None else set()
    if not taken:
        return [], tasks
    return [task for task in tasks if task.key in taken], [task for task in tasks if task.key not in taken]


def _store_head(warming: WarmUp | None, st: Store, spec: Spec, report: RunReport, on_progress,
                finished: int, failures: list[dict], on_failure) -> list[dict]:
    """Write the tasks the warm-up thread simulated (waiting for the one
    under way) exactly as a worker writes its own (:func:`tasks.store_task`),
    and count them in ``report``; return the failures of those it could not
    simulate, described as a worker's are (told through ``on_failure`` as
    they would be, after the round's ``failures``)."""
    if warming is None:
        return []
    results, errors = warming.head_results()
    new: list[dict] = []
    for task, exc in sorted(errors, key=lambda error: (error[0].index, error[0].start)):  # task order
        new.append({"point": _where(spec, task), "task": f"replicates {task.start}-{task.stop - 1}",
                    "error": _one_line(exc)})
        _tell_new_failure(failures + new, on_failure)
    for task, arrays, record in results:
        try:
            record = store_task(st.url, task, arrays, record, _token(spec))
        except OSError as exc:  # a full disk, say: as a worker's failing write, the task's cells stay missing
            new.append({"point": _where(spec, task), "task": f"replicates {task.start}-{task.stop - 1}",
                        "error": _one_line(exc)})
            _tell_new_failure(failures + new, on_failure)
            continue
        report.records.append(record)
        report.kernel_s += record["kernel_s"]
        report.compile_s += record["compile_s"]
        report.write_s += record["write_s"]
        report.tasks_run += 1
        report.head_start += 1
        finished += 1
        if on_progress:
            on_progress(finished, 0)
    return new


def _token(spec: Spec) -> str:
    """The SHA-256 of the spec and its task layout (the store's arrays and
    chunks): a worker keeps a store's array metadata under it, between tasks
    and runs (a cluster given by ``--scheduler`` outlives a run).  The layout
    is hashed too because a ``[tasks] seconds`` spec is calibrated per run:
    the same spec may remake a store at the same URL with other chunks."""
    layout = json.dumps({"replicates_per_task": spec.block, "grid_chunks": [int(g) for g in spec.task_grid]})
    return hashlib.sha256((spec.canonical_json() + "\n" + layout).encode()).hexdigest()


def _prepare(st: Store, spec: Spec, overwrite: bool):
    """The store made or checked (:meth:`Store.prepare`), its damaged cells
    cleared, and the tasks planned: (relaid, repaired, done, exact_done,
    tasks, finished)."""
    relaid = st.prepare(spec, overwrite)
    repaired, done, exact_done = st.clear_damaged(spec)
    return (relaid, repaired, done, exact_done, *_plan(spec, st, done))


def _on_first_compile(client, callback: Callable[[], None]) -> None:
    """Call ``callback`` when a worker announces that it compiles kernels."""
    client.subscribe_topic(COMPILING_TOPIC, lambda _event: callback())


def _plan(spec: Spec, st: Store, done) -> tuple[list, bool]:
    """The simulation tasks to run now and whether the sweep is complete once
    they are: every missing block, or with a precision target the missing
    blocks of the current round (the decisions are stored as they are made)."""
    if spec.precision_stderr is None:
        return plan_tasks(spec, done), bool(done.all())
    # as written, -1 where not: a damaged chunk's cells are not in ``done`` (the check cleared them)
    decisions, tasks = precision.plan(spec, lambda name: st.read_array(name, unreadable_as_fill=True), done)
    st.write_whole(precision.decision_arrays(decisions, spec.shape))
    return tasks, precision.complete(decisions.values())


class _Rounds:
    """Progress over several rounds: (finished, total) counted across them."""

    def __init__(self, on_progress) -> None:
        self.on_progress, self.total = on_progress, 0

    def round(self, size: int):
        start = self.total  # tasks of the earlier rounds
        self.total += size
        if self.on_progress is None:
            return None
        return lambda finished, total: self.on_progress(start + finished, self.total)


#: Grid points whose replicate is timed to size the tasks of a ``[tasks] seconds`` spec.
CALIBRATION_POINTS = 3


def _task_size(spec: Spec, st: Store, resumed: bool, client_once) -> tuple[Spec, str]:
    """``spec`` with its replicates and grid points per task: recorded in
    the store when it resumes one made by the same spec, else calibrated on
    a worker so that a task takes about ``spec.task_seconds`` (replicate 0
    of the first, middle and last grid points, timed warm; the slowest
    counts): replicates first, then, where a grid point's replicates all fit,
    grid points.  Results do not depend on the task size; only the store's
    chunks do, so the size is chosen once and recorded."""
    if resumed:  # a store made by another spec is refused next, by Store.prepare
        attrs = st.attrs
        if json.loads(attrs.get("spec_canonical", "{}")) != spec.canonical() or "replicates_per_task" not in attrs:
            return spec, ""
        block, chunks = int(attrs["replicates_per_task"]), store_chunks(attrs) or (1,) * len(spec.axes)
        points = int(np.prod(chunks, dtype=np.int64))
        return spec.with_block(block, points, chunks), (
            f"{block} replicates and {points} grid points per task, as recorded in the store")
    seconds, timed = _time_replicate(spec, spec.task_seconds, client_once)
    block, per_task = task_shape(spec.task_seconds, seconds, spec.replicates, len(spec.resolved_points()))
    sized = spec.with_block(block, per_task)
    return sized, (
        f"{block} replicates x {int(np.prod(sized.task_grid, dtype=np.int64))} grid points per task: one "
        f"replicate takes {seconds:.3g} s on a worker (the slowest of {timed} grid points), tasks of "
        f"about {spec.task_seconds:g} s asked")


def _auto_size(spec: Spec, resumed: bool, client_once) -> tuple[Spec, str]:
    """``spec`` with the grid points per task of a large grid whose spec does
    not say them (:func:`sizing.auto_task_grid`): chosen from one replicate
    timed on a worker as for ``[tasks] seconds``, for a new store; a resumed
    store's ``spec`` has its recorded chunks already.  The choice goes in the
    store (``grid_chunks``), not in the spec's identity, which stays the text's."""
    if resumed:
        per_task = int(np.prod(spec.task_grid, dtype=np.int64))
        return spec, f"{count(per_task, 'grid point')} per task, as recorded in the store"
    seconds, timed = _time_replicate(spec, sizing.AUTO_TASK_S, client_once)
    sized = spec.with_block(spec.block, grid_chunks=sizing.auto_task_grid(spec, seconds))
    return sized, (
        f"{count(int(np.prod(sized.task_grid, dtype=np.int64)), 'grid point')} x {count(spec.block, 'replicate')} "
        f"per task, chosen automatically: one replicate takes {seconds:.3g} s on a worker (the slowest of "
        f"{timed} grid points); [tasks] points_per_task sets it")


def _time_replicate(spec: Spec, budget: float, client_once) -> tuple[float, int]:
    """(seconds one replicate takes on a worker, grid points timed): replicate
    0 of the first, middle and last grid points, timed warm, the slowest
    counting (:func:`tasks.time_replicate`)."""
    points = spec.resolved_points()  # read only: the worker gets copies
    picked = sorted({0, len(points) // 2, len(points) - 1})[:CALIBRATION_POINTS]
    future = client_once().submit(
        contained_call, time_replicate, spec.game, spec.seed, [points[i][1] for i in picked], spec.run_shape,
        spec.checkpoints, budget, pure=False, key=f"calibrate-{uuid.uuid4().hex[:8]}")
    deadline = task_timeout()  # the calibration is a task like the others
    try:
        return float(future.result(timeout=deadline)), len(picked)
    except TimeoutError:
        raise overdue(f"timing one replicate at {len(picked)} grid points to size the tasks", deadline) from None
    except Exception as exc:  # noqa: BLE001 - the game's own error, in one line
        raise SweepError(f"timing one replicate to size the tasks failed: {_one_line(exc)}") from None


#: Futures in flight per worker: enough to keep every worker busy, few enough
#: that the scheduler is never flooded (a grid of tens of thousands of points
#: submitted at once made the scheduler unresponsive and the client lose it).
IN_FLIGHT_PER_WORKER = 8
MIN_IN_FLIGHT = 32


#: Dask event topic on which a worker says that a task has started (message: the task's key):
#: the run's clock of :func:`cluster.task_timeout` starts then, not while the task queues.
TASK_STARTED_TOPIC = "boardsweep-task-started"


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


def _jobs(spec: Spec, url: str, tasks: list, points: list, tag: str):
    """(function, args, key, description) of every task to run, exact answers first."""
    game = spec.game
    token = _token(spec)
    for exact in points:
        yield (contained_call, (run_exact, game, exact, spec.run_shape, spec.checkpoints, url, token),
               f"{exact.key}-{tag}", {"point": _where(spec, exact), "task": "exact answer"})
    for task in tasks:
        yield (contained_call, (run_task, game, spec.seed, task, spec.run_shape, spec.checkpoints, url, token),
               f"sim-{task.key}-{tag}",
               {"point": _where(spec, task), "task": f"replicates {task.start}-{task.stop - 1}"})


def _no_workers_deadline(target: Target) -> float | None:
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
            try:
                client.cancel(list(live))
            except Exception:  # noqa: BLE001 - the scheduler went too: the run's wait ends anyway
                pass
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
            try:
                client.cancel(list(live.copy()))
            except Exception:  # noqa: BLE001 - the scheduler went too: the run's wait ends anyway
                pass
            return


#: Seconds given to restarting the workers of a cluster boardsweep did not start whose thread a task
#: past its deadline holds (through their nannies: a thread cannot be stopped, a process can).
RESTART_TIMEOUT_S = 20.0


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


def _submit_and_wait(client, spec, st: Store, tasks, points, report, on_progress, scheduler=None,
                     on_failure=None, on_submitted=None, no_workers_s: float | None = None) -> None:
    from distributed import as_completed

    url = st.url
    jobs = _jobs(spec, url, tasks, points, uuid.uuid4().hex[:8])
    window = max(MIN_IN_FLIGHT, IN_FLIGHT_PER_WORKER * max(report.workers, 1))
    in_flight, what = as_completed(), {}
    live: set = set()

    def submit_next() -> None:
        job = next(jobs, None)
        if job is not None:
            fn, args, key, described = job
            future = client.submit(fn, *args, key=key, pure=False)
            what[future.key] = described
            live.add(future)
            in_flight.add(future)

    total, finished, failures = len(tasks) + len(points), 0, []
    address = scheduler or getattr(client.scheduler, "address", None) or "(local cluster)"
    gone, stop = threading.Event(), threading.Event()
    deadline, started, late, stuck = task_timeout(), {}, [], []
    try:
        if deadline is not None:  # the clock of each task starts when its worker says it has started
            client.subscribe_topic(TASK_STARTED_TOPIC, lambda event: started.__setitem__(event[1], time.monotonic()))
            threading.Thread(target=_watch_deadline, args=(client, deadline, started, live, late, stuck, stop),
                             name="boardsweep-deadline-watch", daemon=True).start()
        for _ in range(window):
            submit_next()
        if on_submitted:
            on_submitted()
        if no_workers_s is not None:
            threading.Thread(target=_watch_workers, args=(client, no_workers_s, live, gone, stop),
                             name="boardsweep-workers-watch", daemon=True).start()
        for future in in_flight:
            live.discard(future)
            started.pop(future.key, None)
            if late:
                task = what.get(late[0], {"task": late[0], "point": "?"})
                where = f"{task['task']} at {task['point']}"
                if no_workers_s is not None:  # a cluster boardsweep did not start: free its thread for the rerun
                    where += (" (its worker was restarted)" if _restart_stuck_workers(client, stuck)
                              else " (restart its worker: its thread still runs the task)")
                raise overdue(where, deadline)
            if gone.is_set():
                raise NoWorkersLeft(
                    f"every worker of the Dask scheduler at {address} left mid-sweep and none joined within "
                    f"{no_workers_s:g} s (Dask's boardsweep.no-workers-timeout); finished tasks are kept in "
                    f"{url}: start workers (dask worker {address}) and rerun the same command to resume")
            if future.status == "error":
                error = _remote_error(future, address, url)
                lost = st.lost(error)
                if lost is not None:  # every other task would fail the same way: stop now
                    raise lost
                if disk_full(error):  # so would they here
                    raise StoreFull(f"the store's disk is full ({_one_line(error)}) at "
                                    f"{what[future.key]['point']}: the run stopped there; finished tasks are kept "
                                    f"in {url}: free space, then rerun the same command")
                failures.append({**what.pop(future.key), "error": _one_line(error)})
                _tell_new_failure(failures, on_failure)
            else:
                if future.status == "cancelled":
                    raise _lost(address, url)
                try:
                    record = future.result()
                except (OSError, asyncio.CancelledError, concurrent.futures.CancelledError) as exc:
                    raise _lost(address, url) from exc
                what.pop(future.key, None)
                report.records.append(record)
                report.kernel_s += record["kernel_s"]
                report.compile_s += record.get("compile_s", 0.0)
                report.write_s += record["write_s"]
                if record["key"].startswith("exact-"):
                    report.exact_run += 1
                    report.exact_solves += record.get("solves", 0)
                else:
                    report.tasks_run += 1
            report.max_in_flight = max(report.max_in_flight, len(live) + 1)
            submit_next()
            finished += 1
            if on_progress:
                on_progress(finished, total)
    except SchedulerLost:
        # the client's reconnection attempt logs a traceback when it is cut
        # short; the error raised here already says what happened
        _quiet_close(client)
        raise
    finally:
        stop.set()
        if client.status == "running" and live:
            client.cancel(list(live))
        if client.status == "running" and deadline is not None:
            client.unsubscribe_topic(TASK_STARTED_TOPIC)
    if failures:
        raise _tasks_failed(failures, total, url)


def _tasks_failed(failures: list[dict], total: int, url: str) -> TasksFailed:
    return TasksFailed(
        f"{len(failures)} of {total} tasks failed: {_failures_text(failures)}. The other "
        f"{total - len(failures)} tasks finished and are stored in {url}; fix the cause "
        "and rerun the same command to compute the missing cells",
        failures,
    )


def _tell_new_failure(failures: list[dict], on_failure) -> None:
    """Call ``on_failure`` with the newest failure unless an earlier one had the same error."""
    new = failures[-1]
    if on_failure and all(f["error"] != new["error"] for f in failures[:-1]):
        on_failure(f"a task failed at {new['point']} ({new['task']}): {new['error']}; the run goes on "
                   "(an error is shown once; all failures are listed at the end)")


def _failures_text(failures: list[dict], limit: int = 5) -> str:
    """Failures grouped by error, each error said once with where it happened:
    ``ErrorText (at dice_sides=4 (replicates 0-1), ... and 12 more)``."""
    by_error: dict[str, list[dict]] = {}
    for f in failures:
        by_error.setdefault(f["error"], []).append(f)
    parts = []
    for error, found in list(by_error.items())[:limit]:
        where = ", ".join(f"{f['point']} ({f['task']})" for f in found[:2])
        more = f" and {len(found) - 2} more" if len(found) > 2 else ""
        parts.append(f"{error} (at {where}{more})")
    if len(by_error) > limit:
        parts.append(f"and {len(by_error) - limit} other errors")
    return "; ".join(parts)


def _where(spec: Spec, task) -> str:
    """The grid points of a task: its one point as :func:`_point` says it,
    else the first and the count (``dice_sides=4, ... and 99 more points``)."""
    first = _point(spec, task.params)
    more = len(task.cells) - 1
    return first if more <= 0 else f"{first} and {more} more grid point{'s' if more > 1 else ''}"


def _point(spec: Spec, params: dict) -> str:
    """The grid point of ``params`` as ``axis=value, ...`` (or the single point)."""
    if not spec.axes:
        return "the single grid point"
    return ", ".join(f"{axis}={params[axis]!r}" for axis in spec.axes)


def _remote_error(future, address: str, url: str) -> BaseException:
    try:
        return future.exception()
    except (OSError, asyncio.CancelledError, concurrent.futures.CancelledError):
        raise _lost(address, url) from None


def _lost(address: str, url: str) -> SchedulerLost:
    return SchedulerLost(
        f"lost the Dask scheduler at {address} mid-sweep; finished tasks are kept in {url}: "
        "rerun the same command (with --scheduler pointing at a running scheduler) to resume"
    )


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
