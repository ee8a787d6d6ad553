"""Kernels ready before the tasks need them, and the clock of compilation.

While a run starts (Dask imported, the store made, the cluster started), a
thread of the ``boardsweep`` process simulates one short run of each of the
first grid points' variants, its result discarded (:class:`WarmUp`): numba
loads the kernels from its disk cache, or compiles them, so that worker
threads of the same process find them ready.  ``boardsweep run`` starts it
as soon as the spec is read, before Dask, xarray and zarr are imported.
Nothing here is stored: the tasks compute every result.

:class:`CompileClock` measures, per thread, the time spent compiling
kernels, loading them from the cache or waiting for another thread's
compilation, which the run reports apart from kernel time; the first real
compilation in a Dask worker is announced on the event topic
:data:`COMPILING_TOPIC`.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

import numpy as np
from numba.core import event

from ..core.games import Game
from .plan import replicate_seed
from .spec import Spec

__all__ = ["WARM_POINTS", "WarmUp", "warm_points", "warm_kernels", "CompileClock", "COMPILE_CLOCK",
           "COMPILING_TOPIC", "once"]

#: Grid points whose kernels are warmed at most (in grid order).
WARM_POINTS = 16

#: Dask event topic of the first numba compilation in a worker (message: the worker's name).
COMPILING_TOPIC = "boardsweep-compiling"


class CompileClock(event.Listener):
    """Seconds each thread spent holding or waiting for numba's compiler lock:
    compiling, loading compiled kernels from the disk cache, or waiting while
    another thread compiles the kernel it needs (outermost lock only)."""

    def __init__(self) -> None:
        self.local = threading.local()

    def seconds(self) -> float:
        """This thread's total so far."""
        return getattr(self.local, "total", 0.0)

    def on_start(self, ev: event.Event) -> None:
        depth = getattr(self.local, "depth", 0)
        if depth == 0:
            self.local.t0 = time.perf_counter()
        self.local.depth = depth + 1

    def on_end(self, ev: event.Event) -> None:
        if getattr(self.local, "depth", 0) == 0:  # started before this clock was registered
            return
        self.local.depth -= 1
        if self.local.depth == 0:
            self.local.total = self.seconds() + time.perf_counter() - self.local.t0


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
        except Exception:  # noqa: BLE001, S112 - the task that runs this point reports its error
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

    A context: leaving it stops the thread after the point under way, and
    waits for it unless the run is being interrupted or the warm-up was
    abandoned.  The thread is a
    daemon, as Dask's worker threads are: Ctrl-C never waits for a
    compilation."""

    def __init__(self, spec: Spec, on_compile: Callable[[], None] | None = None) -> None:
        self.stop, self.seconds, self.wait = threading.Event(), [0.0], True
        job = (spec.game, spec.seed, [p for _, p in spec.points()[:WARM_POINTS]], spec.run_shape, spec.checkpoints,
               self.stop, on_compile)
        self.thread = threading.Thread(target=lambda: self.seconds.append(warm_kernels(*job)),
                                       name="boardsweep-warm", daemon=True)
        self.thread.start()

    def finish(self) -> float:
        """Stop after the point under way; the seconds spent loading or compiling kernels."""
        self.stop.set()
        self.thread.join()
        return self.seconds[-1]

    def abandon(self) -> None:
        """Stop after the point under way, without waiting for it: no task needs the kernels."""
        self.stop.set()
        self.wait = False

    def __enter__(self) -> "WarmUp":
        return self

    def __exit__(self, kind, *exc) -> None:
        self.stop.set()
        if kind is None and self.wait:
            self.thread.join()


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
