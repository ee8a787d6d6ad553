"""Run a sweep on Dask: prepare the store, submit the missing tasks, follow them.

``run_sweep`` is what ``boardsweep run`` calls (through :func:`execute` and a
:class:`~.request.RunRequest`).  It takes the store's lock, creates the store
(or checks that an existing one was made by the same spec), decides the task
layout once (:func:`boardsweep.pipeline.plan.sizing.decide`), reads the done
masks, and submits only the missing tasks to an embedded
:class:`distributed.LocalCluster` or to an existing scheduler
(:mod:`.dispatch`).  Workers write their own regions (see
:mod:`boardsweep.pipeline.run.worker`); the client only receives small
timing records, and writes only the tasks its warm-up thread simulated while
the run started (the head start, :class:`boardsweep.pipeline.run.startup.WarmUp`,
begun by the caller before this module was imported), with the workers' own function.

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

import concurrent.futures
import time
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field
from typing import Callable

from ..cluster import Target, connect, dashboard_link
from ..cluster import local_workers, tls_security  # noqa: F401 - tls_security is part of this module's API
from ..errors import BoardsweepError, StoreUnreachable, TasksFailed
from . import growth as grow
from ..plan import check_fits, decision_arrays, precision_complete, precision_plan, decide, GIVEN, GROUPED, TaskLayout
from ..plan import plan_exact, plan_tasks, task_count
from ..spec import Spec
from ..store import Store, local_root, normalize_url, use_storage_options
from .calibration import recorded_layout, time_on_worker
from .dispatch import submit_and_wait, token
from .failures import tasks_failed
from .head import HeadWrites, head_start, store_head
from .record import RunReport
from .request import RunRequest, check_target
from .startup import begin, Hooks, once, WarmUp
from .warm import COMPILING_TOPIC
from .worker import simulate_task

__all__ = ["RunReport", "run_sweep", "execute", "normalize_url", "tls_security"]


def run_sweep(spec: Spec, url: str | None = None, *, workers: int | None = None, scheduler: str | None = None,
              overwrite: bool = False, extend: bool = False, max_tasks: int | None = None, security=None,
              pack: bool = True, target: Target | None = None, warming: WarmUp | None = None,
              on_start: Callable[[RunReport], None] | None = None,
              on_progress: Callable[[int, int], None] | None = None,
              on_compile: Callable[[], None] | None = None,
              on_failure: Callable[[str], None] | None = None) -> RunReport:
    """Run (or resume) ``spec`` into the store at ``url``: :func:`execute` of
    the :class:`~.request.RunRequest` and :class:`~.startup.Hooks` these make,
    with the warm-up the run begins (:func:`.startup.begin`) where ``warming``
    is not given.

    ``workers``, ``scheduler`` and ``security`` (TLS settings for the client of
    ``scheduler``, :func:`tls_security`) make the target where ``target`` is
    not given; the other arguments are the request's and the hooks' fields.

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
    target = target or Target(workers=workers, scheduler=scheduler, security=security)
    request = RunRequest(spec, url, target, overwrite, extend, max_tasks, pack)
    if warming is None:
        on_compile, warming = begin(request, on_compile)
    with warming or nullcontext():
        return execute(request, Hooks(on_start, on_progress, on_compile, on_failure, warming))


def execute(request: RunRequest, hooks: Hooks | None = None) -> RunReport:
    """Run (or resume) ``request``: the target checked and the store's kind read
    before anything is created; the rest with the store's lock held; a store
    this run created and left empty removed."""
    hooks = hooks or Hooks()
    spec, url = request.spec, request.url
    if spec.storage_options:  # given to fsspec before any file system is made, workers included
        use_storage_options(url, spec.storage_options)
    check_target(request.target)  # before anything is created or started
    t0, started = time.perf_counter(), time.time()
    st = Store(url)
    try:  # refusals before the lock: nothing touched
        kind, _ = _decide(st, request, held=False)
    except BoardsweepError as exc:
        if not isinstance(exc, StoreUnreachable):
            st.lock().refuse_if_held()  # what was read may be another run's change under way: that run is named
        raise
    try:
        with st.losing_storage_ends_the_run(), ExitStack() as stack:
            stack.enter_context(st.lock())
            st.changed()  # decided again with the lock held: another run may have changed the store meanwhile
            _, resumed = _decide(st, request, held=True)
            aligned = _grow(st, spec, request.extend) if resumed else spec
            report = _run_locked(_Run(request, hooks, st, aligned, resumed, stack))
    finally:
        if kind == "absent":
            st.remove_if_empty()
    report.wall_s, report.started_at = time.perf_counter() - t0, started
    report.finish_compile(started, time.time())
    return report


