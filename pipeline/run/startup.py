"""The run's start-up: what is imported when, the kernels' warm-up and the head start.

**The policy of deferred imports** (every module on the run's path follows it, none decides its own):

1. A command's module imports at its top only light modules (every command's start imports them all); its
   function imports what the command does.  Each folder's face is lazy (PEP 562): importing it costs nothing.
2. The run (:func:`boardsweep.pipeline.api.run_request`, the command's and the API's one path) calls :func:`begin`
   first, which imports numba (:func:`kernels`, after the run's first line) and starts the warm-up thread where
   the workers are threads of this process, and only then imports Dask's client, xarray and zarr
   (``run.execute_request``): those imports overlap the kernels' loading.
   Before that, what needs the store or ``distributed`` imports it inside the function (the request's URL and
   scheduler-address checks, the command's refusal of a URL, the API's client check).
3. Every other import is at its module's top; this module's own imports are light (no numba, Dask, xarray, zarr).

While the run starts (Dask imported, the store made, the cluster started), a
thread of this process (:class:`WarmUp`) loads or compiles the kernels of the
first grid points (:mod:`.warm`), so that worker threads of the same process
find them ready; on a new store it simulates the head start's first replicates
early (:func:`early_replicates`), then tasks until the cluster is ready (the
head start).  Nothing here writes to the store: the run writes those results as
a worker writes its own (:mod:`.head`).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, replace
from itertools import islice
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ...core.games import Game
from ..cluster import local_workers, task_timeout, threads_here
from ..errors import contained, overdue
from ..plan import decide, groups_points, plan_tasks, replicate_seed, task_count, TaskLayout
from ..spec import Spec
from ..urls import local_root
from .record import RunReport
from .request import RunRequest

if TYPE_CHECKING:  # numba: imported by the first warm-up (the policy's point 2, :func:`kernels`)
    from .warm import Compilers

__all__ = ["Hooks", "begin", "once", "kernels", "early_replicates", "layout_known_now", "WarmUp", "WARM_POINTS",
           "EARLY_BYTES", "EARLY_REPLICATES"]

#: Grid points whose kernels are warmed at most (in grid order).
WARM_POINTS = 16

#: Bytes of outputs the warm-up thread keeps of the replicates it simulates early (:class:`WarmUp`).
EARLY_BYTES = 64 * 2**20

#: Replicates the warm-up thread may simulate before the run offers it the tasks of a new store.
EARLY_REPLICATES = 256


def begin(request: RunRequest, on_compile: Callable[[], None] | None = None
          ) -> tuple[Callable[[], None] | None, WarmUp | None]:
    """(``on_compile`` made to tell once, the warm-up): the kernels of the
    request's spec loaded or compiled in a thread from now on, then the head
    start's first replicates simulated (:func:`early_replicates`), where the
    run's workers will be threads of this process; else no warm-up (None).
    The caller holds the warm-up as a context around the run."""
    told = once(on_compile)
    if not threads_here(request.target):
        return told, None
    return told, WarmUp(request.spec, told, early_replicates(request))


@dataclass
class Hooks:
    """Who hears of a run: ``on_start`` (the report, once the first tasks are
    under way), ``on_progress`` (done, total), ``on_compile`` (a worker starts
    compiling kernels; once), ``on_failure`` (one line per new error); and
    ``warming``, the kernels of the spec already warming in this process;
    ``on_packed`` (the store's URL and the run's Dask client, once a run that
    ran tasks has packed the complete store, its lock still held: the
    caller's work on the workers, the verdict's tests of each block)."""

    on_start: Callable[[RunReport], None] | None = None
    on_progress: Callable[[int, int], None] | None = None
    on_compile: Callable[[], None] | None = None
    on_failure: Callable[[str], None] | None = None
    warming: WarmUp | None = None
    on_packed: Callable[[str, Any], object] | None = None


def kernels() -> ModuleType:
    """The kernels' machinery (:mod:`.warm`: numba, its compile clock and
    compilers), imported by the first warm-up, after the run's first line
    (the policy's point 2): the one import this module defers."""
    from . import warm

    return warm


def once(callback: Callable[[], None] | None) -> Callable[[], None] | None:
    """``callback``, called at most once whichever thread calls it first
    (the run's "compiling kernels" notice: from the warm-up or a worker)."""
    if callback is None:
        return None
    told = threading.Lock()

    def first() -> None:
        if told.acquire(blocking=False):
            callback()

    return first


def _untimed(budget: float) -> tuple[float, int]:
    """The replicate timing of a layout decided before anything runs: never asked
    (:func:`plan.decide` times a replicate only for the layouts its callers leave out)."""
    raise AssertionError("a layout decided before the run timed a replicate")


def layout_known_now(spec: Spec, target) -> TaskLayout | None:
    """The task layout a new store's run decides (:func:`plan.decide`,
    replicates grouped for the local workers) where nothing needs timing
    first, for the run's first line and its head start; None where the run
    times a replicate to decide it."""
    if spec.task_seconds is not None or groups_points(spec):
        return None
    return decide(spec, None, _untimed, local_workers(target))


def early_replicates(request: RunRequest) -> list | None:
    """(parameters, seed) of the replicates the head start's first tasks hold
    (the last tasks, last first, as it takes them), where the run will
    create its store in a local folder that is not there yet and lays out
    its tasks without timing a replicate (given, or replicates grouped);
    else None.  At most :data:`EARLY_REPLICATES`."""
    spec = request.spec
    url = request.store or spec.default_store()
    if (request.extend or request.max_tasks is not None or spec.precision_stderr is not None
            or (root := local_root(url)) is None or os.path.lexists(root)):
        return None
    chosen = layout_known_now(spec, request.target)
    if chosen is None or task_count(spec, chosen) > EARLY_REPLICATES:
        return None
    replicates = ((params, replicate_seed(spec.seed, params, r))
                  for task in reversed(plan_tasks(spec, layout=chosen)) for _, params, reps in task.cells for r in reps)
    return list(islice(replicates, EARLY_REPLICATES))


class WarmUp:
    """The kernels of ``spec``'s first grid points (:data:`WARM_POINTS`)
    loaded or compiled in a thread, for workers that are threads of this
    process; ``on_compile`` is called if it starts a real compilation.
    Where numba's disk cache holds all of their code (:meth:`Compilers.cached`)
    it is loaded at once by the caller instead: loading holds the interpreter
    lock most of the time, so beside the imports that follow it took twice
    as long, and the thread's replicates (which release the lock) started
    later.

    Then, offered the tasks of a new store (:meth:`head_start`), the same
    thread simulates them, last first, while the run is still starting,
    until the run claims the rest for its workers (:meth:`claim`); it keeps the
    results in memory for the run to write (:meth:`head_results`).

    Until that offer, the thread simulates ``early`` replicates ((grid point's
    parameters, seed) each: those the head start's first tasks hold, where
    the command expects a new store), one after the other while Dask, xarray
    and zarr are imported, and keeps their outputs (at most
    :data:`EARLY_BYTES`); the head start's tasks take them instead of
    simulating them again (:meth:`stashed`).  A replicate's outputs depend
    only on its point and seed, so whatever tasks the run offers, a kept
    replicate is the one they would compute; those no task takes are dropped.

    A context: leaving it stops the thread after the point or task under
    way, and waits for it unless the run is being interrupted or the
    warm-up was abandoned.  The thread is a daemon, as Dask's worker threads
    are: Ctrl-C never waits for a compilation."""

    def __init__(self, spec: Spec, on_compile: Callable[[], None] | None = None,
                 early: list[tuple[dict, object]] | None = None) -> None:
        self.stop, self.seconds, self.wait = threading.Event(), [0.0], True
        self.spans: list[tuple[float, float]] = []  # when the warm-up compiled (:meth:`CompileClock.spans`)
        self._offer = threading.Condition()
        self._tasks: list | None = None  # offered for the head start; None: not told yet
        self._closed = False  # the run has claimed the tasks not taken
        self.taken: list = []  # tasks the head start took, finished or under way
        self.results: list = []  # (task, arrays, record) of those simulated
        self.errors: list = []  # (task, exception) of those that raised
        self._simulate: Callable | None = None  # a task -> (arrays, record), given with the tasks
        self._since = 0.0  # when the task under way started (time.monotonic())
        self._axes = tuple(spec.axes)
        self._stash: dict[tuple, tuple[dict, float]] = {}  # an early replicate's seed -> (outputs, seconds)
        self._used = 0.0  # seconds of the early replicates the head start took (counted as its tasks' kernel time)
        self._early = (spec.game, early or [], spec.run_shape, spec.simulated_checkpoints)
        self._kernels = kernels()
        self.compilers: Compilers = self._kernels.Compilers(spec.game, spec.run_shape)
        warm = (spec.game, spec.seed, [p for _, p in spec.resolved_points()[:WARM_POINTS]], spec.run_shape, spec.checkpoints,
                self.stop, on_compile, self.compilers)
        loaded = self.compilers.cached(warm[2])
        if loaded:  # loaded here, at once: the thread's replicates then start the soonest
            self._load(warm)
        self.thread = threading.Thread(target=self._work, args=(warm, loaded), name="boardsweep-warm", daemon=True)
        self.thread.start()

    def _load(self, warm: tuple) -> None:
        """:func:`warm_kernels` in this thread, its time and spans recorded."""
        clock = self._kernels.COMPILE_CLOCK
        mark = clock.count()
        self.seconds.append(self._kernels.warm_kernels(*warm))
        self.spans = clock.spans(mark)

    def _work(self, warm: tuple, loaded: bool) -> None:
        if not loaded:
            self._load(warm)
        self._ahead(*self._early)
        while True:
            with self._offer:
                while self._tasks is None and not (self._closed or self.stop.is_set()):
                    self._offer.wait()
                if self._closed or self.stop.is_set() or not self._tasks:
                    self._stash.clear()  # what no task of the head start took
                    return
                task = self._tasks.pop()
                self.taken.append(task)
                self._since = time.monotonic()
            try:
                used = self._used
                arrays, record = self._simulate(task)
                self.results.append((task, arrays, {**record, "kernel_s": record["kernel_s"] + self._used - used}))
            except BaseException as exc:  # noqa: BLE001 - sys.exit() too: the run reports it as a worker's failure
                self.errors.append((task, contained(exc)))

    def _ahead(self, game: Game, early: list, run_shape: dict, checkpoints: np.ndarray) -> None:
        """Simulate the ``early`` replicates, keeping their outputs, until the
        run offers its tasks (or stops the thread), or :data:`EARLY_BYTES` are kept."""
        kept = 0
        for params, seed in early:
            with self._offer:
                if self._tasks is not None or self._closed or self.stop.is_set():
                    break
            t0 = time.perf_counter()
            try:
                outputs = game.simulate(params, seed, run_shape, checkpoints)
            except BaseException:  # noqa: BLE001, S112 - sys.exit() too: the task that runs it reports it
                continue
            self._stash[_seed_key(seed)] = (outputs, time.perf_counter() - t0)
            kept += sum(np.asarray(v).nbytes for v in outputs.values())
            if kept >= EARLY_BYTES:
                break

    def stashed(self, game: Game, runs: int = 0) -> Game:
        """``game``, whose ``simulate`` gives a replicate this thread simulated
        early (:meth:`_ahead`) instead of simulating it again: for a head
        start's task of ``runs`` runs, which runs in this thread point by
        point then.  ``game`` itself where it simulates blocks and the task
        holds :data:`~.worker.BATCH_MIN_RUNS` runs or more beyond those kept:
        one block costs less than the runs simulated one by one (a money-game
        task of 40,000 runs: 0.4 s as a block, about 20 s point by point)."""
        from .worker import BATCH_MIN_RUNS  # imported by the run (simulate_task) before any head start

        if game.simulate_batch is not None and runs - len(self._stash) >= BATCH_MIN_RUNS:
            return game
        simulate = game.simulate

        def from_stash(params: dict, seed, run_shape: dict, checkpoints: np.ndarray) -> dict:
            found = self._stash.pop(_seed_key(seed), None)
            if found is None:
                return simulate(params, seed, run_shape, checkpoints)
            self._used += found[1]
            return found[0]

        return replace(game, simulate=from_stash, simulate_batch=None)

    def head_start(self, tasks: list, simulate: Callable | None = None) -> None:
        """Offer ``tasks`` (every task of a new store, in order; ``[]``: none)
        to the thread, once its kernels are warm, with ``simulate`` (a task
        -> its arrays and timing record, nothing written:
        :func:`boardsweep.pipeline.run.worker.simulate_task`); the first offer
        stands."""
        with self._offer:
            if self._tasks is None:
                self._tasks, self._simulate = (list(tasks) if simulate is not None else []), simulate
            self._offer.notify_all()

    def claim(self) -> set[str]:
        """Let the thread take no more tasks; the keys of those it took
        (finished, or under way: :meth:`head_results` waits for it)."""
        with self._offer:
            self._closed = True
            self._offer.notify_all()
            return {task.key for task in self.taken}

    def head_results(self) -> tuple[list, list]:
        """The tasks the thread simulated, (task, arrays, record) each, and
        those that raised, (task, exception) each, once the one under way has
        ended; each is handed out once (no more are taken).

        Raises :class:`errors.TaskOverdue` when the one under way runs past the
        task deadline (:func:`cluster.task_timeout`), naming it; the thread is
        left to end with the process (a thread cannot be stopped)."""
        if self.claim():
            deadline = task_timeout()
            self.thread.join(None if deadline is None else max(0.0, self._since + deadline - time.monotonic()))
            if self.thread.is_alive():
                self.wait = False  # nobody waits for it on leaving
                task = self.taken[-1]
                point = ", ".join(f"{axis}={task.params[axis]!r}" for axis in self._axes) or "the single grid point"
                raise overdue(f"replicates {task.start}-{task.stop - 1} at {point} (the head start, in this "
                              "process)", deadline)
        results, errors = list(self.results), list(self.errors)
        self.results.clear()
        self.errors.clear()
        return results, errors

    def _stop(self) -> None:
        with self._offer:
            self.stop.set()
            self._offer.notify_all()
        self.compilers.close()

    def finish(self) -> float:
        """Stop after the point under way; the seconds spent loading or compiling kernels
        (waiting at most the task deadline, :func:`cluster.task_timeout`, for a point
        whose kernel does not return: the thread is a daemon, left to end with the process)."""
        self._stop()
        self.thread.join(task_timeout())
        return self.seconds[-1]

    def abandon(self) -> None:
        """Stop after the point under way, without waiting for it: no task needs the kernels."""
        self._stop()
        self.wait = False

    def __enter__(self) -> "WarmUp":
        return self

    def __exit__(self, kind, *exc) -> None:
        self._stop()
        if kind is None and self.wait:
            self.thread.join(task_timeout())


def _seed_key(seed) -> tuple:
    """A replicate's seed (a SeedSequence, :func:`plan.tasks.replicate_seed`) as a dict key."""
    return tuple(np.atleast_1d(seed.entropy).tolist()), tuple(seed.spawn_key)


