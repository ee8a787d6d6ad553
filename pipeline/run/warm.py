"""Kernels made ready before the tasks need them, and the clock of compilation.

:func:`warm_kernels` simulates one short run of each of a run's first grid
points' variants, its result discarded: numba loads the kernels from its disk
cache, or compiles them, so that worker threads of the same process find them
ready.  The thread that does it while a run starts, and when it starts, are
:mod:`.startup`'s (:class:`.startup.WarmUp`).

Where numba's disk cache lacks units of the points' compiled code (a first
run; games that name them, ``extras["compiled_code"]``), :class:`Compilers`
deals the missing units to as many processes as there are cores: the
warm-up thread compiles its share, child processes the rest, writing the
cache.  numba compiles one function at a time per process (its compiler
lock), and the Python half of compiling holds the interpreter lock, which
the starting run needs for its imports.  The thread then loads each point's
code from the cache once the children compiling it are done, holding
numba's compiler lock while it waits, so that no thread of this process
compiles that code again meanwhile.

:class:`CompileClock` measures, per thread, the time spent compiling
kernels, loading them from the cache or waiting for another thread's
compilation, which the run reports apart from kernel time; the first real
compilation in a Dask worker is announced on the event topic
:data:`COMPILING_TOPIC`.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
import time

import numpy as np
from numba.core import config, event
from numba.core.compiler_lock import global_compiler_lock

from ...core.games import Game
from ..plan import replicate_seed

__all__ = ["warm_points", "warm_kernels", "CompileClock", "COMPILE_CLOCK", "COMPILING_TOPIC", "Compilers",
           "COMPILE_WAIT_S"]

#: Dask event topic of the first numba compilation in a worker (message: the worker's name).
COMPILING_TOPIC = "boardsweep-compiling"

#: Seconds the warm-up waits at most for a child process compiling a point's code (then compiles it itself).
COMPILE_WAIT_S = 120.0


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
                stop: threading.Event | None = None, compilers: "Compilers | None" = None) -> None:
    """Simulate one short run (the run shape given, its checkpoint dimension
    cut to 4) of each of ``points``, stopping early once ``stop`` is set; with
    ``compilers``, in their order, each point once its code is compiled.  An
    error is left for the real task to report."""
    length = min(run_shape[game.checkpoint_of], max(game.run_shape_minimum.get(game.checkpoint_of, 1), 4))
    shape = {**run_shape, game.checkpoint_of: length}
    first = np.asarray([length], dtype=np.asarray(checkpoints).dtype)
    for params, children in (compilers.ordered(points) if compilers is not None else [(p, []) for p in points]):
        if stop is not None and stop.is_set():
            return
        if children:
            compilers.wait(children, stop)
        try:
            game.simulate(params, replicate_seed(root, params, 0), shape, first)
        except BaseException as exc:  # noqa: BLE001 - sys.exit() too: the task that runs this point reports it
            if isinstance(exc, KeyboardInterrupt) and threading.current_thread() is threading.main_thread():
                raise  # a Ctrl-C, where the kernels load in the command's own thread (WarmUp): it ends the command
            continue


def warm_kernels(game: Game, root: int, points: list[dict], run_shape: dict, checkpoints: np.ndarray,
                 stop: threading.Event, on_compile=None, compilers: "Compilers | None" = None) -> float:
    """:func:`warm.warm_points` in this thread; ``on_compile`` is called
    when it starts compiling a kernel (not loading it from numba's cache),
    or ``compilers`` do.  Returns the seconds it spent compiling, loading
    kernels or waiting for ``compilers`` (:class:`CompileClock`)."""
    _WARMING.on_compile = on_compile
    c0 = COMPILE_CLOCK.seconds()
    try:
        if compilers is not None and compilers.start(points):
            if on_compile is not None:
                _WARMING.on_compile = None
                on_compile()
            compilers.compile_here()
        warm_points(game, root, points, run_shape, checkpoints, stop, compilers)
    finally:
        _WARMING.on_compile = None
    return COMPILE_CLOCK.seconds() - c0


#: What a child process of :class:`Compilers` runs: each (function, arguments) pickled on its standard input.
_CHILD = """
import pickle, sys
for function, args in pickle.load(sys.stdin.buffer):
    try:
        function(*args)
    except Exception:
        pass
"""


class Compilers:
    """The compiled code of a run's first points that numba's disk cache
    lacks, compiled in parallel (see the module docstring): the units missing
    (``game.extras["compiled_code"]``) are dealt in turn to as many processes
    as this process may use cores, this one included (its share compiled in
    the warm-up thread, the others' in child processes that write the cache;
    ``game.extras["compile_code"]``).  Nothing is started for a game without
    these entries, where numba does not compile, or for one unit missing."""

    def __init__(self, game: Game, run_shape: dict) -> None:
        self._game, self._shape = game, run_shape
        self._children: list[subprocess.Popen] = []
        self._here: list = []  # the units this process compiles
        self._needs: list[list[subprocess.Popen]] = []  # per point of :meth:`start`, the children compiling its code
        self._lock = threading.Lock()
        self._closed = False

    def start(self, points: list[dict]) -> bool:
        """Start the children for ``points`` (their share of the units missing); whether any was started."""
        code, compile_code = (self._game.extras.get(name) for name in ("compiled_code", "compile_code"))
        self._needs = [[] for _ in points]
        if code is None or compile_code is None or config.DISABLE_JIT:
            return False
        try:
            found = [code(params, self._shape) for params in points]
        except Exception:  # noqa: BLE001 - the task at that point reports it
            return False
        missing = list(dict.fromkeys(unit for units in found for unit, cached in units.items() if not cached))
        slots = min(len(missing), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else
                    os.cpu_count() or 1)
        if slots < 2:
            return False
        share = [missing[(slot + slots - 1) % slots::slots] for slot in range(slots)]  # slot 0: this process, last
        self._here = share[0]
        for units in share[1:]:
            child = self._spawn([(compile_code, (unit,)) for unit in units])
            for needs, point in zip(self._needs, found):
                if child is not None and set(units) & set(point):
                    needs.append(child)
        return bool(self._children)

    def cached(self, points: list[dict]) -> bool:
        """Whether numba's disk cache holds every unit of ``points``' compiled
        code (False for a game that does not name its units)."""
        code = self._game.extras.get("compiled_code")
        if code is None or config.DISABLE_JIT:
            return False
        try:
            return all(all(units.values()) for units in (code(params, self._shape) for params in points))
        except Exception:  # noqa: BLE001 - the task at that point reports it
            return False

    def compile_here(self) -> None:
        """Compile this process's share of the units (an error is left for the tasks to report)."""
        compile_code = self._game.extras.get("compile_code")
        for unit in self._here:
            try:
                compile_code(unit)
            except Exception:  # noqa: BLE001, S112 - the tasks that need it report it
                continue

    def _spawn(self, calls: list) -> subprocess.Popen | None:
        """A child process making ``calls`` (function, arguments), or None when none could start."""
        try:
            data = pickle.dumps(calls)
        except Exception:  # noqa: BLE001 - not picklable: compiled where used
            return None
        package = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules[__package__.split(".")[0]].__file__)))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (package, os.environ.get("PYTHONPATH")) if p)}
        with self._lock:
            if self._closed or not sys.executable:  # no interpreter to start (an embedding program)
                return None
            try:
                child = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE, env=env,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            except OSError:
                return None
            self._children.append(child)
        try:
            child.stdin.write(data)
            child.stdin.close()
        except OSError:  # it ended already: the code is compiled where used
            pass
        return child

    def ordered(self, points: list[dict]) -> list[tuple[dict, list[subprocess.Popen]]]:
        """``points`` (those of :meth:`start`), each with the children compiling its code:
        those that need none first."""
        needs = self._needs if len(self._needs) == len(points) else [[] for _ in points]
        order = sorted(range(len(points)), key=lambda i: len(needs[i]))
        return [(points[i], needs[i]) for i in order]

    def wait(self, children: list[subprocess.Popen], stop: threading.Event | None = None) -> None:
        """Wait for ``children`` (at most :data:`COMPILE_WAIT_S`, or until ``stop``
        is set), holding numba's compiler lock: no thread of this process
        compiles meanwhile what they are compiling."""
        deadline = time.monotonic() + COMPILE_WAIT_S
        with global_compiler_lock:
            for child in children:
                while child.poll() is None and time.monotonic() < deadline and not (stop is not None and stop.is_set()):
                    try:
                        child.wait(0.02)
                    except subprocess.TimeoutExpired:
                        continue

    def close(self) -> None:
        """End the children still running (their code no longer needed) and start no more."""
        with self._lock:
            self._closed = True
            children = list(self._children)
        for child in children:
            if child.poll() is None:
                child.kill()
            child.wait()