def _decide(st: Store, request: RunRequest, held: bool) -> tuple[str, bool]:
    """(the store's kind, whether the run resumes it): anything boardsweep may
    not write refused, lost root metadata rebuilt, the growth checked (and,
    before the lock, the size).  Done once before the lock (refusals that touch nothing) and
    again once it is ``held``: every decision a writer acts on is made with
    the lock held, on the store as it is then."""
    spec = request.spec
    kind = st.refuse_foreign(request.overwrite)
    if kind == "rootless" and not request.overwrite:  # root metadata lost, arrays and records there: rebuilt
        kind = st.rebuild_root(spec, held)
    if not held:  # the free space, once: the lock file itself takes some
        check_fits(spec, local_root(st.url), existing=kind == "boardsweep")
    resumed = kind == "boardsweep" and not request.overwrite
    if resumed:
        st.check_writable()
        grow.check(st.url, spec, request.extend, st.attrs)
    return kind, resumed


def _grow(st: Store, spec: Spec, extend: bool) -> Spec:
    """``spec`` aligned with the store; with ``extend``, the store grown to it
    first (checked again now that the lock is held)."""
    spec, growth = grow.check(st.url, spec, extend, st.attrs)
    if extend and (growth or grow.interrupted(st.attrs)):
        st.apply_growth(spec, growth.describe(), spec.source)
    return spec


@dataclass
class _Run:
    """One run under way, its store's lock held: what was asked, the store,
    the spec (aligned with the store, never changed) and, once decided, its
    task layout, passed beside the spec to the planner, the store and the workers."""

    request: RunRequest
    hooks: Hooks
    st: Store
    spec: Spec
    resumed: bool
    stack: ExitStack
    layout: TaskLayout | None = None
    warming: WarmUp | None = None
    clients: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.on_compile = once(self.hooks.on_compile)  # told once, by the warm-up or a worker

    def client(self):
        """The Dask client, connected at the first call (:func:`cluster.connect`)."""
        if not self.clients:
            self.clients.append(connect(self.stack, self.request.target))
            if self.on_compile:
                self.clients[0].subscribe_topic(COMPILING_TOPIC, lambda _event: self.on_compile())
        return self.clients[0]


def _run_locked(run: _Run) -> RunReport:
    """The run itself, with the store's lock held."""
    _start_warming(run)
    run.layout = decide(run.spec, recorded_layout(run.spec, run.st.attrs) if run.resumed else None,
                                    lambda budget: time_on_worker(run.spec, budget, run.client),
                                    local_workers(run.request.target))
    if run.layout.how != GIVEN:  # a layout chosen now: its plan checked as the spec's was
        check_fits(run.spec, local_root(run.st.url), existing=True, layout=run.layout)
    _offer_head_start(run)
    put_right, repaired, done, exact_done, tasks, finished = _prepare_while_cluster_starts(run)
    points = plan_exact(run.spec, exact_done, layout=run.layout)  # chunks of grid points with exact answers missing
    report = RunReport(store=run.st.url, tasks_total=task_count(run.spec, run.layout), repaired=put_right + repaired,
                       block=run.layout.block, calibration=run.layout.note,
                       points_per_task=run.layout.points_per_task)
    max_tasks = run.request.max_tasks
    if max_tasks is not None:
        tasks = tasks[:max_tasks]
    head, tasks = head_start(run.warming, tasks)
    if tasks or points or head:
        done, finished = _run_rounds(run, report, tasks, points, head)
    report.complete = finished
    _finish(run, report, done)
    return report


def _start_warming(run: _Run) -> None:
    """The kernels warming in a thread of this process, where the workers are
    its threads: the caller's warm-up (:func:`.startup.begin`), stopped when the run ends."""
    run.warming = run.hooks.warming
    if run.warming is not None:
        run.stack.enter_context(run.warming)


def _offer_head_start(run: _Run) -> None:
    """Offer the warm-up thread every task of a new store whose layout the spec
    gives or whose replicates are grouped (a calibrated, automatic or
    precision-driven plan is not known yet)."""
    if run.warming is None:
        return
    spec = run.spec
    if (not run.resumed and run.layout.how in (GIVEN, GROUPED)
            and spec.precision_stderr is None and run.request.max_tasks is None):
        warming = run.warming  # its replicates simulated early taken as they are, where the task's runs are few
        run.warming.head_start(plan_tasks(spec, layout=run.layout), lambda task: simulate_task(
            warming.stashed(spec.game, task.runs), spec.seed, task, spec.run_shape, spec.checkpoints,
            spec.series_batches))
    else:
        run.warming.head_start([])


def _prepare_while_cluster_starts(run: _Run) -> tuple:
    """:func:`_prepare` in a thread while the cluster of a new store starts
    (a new store has every task to run)."""
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="boardsweep-prepare")
    preparing = pool.submit(_prepare, run.st, run.spec, run.layout, run.request.overwrite)
    pool.shutdown(wait=False)
    try:
        if not run.resumed:
            run.client()
    finally:
        concurrent.futures.wait([preparing])
    return preparing.result()


