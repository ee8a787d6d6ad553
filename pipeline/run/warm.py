"""Kernels ready before the tasks need them, and the clock of compilation.

While a run starts (Dask imported, the store made, the cluster started), a
thread of the ``boardsweep`` process simulates one short run of each of the
first grid points' variants, its result discarded (:class:`WarmUp`): numba
loads the kernels from its disk cache, or compiles them, so that worker
threads of the same process find them ready.  ``boardsweep run`` starts it
as soon as the spec is read, before Dask, xarray and zarr are imported.
On a new store the thread then simulates tasks until the cluster is ready
(the head start); nothing here writes to the store: the run writes those
results as a worker writes its own.

:class:`CompileClock` measures, per thread, the time spent compiling
kernels, loading them from the cache or waiting for another thread's
compilation, which the run reports apart from kernel time; the first real
compilation in a Dask worker is announced on the event topic
:data:`COMPILING_TOPIC`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Callable

import numpy as np
from numba.core import event

from ..errors import contained, overdue
from ...core.games import Game
from ..plan.tasks import replicate_seed
from ..spec.parse import Spec

__all__ = ["WARM_POINTS", "EARLY_BYTES", "WarmUp", "warm_points", "warm_kernels", "CompileClock", "COMPILE_CLOCK",
           "COMPILING_TOPIC", "once"]

#: Grid points whose kernels are warmed at most (in grid order).
WARM_POINTS = 16

#: Dask event topic of the first numba compilation in a worker (message: the worker's name).
COMPILING_TOPIC = "boardsweep-compiling"

#: Bytes of outputs the warm-up thread keeps of the replicates it simulates early (:class:`WarmUp`).
EARLY_BYTES = 64 * 2**20


class CompileClock(event.Listener):
    """Seconds each thread spent holding or waiting for numba's compiler lock:
    compiling, loading compiled kernels from the disk cache, or waiting while
    another thread compiles the kernel it needs (outermost lock only); and
    when, as spans of wall-clock time (``time.time()``, comparable between
    the run's processes and machines), so that the time the user waited for
    is their union, not their sum (:meth:`RunReport.compile_wait`)."""

    def __init__(self) -> None:
        self.local = threading.local()

    def seconds(self) -> float:
        """This thread's total so far."""
        return getattr(self.local, "total", 0.0)

    def spans(self, since: int = 0) -> list[tuple[float, float]]:
        """This thread's spans (start, end), from the ``since``-th on (:meth:`count`)."""
        return list(getattr(self.local, "spans", [])[since:])

    def count(self) -> int:
        """This thread's spans so far: a mark for :meth:`spans`."""
        return len(getattr(self.local, "spans", []))

    def on_start(self, ev: event.Event) -> None:
        depth = getattr(self.local, "depth", 0)
        if depth == 0:
            self.local.t0, self.local.w0 = time.perf_counter(), time.time()
        self.local.depth = depth + 1

    def on_end(self, ev: event.Event) -> None:
        if getattr(self.local, "depth", 0) == 0:  # started before this clock was registered
            return
        self.local.depth -= 1
        if self.local.depth == 0:
            self.local.total = self.seconds() + time.perf_counter() - self.local.t0
            if not hasattr(self.local, "spans"):
                self.local.spans = []
            self.local.spans.append((self.local.w0, time.time()))


class _CompilingNotice(event.Listener):
    """Tells the client, once per process, that a worker compiles kernels."""

    def __init__(self) -> None:
        self.sent = False

    def on_start(self, ev: event.Event) -> None:
        told = getattr(_WARMING, "on_compile", None)
        if told is not None:  # the run's own warm-up thread (:func:`warm_kernels`)
            _WARMING.on_compile = None
            told()
            return
        if self.sent:
            return
        try:
            from distributed import get_worker

            worker = get_worker()
        except (ImportError, ValueError):  # not in a Dask worker's task
            return
        self.sent = True
        worker.log_event(COMPILING_TOPIC, str(worker.name))

    def on_end(self, ev: event.Event) -> None:
        pass


#: The warm-up thread's callback for its first compilation (:func:`warm_kernels`).
_WARMING = threading.local()

#: This process's clock (registered once, at import).
COMPILE_CLOCK = CompileClock()
event.register("numba:compiler_lock", COMPILE_CLOCK)
event.register("numba:compile", _CompilingNotice())


def warm_points(game: Game, root: int, points: list[dict], run_shape: dict, checkpoints: np.ndarray,
                stop: threading.Event | None = None) -> None:
    """Simulate one short run (the run shape given, its checkpoint dimension
    cut to 4) of each of ``points``, stopping early once ``stop`` is set.  An
    error is left for the real task to report."""
    length = min(run_shape[game.checkpoint_of], max(game.run_shape_minimum.get(game.checkpoint_of, 1), 4))
    shape = {**run_shape, game.checkpoint_of: length}
    first = np.asarray([length], dtype=np.asarray(checkpoints).dtype)
    for params in points:
        if stop is not None and stop.is_set():
            return
        try:
            game.simulate(params, replicate_seed(root, params, 0), shape, first)
        except BaseException:  # noqa: BLE001, S112 - sys.exit() too: the task that runs this point reports it
            continue


def warm_kernels(game: Game, root: int, points: list[dict], run_shape: dict, checkpoints: np.ndarray,
                 stop: threading.Event, on_compile=None) -> float:
    """:func:`warm.warm_points` in this thread; ``on_compile`` is called
    when it starts compiling a kernel (not loading it from numba's cache).
    Returns the seconds it spent compiling or loading kernels
    (:class:`CompileClock`)."""
    _WARMING.on_compile = on_compile
    c0 = COMPILE_CLOCK.seconds()
    try:
        warm_points(game, root, points, run_shape, checkpoints, stop)
    finally:
        _WARMING.on_compile = None
    return COMPILE_CLOCK.seconds() - c0


class WarmUp:
    """The kernels of ``spec``'s first grid points (:data:`WARM_POINTS`)
    loaded or compiled in a thread, for workers that are threads of this
    process; ``on_compile`` is called if it starts a real compilation.

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
        self._early = (spec.game, early or [], spec.run_shape, spec.checkpoints)
        warm = (spec.game, spec.seed, [p for _, p in spec.resolved_points()[:WARM_POINTS]], spec.run_shape, spec.checkpoints,
                self.stop, on_compile)
        self.thread = threading.Thread(target=self._work, args=(warm,), name="boardsweep-warm", daemon=True)
        self.thread.start()

    def _work(self, warm: tuple) -> None:
        mark = COMPILE_CLOCK.count()
        self.seconds.append(warm_kernels(*warm))
        self.spans = COMPILE_CLOCK.spans(mark)
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

    _used = 0.0  # seconds of the early replicates the head start took (counted as its tasks' kernel time)

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

    def stashed(self, game: Game) -> Game:
        """``game``, whose ``simulate`` gives a replicate this thread simulated
        early (:meth:`_ahead`) instead of simulating it again: for the head
        start's tasks, which run in this thread."""
        simulate = game.simulate

        def from_stash(params: dict, seed, run_shape: dict, checkpoints: np.ndarray) -> dict:
            found = self._stash.pop(_seed_key(seed), None)
            if found is None:
                return simulate(params, seed, run_shape, checkpoints)
            self._used += found[1]
            return found[0]

        return replace(game, simulate=from_stash)

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
            from ..cluster.settings import task_timeout

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

    def finish(self) -> float:
        """Stop after the point under way; the seconds spent loading or compiling kernels
        (waiting at most the task deadline, :func:`cluster.task_timeout`, for a point
        whose kernel does not return: the thread is a daemon, left to end with the process)."""
        from ..cluster.settings import task_timeout

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
            from ..cluster.settings import task_timeout

            self.thread.join(task_timeout())


def _seed_key(seed) -> tuple:
    """A replicate's seed (a SeedSequence, :func:`plan.tasks.replicate_seed`) as a dict key."""
    return tuple(np.atleast_1d(seed.entropy).tolist()), tuple(seed.spawn_key)


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
