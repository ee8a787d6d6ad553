"""The ``boardsweep`` command's entry point, importing almost nothing itself.

The command's modules (click, numpy, the games, Dask's configuration) take
a few tenths of a second to import; a Ctrl-C meanwhile would print Python's
traceback of the import under way.  Here it ends the command in one line,
with exit code 130, as a Ctrl-C later does (:func:`boardsweep.pipeline.cli.commands.main`).

Two more things are settled here, before anything else is imported:

* **Ctrl-C ends the command within seconds.**  The first Ctrl-C interrupts
  the command, which releases the store's lock and closes its cluster without
  waiting for running kernels; should that cleanup itself hang, the process
  ends anyway :data:`INTERRUPT_GRACE_S` seconds later, exit 130.  A second
  Ctrl-C is never needed (nor harmful).
* **numba's kernel cache is one the user can write** (:func:`.numba_cache.writable_numba_cache`):
  numba caches compiled kernels beside the package's sources, else under the
  user's cache folder (``~/.cache/numba``); where neither can be written
  (a read-only install, an unwritable HOME), numba would refuse to load the
  games ("cannot cache function"), so ``NUMBA_CACHE_DIR`` is set to a folder
  in the temporary directory before numba is imported;
* **OpenBLAS runs one thread** (:func:`one_blas_thread`): a run's workers
  are threads of this process, one per core;
* **a limited address space** (``ulimit -v``) gets two malloc arenas
  (:func:`fewer_arenas_under_a_memory_limit`): glibc's per-thread arenas took its room.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import warnings

from ..run import writable_numba_cache
from .interrupt import RECEIVED

__all__ = ["command_line", "INTERRUPT_GRACE_S", "one_blas_thread", "fewer_arenas_under_a_memory_limit"]

#: Seconds a Ctrl-C leaves the command to end by itself (store lock released, cluster
#: and batch jobs closed) before the process ends at once, with exit code 130.
INTERRUPT_GRACE_S = 5.0

_INTERRUPTED = RECEIVED  # set by the first Ctrl-C (:mod:`.interrupt`)


def _end_now() -> None:
    """The grace after a Ctrl-C is over: say so (once) and end the process, exit 130."""
    from ..errors import INTERRUPTION_REPORTED

    if not INTERRUPTION_REPORTED.is_set():
        try:
            from .interrupt import line

            os.write(2, f"{line()}\n".encode())
        except (OSError, ImportError):
            pass
    os._exit(130)


_RAISE_AGAIN = threading.Event()


def _on_interrupt(signum, frame) -> None:
    """SIGINT: the first raises KeyboardInterrupt and starts the grace timer; later ones wait
    for it, unless the first was raised where Python ignores it (:func:`_on_unraisable`)."""
    if _INTERRUPTED.is_set():
        if _RAISE_AGAIN.is_set():
            if _in_unraisable_hook(frame):  # it would be ignored again: once the hook has returned
                _interrupt_again_soon()
                return
            _RAISE_AGAIN.clear()
            raise KeyboardInterrupt
        return
    _INTERRUPTED.set()
    timer = threading.Timer(INTERRUPT_GRACE_S, _end_now)
    timer.daemon = True
    timer.start()
    raise KeyboardInterrupt


def _on_unraisable(unraisable) -> None:
    """``sys.unraisablehook``: a Ctrl-C that landed where Python ignores exceptions
    (a weakref callback of the import system, a ``__del__``) would print an
    "Exception ignored" traceback and be lost; it is raised again, in the main
    thread, instead.  Anything else goes to Python's own hook."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        _RAISE_AGAIN.set()
        _interrupt_again_soon()
        return
    sys.__unraisablehook__(unraisable)


def _interrupt_again_soon() -> None:
    """SIGINT's handler run again in the main thread in a moment (:func:`_on_unraisable`)."""
    import _thread

    timer = threading.Timer(0.05, _thread.interrupt_main)
    timer.daemon = True
    timer.start()


