"""The errors boardsweep reports to its users: one line each, and an exit code.

Every error a user can cause or meet derives from :class:`BoardsweepError`;
the CLI turns each into one line ``boardsweep: error: ...`` on stderr and its
``exit_code`` in one place (:func:`boardsweep.pipeline.cli.commands.main`):

* :class:`InputError` (exit 2): the input is wrong (a spec, an option, a
  store that is not the one asked for, a format this version does not know);
  fix the input and run again;
* :class:`Fault` (exit 1): the input is right but something went wrong (a
  damaged store, a lost scheduler, a failing task); the message says how to
  get out.
"""

from __future__ import annotations

import errno
import threading

__all__ = ["BoardsweepError", "InputError", "Fault", "SweepError", "SchedulerLost", "StoreCreationFailed",
           "TasksFailed", "TaskOverdue", "StoreFull", "KernelExited", "SpecError", "BadWorkers", "BadDashboardAddress",
           "BadDaskConfig", "ClusterNotStarted", "NoWorkers", "NoWorkersLeft", "NotAScheduler", "BatchUnavailable",
           "JobsNotStarted", "StoreMismatch", "NoSweepStore", "GrowRefused", "UnknownFormat", "RootDamaged", "StoreDamaged",
           "ChunkUnreadable", "LayoutError", "StoreLocked", "NoExclusiveCreate", "StoreUnreachable",
           "ReportFolderError", "TooLarge", "BadSchedulerAddress", "OutputInvalid", "StoreIncomplete", "NotInWorker",
           "ArgumentTypeError", "NotASweep", "ReportDiskFull", "StoreBeingRewritten", "IntegerTooLarge", "ArraysMissing", "causes", "disk_full", "overdue",
           "one_line", "contained", "expect_flag", "INTERRUPTION_REPORTED"]

#: Set once the command has printed its interruption's line (:mod:`boardsweep.pipeline.cli.entry`'s
#: grace timer, which ends a process whose cleanup overruns, then prints none).
INTERRUPTION_REPORTED = threading.Event()


class BoardsweepError(Exception):
    """An error reported to the user in one line, with :attr:`exit_code`."""

    exit_code = 1


class InputError(BoardsweepError, ValueError):
    """Bad input: exit code 2."""

    exit_code = 2


class Fault(BoardsweepError, RuntimeError):
    """A fault (damage, a lost cluster, a failing task): exit code 1."""

    exit_code = 1


class SweepError(Fault):
    """The run could not finish; the message is one line for users (exit code 1)."""


class SchedulerLost(SweepError):
    """The Dask scheduler could not be reached, or went away mid-sweep."""


class StoreCreationFailed(SweepError):
    """The empty store could not be written (e.g. the disk is full)."""


class TasksFailed(SweepError):
    """Some tasks raised; the others finished and are in the store."""

    def __init__(self, message: str, failures: list[dict]) -> None:
        super().__init__(message)
        self.failures = failures


class TaskOverdue(SweepError):
    """A task ran past the task deadline (Dask's ``boardsweep.task-timeout``):
    the run ended; finished tasks are kept (exit code 1)."""


class StoreFull(SweepError):
    """A task could not write: the store's disk (or quota) is full.  Every other
    task would fail the same way, so the run stopped at the first (exit code 1)."""


def causes(exc: BaseException | None, most: int = 10) -> list[BaseException]:
    """``exc`` and what caused it (``__cause__``, else ``__context__``), outermost
    first: at most ``most`` errors, each once."""
    found: list[BaseException] = []
    while exc is not None and len(found) < most and exc not in found:
        found.append(exc)
        exc = exc.__cause__ or exc.__context__
    return found


def disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc``, or what caused it, says a disk or quota is full (ENOSPC, EDQUOT)."""
    return any(isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT) for e in causes(exc))


def overdue(where: str, seconds: float) -> TaskOverdue:
    """The one line for a task, described by ``where``, that ran past ``seconds``."""
    return TaskOverdue(
        f"a task ran past the task deadline of {seconds:g} s and was abandoned: {where}; the run ended and "
        "finished tasks are kept in the store: fix the game's kernel (a loop that never ends?) or raise the "
        "deadline (Dask's boardsweep.task-timeout, e.g. DASK_BOARDSWEEP__TASK_TIMEOUT=2h), then rerun the "
        "same command")


def one_line(exc: BaseException, named: bool = True) -> str:
    """``exc`` on one line: ``TypeName: message``, or the message alone where
    not ``named`` (the type's name where it has none)."""
    text = " ".join(str(exc).split())
    if not text:
        return type(exc).__name__
    return f"{type(exc).__name__}: {text}" if named else text


class KernelExited(RuntimeError):
    """A game's code left by a BaseException that is not an Exception
    (``sys.exit``, ``KeyboardInterrupt``, a plugin's own): reported as the
    task's error, which the run lists, never left to end a worker thread
    (the run would wait for that task forever)."""


def contained(exc: BaseException) -> BaseException:
    """``exc`` where it is an Exception, else a :class:`KernelExited` naming it."""
    if isinstance(exc, Exception):
        return exc
    return KernelExited(f"the game's code left with {one_line(exc)} (not an Exception; a kernel must raise "
                        "an Exception, never end the process)")


# spec/ and cluster/

class SpecError(InputError):
    """A sweep spec is invalid; the message names the file and the key."""


class BadWorkers(InputError):
    """A worker count the machine cannot hold, or not a positive integer (one line, exit 2)."""


class BadDashboardAddress(InputError):
    """A ``--dashboard-address`` that is not ``[HOST]:PORT`` on this machine (one line, exit 2)."""


class BadDaskConfig(InputError):
    """A Dask setting (environment or config file) of the wrong kind (one line, exit 2)."""


class ClusterNotStarted(Fault):
    """The local Dask cluster could not start (no free port, a thread limit, ...): one line, exit 1."""


class NoWorkers(Fault):
    """No worker joined the scheduler within the start timeout (one line, exit 1)."""


class NoWorkersLeft(SchedulerLost):
    """Every worker left mid-sweep and none joined within
    :func:`~boardsweep.pipeline.cluster.settings.no_workers_timeout` (one line, exit 1)."""


class NotAScheduler(ConnectionError):
    """``--scheduler`` names a listener that did not answer as a Dask scheduler in time (one line)."""


class BatchUnavailable(InputError):
    """``--cluster`` cannot be used here: dask-jobqueue, the batch system's
    commands or required settings are missing (one line for users)."""


class JobsNotStarted(Fault):
    """No worker job started in time, or submitting one failed (one line)."""

# store/

class StoreMismatch(InputError):
    """An existing store does not hold the sweep the spec describes."""



class NoSweepStore(StoreMismatch, FileNotFoundError):
    """Nothing at the URL, an empty folder, or something that is not a
    boardsweep sweep store, where a command or the API reads one (one line)."""


class GrowRefused(StoreMismatch):
    """NEW_SPEC is not a growth of the store's spec; nothing was touched."""

class UnknownFormat(InputError):
    """The store was written in a format (or with a random scheme) this code
    does not know: reading or resuming it could be silently wrong."""


class RootDamaged(Fault):
    """The store's root attributes (its ``zarr.json``) are damaged: exit 1, named, never guessed."""


class StoreDamaged(Fault, ValueError):
    """The store's finished cells are not all present and readable (exit 1)."""


class ChunkUnreadable(Fault, ValueError):
    """A chunk file exists but does not decode to a chunk of the array."""


class LayoutError(Fault, ValueError):
    """An array is not laid out as the writer needs (a task would write into
    a chunk other tasks' cells share), or its layout is not recognised."""


class StoreLocked(InputError):
    """Another run holds the store, or it cannot be locked (exit 2)."""


class NoExclusiveCreate(Exception):
    """The storage overwrote an object that a conditional put should have refused."""


class StoreUnreachable(Fault):
    """The storage behind a store stopped answering (exit 1; finished tasks are kept)."""

    @classmethod
    def during_run(cls, url: str, exc: BaseException) -> "StoreUnreachable":
        text = " ".join(str(exc).split())
        if not text or text == type(exc).__name__:  # fsspec's deadline says nothing more
            text = "no answer within the storage's deadline" if isinstance(exc, TimeoutError) else type(exc).__name__
        return cls(f"lost the storage of {url} mid-sweep ({type(exc).__name__}: {text}); finished tasks are "
                   "kept there: rerun the same command once it answers again to complete the store")

    @classmethod
    def at_open(cls, url: str, exc: BaseException) -> "StoreUnreachable":
        text = " ".join(str(exc).split()) or type(exc).__name__
        return cls(f"cannot reach the storage of {url} ({type(exc).__name__}: {text}); check the endpoint "
                   "(AWS_ENDPOINT_URL or fsspec's configuration) and that the server is up (nothing was changed)")

# views/


class ReportFolderError(InputError):
    """The report's folder holds files boardsweep did not write there, or cannot be written (exit 2)."""

# run/, plan/, cli/


class TooLarge(InputError):
    """The sweep cannot fit; the message names the size, the room and the keys to change."""


class BadSchedulerAddress(InputError):
    """A ``--scheduler`` address that is not one Dask can connect to."""


class OutputInvalid(Fault):
    """A game returned an output that does not match its declaration."""


class StoreIncomplete(Fault):
    """A digest was asked of a store whose sweep is not finished (exit 1)."""


class NotInWorker(RuntimeError):
    """``boardsweep.run`` was called by a worker process importing the user's script."""


class ArgumentTypeError(InputError, TypeError):
    """A Python API argument of the wrong type (``overwrite="False"``, ``sel="a=2"``):
    one line naming the argument and what was expected, nothing touched (exit 2)."""


def expect_flag(value, name: str) -> bool:
    """``value`` as a bool where it is one (numpy's too); else :class:`ArgumentTypeError`."""
    if isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")):
        return bool(value)
    raise ArgumentTypeError(f"{name}={value!r}: expected True or False, got {type(value).__name__}")


class NotASweep(InputError):
    """``ds.boardsweep`` on a Dataset that is not a sweep store's, or lacks what an answer needs (one line)."""


class ReportDiskFull(Fault):
    """``report``'s folder ran out of space (ENOSPC, EDQUOT): one line naming the
    folder, its partial files removed, exit 1 (not the user's input)."""


class StoreBeingRewritten(Fault):
    """A store read while a run changed its layout or grew it, again and again: read it when the run ends (exit 1)."""


class WorkerDied(RuntimeError):
    """A task's worker process died while running it (a kernel's ``abort()``,
    a crash, a signal, memory): the task's error, naming the game (Dask's
    ``KilledWorker`` in words)."""


class IntegerTooLarge(Fault):
    """An integer above 2**53 for an array the store keeps as float64 (a
    masked integer, store format 6), which float64 does not hold exactly:
    one line naming the array and the value, nothing written."""


class ArraysMissing(StoreDamaged):
    """A read of a store found arrays its root metadata names missing: a run
    creating or packing the store as it was read (read again), or damage."""
