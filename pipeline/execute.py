"""Run a sweep on Dask: prepare the store, submit the missing tasks, follow them.

``run_sweep`` is what ``boardsweep run`` calls.  It takes the store's lock,
creates the store (or checks that an existing one was made by the same spec),
reads the done masks, and submits only the missing tasks to an embedded
:class:`distributed.LocalCluster` or to an existing scheduler.  Workers write
their own regions (see :mod:`boardsweep.pipeline.tasks`); the client only receives small
timing records.

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
:mod:`boardsweep.pipeline.cluster`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import concurrent.futures
import logging
import re
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import grow, sizing, store
from .store import integrity, metadata, packing
from .store.chunkfiles import ChunkUnreadable
from .store.lock import StoreLock
from .store.remote import StoreUnreachable, unreachable
from .cluster import Target, connect, tls_security  # noqa: F401 - tls_security is part of this module's API
from .plan import plan_tasks
from .errors import InputError
from .spec import Spec
from .tasks import COMPILING_TOPIC, run_exact, run_task

__all__ = [
    "RunReport", "run_sweep", "normalize_url", "SweepError", "SchedulerLost", "TasksFailed",
    "StoreCreationFailed", "prepare_store",
    "tls_security",
]


@dataclass
class RunReport:
    """What a run did (for the summary and the benchmark)."""

    store: str
    tasks_total: int
    tasks_run: int = 0
    exact_run: int = 0
    kernel_s: float = 0.0  # simulating and solving, summed over tasks (compilation apart)
    compile_s: float = 0.0  # compiling kernels or loading them from numba's cache, summed over tasks
    write_s: float = 0.0
    wall_s: float = 0.0
    dashboard: str = ""
    workers: int = 0
    pending: int = 0
    complete: bool = False
    repaired: list[str] = field(default_factory=list)
    max_in_flight: int = 0
    block: int = 0
    calibration: str = ""
    packing: str = ""  # why a complete store was left in the task layout ("" when packed or not asked)
    pack_s: float = 0.0
    records: list[dict] = field(default_factory=list)


class SweepError(RuntimeError):
    """The run could not finish; the message is one line for users."""


class SchedulerLost(SweepError):
    """The Dask scheduler could not be reached, or went away mid-sweep."""


class StoreCreationFailed(SweepError):
    """The empty store could not be written (e.g. the disk is full)."""


class TasksFailed(SweepError):
    """Some tasks raised; the others finished and are in the store."""

    def __init__(self, message: str, failures: list[dict]) -> None:
        super().__init__(message)
        self.failures = failures


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

def normalize_url(url: str) -> str:
    """Absolute path for a local store (workers may run elsewhere), URLs unchanged."""
    if "::" in url:
        raise store.StoreMismatch(
            f"--store {url}: '::' chains fsspec URLs and cannot be part of a store path; "
            "choose a name without '::'"
        )
    for local in ("file://", "local://"):
        if url.startswith(local):
            url = url.removeprefix(local)
    if "://" in url:
        _check_protocol(url)
        return url
    return str(Path(url).expanduser().resolve())


#: Protocols whose stores a run cannot use: every worker process would see its own, empty one.
_PROCESS_LOCAL = {"memory": "keeps the store in one process's memory, which the worker processes do not share"}


def _check_protocol(url: str) -> None:
    """Refuse (one line) a store URL whose protocol fsspec does not know, whose
    package is not installed, or that workers cannot share."""
    import fsspec

    protocol = url.split("://", 1)[0]
    if protocol in _PROCESS_LOCAL:
        raise store.StoreMismatch(f"--store {url}: {protocol}:// {_PROCESS_LOCAL[protocol]}; "
                                  "choose a folder or shared object storage")
    try:
        fsspec.get_filesystem_class(protocol)
    except ImportError as exc:
        raise store.StoreMismatch(f"--store {url}: the {protocol}:// protocol needs a package that is not "
                                  f"installed ({_one_line(exc)})") from None
    except ValueError:
        raise store.StoreMismatch(f"--store {url}: unknown protocol {protocol!r}; give a folder or an fsspec URL "
                                  "such as s3://bucket/path") from None


#: What ``--overwrite`` may replace, and what boardsweep never touches.
_REFUSED = {
    "file": "is a regular file; a store is a folder",
    "zarr-group": "is a zarr group boardsweep did not make",
    "zarr-array": "is a zarr array boardsweep did not make",
    "folder": "is a folder of other files, not a boardsweep store",
    "unreadable": "holds a zarr.json that cannot be read",
}


def prepare_store(spec: Spec, url: str, overwrite: bool) -> list[str]:
    """Create the store, or check that it belongs to ``spec``, put its
    layout right and complete its arrays (lock already held).  Returns what
    was repaired on the way, in words.

    Only a boardsweep store is ever written into or replaced; anything else is
    refused, with ``--overwrite`` too.
    """
    kind = _refuse_foreign(url, overwrite)
    if kind == "leftover":  # what a removal cut short left: boardsweep's own folder, no arrays
        store.remove_store(url, [])
    if kind == "boardsweep":
        if not overwrite:
            store.check_spec(url, spec)
            repaired = [r for r in [packing.recover(url), _unpack_if_damaged(url)] if r]
            recreated = store.ensure_arrays(url, spec)
            return repaired + [f"array metadata recreated: {', '.join(recreated)}"] * bool(recreated)
        store.remove_store(url)
    _create(spec, url)
    return []


def _unpack_if_damaged(url: str) -> str:
    """Unpack a packed store whose packed copy is damaged: the task-chunked
    arrays move back, and the run checks and repairs them as usual."""
    if packing.layout(url) != "packed":
        return ""
    damage = integrity.check(url)
    if not damage:
        return ""
    packing.unpack(url)
    reason = next(iter(damage.reasons.values()), "")
    return f"packed copy damaged ({reason}): unpacked, packed again once complete"


def _refuse_foreign(url: str, overwrite: bool = False) -> str:
    """What is at ``url`` (see :func:`store.inspect`), refusing anything boardsweep may not write."""
    kind = store.inspect(url)
    if kind == "leftover" and not overwrite:
        raise store.StoreMismatch(
            f"--store {url} holds only what is left of a boardsweep store whose removal was cut short "
            "(its .boardsweep/ folder, no arrays); rerun with --overwrite to replace it (other files stay)")
    if kind in _REFUSED:
        raise store.StoreMismatch(
            f"--store {url} {_REFUSED[kind]}; boardsweep writes only into a new or empty folder or "
            "a store it made (--overwrite replaces only a boardsweep store), so nothing was touched"
        )
    return kind


def _create(spec: Spec, url: str) -> None:
    """Create the store; if that fails (disk full), remove what was made and say so."""
    try:
        store.create_store(url, spec)
    except OSError as exc:
        try:
            store.remove_store(url, [str(n) for n in store.template(spec, spec.game)[0].variables])
        except Exception:  # noqa: BLE001 - nothing more to clean than what exists
            pass
        raise StoreCreationFailed(
            f"could not create the store {url}: {_one_line(exc)}; what was written is removed: "
            "free space and rerun the same command"
        ) from None


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
) -> RunReport:
    """Run (or resume) ``spec`` into the store at ``url``.

    Parameters
    ----------
    spec : Spec
        The validated sweep.
    url : str, optional
        Store path or fsspec URL (default: the spec's, else results/<name>.zarr).
    workers : int, optional
        Worker processes of the embedded cluster (default: CPU count).
    scheduler : str, optional
        Address of an existing Dask scheduler; no local cluster is started.
    overwrite : bool
        Replace a store made by a different spec.
    extend : bool
        Grow the existing store in place to ``spec`` (new grid values, more
        replicates; see :mod:`boardsweep.pipeline.grow`); only new cells run.
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
    url = normalize_url(url or spec.default_store())
    target = target or Target(workers=workers, scheduler=scheduler, security=security)
    if isinstance(target.scheduler, str) and target.scheduler:
        check_scheduler_address(target.scheduler)  # before anything is created
    t0 = time.perf_counter()
    kind = _refuse_foreign(url, overwrite)
    sizing.check_fits(spec, url, existing=kind == "boardsweep")
    if kind == "boardsweep" and not overwrite:  # refusals before the lock: nothing touched
        store.check_writable(url)
        spec, _ = grow.check(url, spec, extend)
    try:
        with ExitStack() as stack:
            stack.enter_context(StoreLock(url))
            if kind == "boardsweep" and not overwrite:
                spec = _grow(url, spec, extend)
            report = _run_locked(stack, spec, url, target, overwrite, max_tasks,
                                 on_start, on_progress, pack, on_compile)
    except Exception as exc:
        if unreachable(exc) and not isinstance(exc, (SchedulerLost, StoreUnreachable)):
            raise StoreUnreachable.during_run(url, exc) from exc
        raise
    finally:
        if kind == "absent":
            _remove_if_empty(url)
    report.wall_s = time.perf_counter() - t0
    return report


def _grow(url: str, spec: Spec, extend: bool) -> Spec:
    """``spec`` aligned with the store; with ``extend``, the store grown to it
    first (checked again now that the lock is held)."""
    spec, growth = grow.check(url, spec, extend)
    if extend and (growth or grow.interrupted(store.read_attrs(url))):
        packing.recover(url)
        packing.unpack(url)  # new cells are written in the task layout
        grow.apply(url, spec, growth, spec.source)
    return spec


def _remove_if_empty(url: str) -> None:
    """Remove the folder this run created when nothing was stored in it."""
    path = Path(url)
    if "://" not in url and path.is_dir() and not any(path.iterdir()):
        path.rmdir()


def _run_locked(stack, spec, url, target, overwrite, max_tasks,
                on_start, on_progress, pack, on_compile=None) -> RunReport:
    """The run itself, with the store's lock held."""
    resumed = store.inspect(url) == "boardsweep" and not overwrite
    clients: list = []

    def client_once():
        if not clients:
            clients.append(connect(stack, target))
            if on_compile:
                _on_first_compile(clients[0], on_compile)
        return clients[0]

    calibration = ""
    if spec.task_seconds is not None:
        spec, calibration = _task_size(spec, url, resumed, client_once)
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="boardsweep-prepare")
    preparing = pool.submit(_prepare, spec, url, overwrite)
    pool.shutdown(wait=False)
    try:
        if not resumed:  # a new store has every task to run: the cluster starts while it is prepared
            client_once()
    finally:
        concurrent.futures.wait([preparing])
    relaid, repaired, done, exact_done, tasks, finished = preparing.result()
    points = [(i, p) for i, p in spec.points() if not exact_done[i]]
    report = RunReport(store=url, tasks_total=len(spec.points()) * -(-spec.replicates // spec.block))
    report.repaired = relaid + repaired
    report.block, report.calibration = spec.block, calibration
    if max_tasks is not None:
        tasks = tasks[:max_tasks]
    if tasks or points:
        packing.unpack(url)  # a packed store takes new cells only in the task layout
        if resumed:
            metadata.append_history(url, f"run {spec.source}: {len(tasks)} simulation tasks and "
                                    f"{len(points)} exact answers missing, computing them"
                                    + "".join(f"; repaired {r}" for r in report.repaired))
        client = client_once()
        report.dashboard = client.dashboard_link or ""
        report.workers = len(client.scheduler_info().get("workers", {}))
        report.pending = len(tasks) + len(points)
        if on_start:
            on_start(report)
        progress = _Rounds(on_progress)
        while tasks or points:  # one round; a precision target may ask for more
            _submit_and_wait(client, spec, url, tasks, points, report, progress.round(len(tasks) + len(points)),
                             target.scheduler)
            done, points = store.read_done(url), []
            tasks, finished = _plan(spec, url, done)
            if max_tasks is not None:
                tasks = tasks[:max(0, max_tasks - report.tasks_run)]
    report.complete = finished
    if report.complete and pack:
        t0 = time.perf_counter()
        report.packing = _pack(url)
        report.pack_s = time.perf_counter() - t0
    return report


def _prepare(spec: Spec, url: str, overwrite: bool):
    """The store made or checked (:func:`prepare_store`), its damaged cells
    cleared, and the tasks planned: (relaid, repaired, done, exact_done,
    tasks, finished)."""
    relaid = prepare_store(spec, url, overwrite)
    repaired, done, exact_done = _clear_damaged(spec, url)
    return (relaid, repaired, done, exact_done, *_plan(spec, url, done))


def _on_first_compile(client, callback: Callable[[], None]) -> None:
    """Call ``callback`` once, when the first worker announces that it compiles kernels."""
    told: list = []

    def handler(_event) -> None:
        if not told:
            told.append(True)
            callback()

    client.subscribe_topic(COMPILING_TOPIC, handler)


def _pack(url: str) -> str:
    """Pack the complete store; a store that cannot be packed (too little
    disk) stays complete in the task layout, and the reason is returned."""
    try:
        packing.pack(url, verify=False)  # the run checked the old cells and wrote the new ones
    except (OSError, ChunkUnreadable) as exc:
        return f"not packed ({_one_line(exc)}); the store is complete in the task layout"
    return ""


def _plan(spec: Spec, url: str, done) -> tuple[list, bool]:
    """The simulation tasks to run now and whether the sweep is complete once
    they are: every missing block, or with a precision target the missing
    blocks of the current round (the decisions are stored as they are made)."""
    if spec.precision_stderr is None:
        return plan_tasks(spec, done), bool(done.all())
    from . import precision

    decisions, tasks = precision.plan(spec, url, done)
    precision.write(url, decisions, spec.shape)
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


def _task_size(spec: Spec, url: str, resumed: bool, client_once) -> tuple[Spec, str]:
    """``spec`` with its replicates per task: recorded in the store when it
    resumes one made by the same spec, else calibrated on a worker so that a
    task takes about ``spec.task_seconds`` (replicate 0 of the first, middle
    and last grid points, timed warm; the slowest counts).  Results do not
    depend on the task size; only the store's chunks do, so the size is
    chosen once and recorded."""
    from .tasks import time_replicate

    if resumed:  # a store made by another spec is refused next, by prepare_store
        attrs = store.read_attrs(url)
        if json.loads(attrs.get("spec_canonical", "{}")) != spec.canonical() or "replicates_per_task" not in attrs:
            return spec, ""
        block = int(attrs["replicates_per_task"])
        return spec.with_block(block), f"{block} replicates per task, as recorded in the store"
    points = spec.points()
    picked = sorted({0, len(points) // 2, len(points) - 1})[:CALIBRATION_POINTS]
    future = client_once().submit(
        time_replicate, spec.game, spec.seed, [points[i][1] for i in picked], spec.run_shape,
        spec.checkpoints, spec.task_seconds, pure=False, key=f"calibrate-{uuid.uuid4().hex[:8]}")
    try:
        seconds = float(future.result())
    except Exception as exc:  # noqa: BLE001 - the game's own error, in one line
        raise SweepError(f"timing one replicate to size the tasks failed: {_one_line(exc)}") from None
    block = max(1, min(spec.replicates, int(spec.task_seconds // max(seconds, 1e-9))))
    return spec.with_block(block), (
        f"{block} replicates per task: one replicate takes {seconds:.3g} s on a worker "
        f"(the slowest of {len(picked)} grid points), tasks of about {spec.task_seconds:g} s asked")


def _clear_damaged(spec: Spec, url: str):
    """Find finished cells whose data is missing or damaged and clear their done
    flags, so that they are planned again.

    Returns what was found, in words, and the done and exact_done masks
    without the damaged cells (the masks the check read, so that a run on a
    complete store reads each mask once).
    """
    damage = integrity.check(url)
    if damage.done is None:  # a store without checksums: its flags are all there is
        return [], store.read_done(url), store.read_exact_done(url)
    done, exact_done = damage.intact(spec.block)
    if not damage:
        return [], done, exact_done
    described = damage.describe(list(spec.axes), {a: list(v) for a, v in spec.grid.items()}, spec.block,
                                limit=10**9).split("; ")
    store.clear_done(url, damage.sim, damage.exact, spec.block)
    return described, done, exact_done


#: Futures in flight per worker: enough to keep every worker busy, few enough
#: that the scheduler is never flooded (a grid of tens of thousands of points
#: submitted at once made the scheduler unresponsive and the client lose it).
IN_FLIGHT_PER_WORKER = 8
MIN_IN_FLIGHT = 32


def _jobs(spec: Spec, url: str, tasks: list, points: list, tag: str):
    """(function, args, key, description) of every task to run, exact answers first."""
    game = spec.game
    token = hashlib.sha256(spec.canonical_json().encode()).hexdigest()  # the store's layout
    for index, params in points:
        yield (run_exact, (game, index, params, spec.run_shape, spec.checkpoints, url, token),
               f"exact-{'-'.join(map(str, index))}-{tag}",
               {"point": _point(spec, params), "task": "exact answer"})
    for task in tasks:
        yield (run_task, (game, spec.seed, task, spec.run_shape, spec.checkpoints, url, token),
               f"sim-{task.key}-{tag}",
               {"point": _point(spec, task.params), "task": f"replicates {task.start}-{task.stop - 1}"})


def _submit_and_wait(client, spec, url, tasks, points, report, on_progress, scheduler=None) -> None:
    from distributed import as_completed

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

    for _ in range(window):
        submit_next()
    total, finished, failures = len(tasks) + len(points), 0, []
    address = scheduler or getattr(client.scheduler, "address", None) or "(local cluster)"
    try:
        for future in in_flight:
            live.discard(future)
            if future.status == "error":
                error = _remote_error(future, address, url)
                if unreachable(error):  # every other task would fail the same way: stop now
                    raise StoreUnreachable.during_run(url, error)
                failures.append({**what.pop(future.key), "error": _one_line(error)})
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
        if client.status == "running" and live:
            client.cancel(list(live))
    if failures:
        raise TasksFailed(
            f"{len(failures)} of {total} tasks failed: {_failures_text(failures)}. The other "
            f"{total - len(failures)} tasks finished and are stored in {url}; fix the cause "
            "and rerun the same command to compute the missing cells",
            failures,
        )


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


def _point(spec: Spec, params: dict) -> str:
    """The grid point of ``params`` as ``axis=value, ...`` (or the single point)."""
    if not spec.axes:
        return "the single grid point"
    return ", ".join(f"{axis}={params[axis]!r}" for axis in spec.axes)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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