def _in_unraisable_hook(frame) -> bool:
    """Whether ``frame`` runs inside :func:`_on_unraisable` (where an exception is ignored)."""
    while frame is not None:
        if frame.f_code is _on_unraisable.__code__:
            return True
        frame = frame.f_back
    return False


#: glibc's ``mallopt`` parameter for the most malloc arenas (``M_ARENA_MAX``) and the
#: number kept where the address space is limited (``MALLOC_ARENA_MAX`` for child processes).
_M_ARENA_MAX, _ARENAS_UNDER_A_LIMIT = -8, 2


def one_blas_thread() -> None:
    """``OPENBLAS_NUM_THREADS=1`` (unless set), before numpy is imported.

    OpenBLAS starts a thread per core as it loads.  A run's workers are
    threads of this process, one per core, each single-threaded; a BLAS call
    beside them (the exact CLT variance's 123 x 123 solve, in the run's
    summary) woke OpenBLAS's threads to fight them for the cores: up to 70 ms
    a call on a busy 2-core machine, 0.2 ms on one thread.  Dask gives its
    worker processes one BLAS thread for the same reason.  Under a limited
    address space (``ulimit -v``) the pool's start, each thread reserving its
    stack, never finished, and the command hung importing scipy."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def fewer_arenas_under_a_memory_limit() -> bool:
    """Where this process's address space is limited (``ulimit -v``), spend
    it on the sweep, not on threads' reservations, and say whether it did:
    at most two malloc arenas (glibc's ``M_ARENA_MAX``, and
    ``MALLOC_ARENA_MAX`` for worker processes, unless set): glibc reserves
    64 MB of address space for each thread that allocates, up to eight per
    core, so the threads of a run took hundreds of MB of the limit before
    any data, and a thread's start then failed at random, up to an abort
    inside glibc ("cannot allocate memory for thread-local data").

    Call it before any thread starts."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return False
    if soft == resource.RLIM_INFINITY:
        return False
    if "MALLOC_ARENA_MAX" not in os.environ:
        os.environ["MALLOC_ARENA_MAX"] = str(_ARENAS_UNDER_A_LIMIT)
        try:
            import ctypes

            ctypes.CDLL(None).mallopt(_M_ARENA_MAX, _ARENAS_UNDER_A_LIMIT)
        except (OSError, AttributeError):  # not glibc: its allocator has no such arenas
            pass
    return True


def command_line() -> None:
    """:func:`boardsweep.pipeline.cli.commands.command_line`, imported under a Ctrl-C guard."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_interrupt)  # not where SIGINT is ignored (nohup, a background job)
        sys.unraisablehook = _on_unraisable
    try:
        writable_numba_cache()
        one_blas_thread()
        fewer_arenas_under_a_memory_limit()
        # multiprocessing's resource tracker (worker processes) inherits these: after a Ctrl-C
        # ends the process at once it would warn of the semaphores its workers leave
        sys.warnoptions.append("ignore::UserWarning:multiprocessing.resource_tracker")
        os.environ["BOARDSWEEP_QUIET_ZARR"] = "1"  # this process and its workers are boardsweep's (store.zarr_private.quiet)
        # and here, before any thread starts (a thread leaving catch_warnings restores the list it saw):
        # zarr's notes on what boardsweep does on purpose never reach the command's terminal
        warnings.filterwarnings("ignore", module=r"zarr(\.|$)")
        from .commands import command_line as run
    except BaseException as exc:  # a Ctrl-C may surface as another error (a class body's __set_name__ wraps it)
        if not (isinstance(exc, KeyboardInterrupt) or _INTERRUPTED.is_set()):
            raise
        try:
            sys.stderr.write("boardsweep: interrupted\n")
            sys.stderr.flush()
        finally:
            os._exit(130)
    run()


if __name__ == "__main__":
    command_line()