def _prepare(st: Store, spec: Spec, layout: TaskLayout, overwrite: bool):
    """The store made (chunked as ``layout``) or checked (:meth:`Store.prepare`),
    its damaged cells cleared, and the tasks planned: (put right, repaired,
    done, exact_done, tasks, finished)."""
    put_right = st.prepare(spec, overwrite, layout)
    repaired, done, exact_done = st.clear_damaged(spec, layout)
    return (put_right, repaired, done, exact_done, *_plan(spec, layout, st, done))


def _plan(spec: Spec, layout: TaskLayout, st: Store, done) -> tuple[list, bool]:
    """The simulation tasks (of ``layout``) to run now and whether the sweep is
    complete once they are: every missing block, or with a precision target
    the missing blocks of the current round (the decisions are stored as they are made)."""
    if spec.precision_stderr is None:
        return plan_tasks(spec, done, layout=layout), bool(done.all())
    # as written, -1 where not: a damaged chunk's cells are not in ``done`` (the check cleared them)
    decisions, tasks = precision_plan(spec, lambda name: st.read_array(name, unreadable_as_fill=True), done, layout)
    st.write_whole(decision_arrays(decisions, spec.shape))
    return tasks, precision_complete(decisions.values())


def _run_rounds(run: _Run, report: RunReport, tasks: list, points: list, head: list) -> tuple:
    """Run the missing tasks, round after round while a precision target asks
    for more; (the done mask read after the last, whether the sweep is complete)."""
    st, hooks, max_tasks = run.st, run.hooks, run.request.max_tasks
    st.unpack()  # a packed store takes new cells only in the task layout
    if run.resumed:
        st.append_history(f"run {run.spec.source}: {len(tasks)} simulation tasks and {len(points)} exact tasks "
                          "missing, computing them" + "".join(f"; repaired {r}" for r in report.repaired))
    client = run.client()
    report.dashboard = dashboard_link(client)
    report.workers = len(client.scheduler_info().get("workers", {}))
    report.pending, report.pending_exact = len(tasks) + len(points) + len(head), len(points)
    on_submitted = once(lambda: hooks.on_start and hooks.on_start(report))  # the first tasks are under way
    progress = _Rounds(hooks.on_progress)
    while tasks or points or head:  # one round; a precision target may ask for more
        size = len(tasks) + len(points) + len(head)
        on_round = progress.round(size)
        failed: list[dict] = []
        writes = HeadWrites(run.warming, st, token(run.spec, run.layout)) if run.warming is not None else None
        try:
            if tasks or points:  # the head start written while the workers run the rest (a local store)
                submit_and_wait(client, run.spec, run.layout, st, tasks, points, report, on_round,
                                run.request.target, hooks.on_failure, on_submitted, writes and writes.meanwhile())
            else:  # the head start took every task
                on_submitted()
        except TasksFailed as exc:
            failed = exc.failures
        failed += store_head(writes, run.spec, st, report, on_round, len(tasks) + len(points), failed,
                             hooks.on_failure)
        if failed:  # as a worker's failures: listed with the round's others
            raise tasks_failed(failed, size, st.url)
        head, points, done = [], [], st.read_done()
        tasks, finished = _plan(run.spec, run.layout, st, done)
        if max_tasks is not None:
            tasks = tasks[:max(0, max_tasks - report.tasks_run)]
    return done, finished


def _finish(run: _Run, report: RunReport, done) -> None:
    """The warm-up's compile time (where tasks ran), and a complete store packed where asked."""
    warming = run.warming
    if warming is not None and report.tasks_run + report.exact_run:
        report.warm_s = warming.finish()
        report.compile_spans += warming.spans
    elif warming is not None:  # nothing ran: no task waits for its kernels
        warming.abandon()
    if report.complete and run.request.pack:
        t0 = time.perf_counter()
        report.packing = run.st.pack(done)  # read after the last write: packing on S3 need not read it again
        report.pack_s = time.perf_counter() - t0
        if not report.packing and run.clients and run.hooks.on_packed is not None:
            _on_packed(run, report)


def _on_packed(run: _Run, report: RunReport) -> None:
    """The caller's work with the packed store and the run's workers
    (:class:`Hooks`' ``on_packed``: the verdict's tests, block by block, where
    the blocks are), timed; one that fails is left to be done again after the
    run (the summary computes the verdict itself), its reason in the report."""
    t0 = time.perf_counter()
    try:
        run.hooks.on_packed(run.st.url, run.clients[0])
    except Exception as exc:  # noqa: BLE001 - the store is complete: the summary makes the verdict itself
        report.on_packed_failed = f"{type(exc).__name__}: {exc}"
    report.on_packed_s = time.perf_counter() - t0


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
