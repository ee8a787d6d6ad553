"""Where a sweep's tasks run: the Dask client, and the cluster behind it.

:func:`connect` gives :func:`boardsweep.pipeline.run.execute.run_sweep` its
client, from a :class:`Target`: a client the caller already has (used as it
is, never closed), one to an existing scheduler, worker jobs on a batch system
(:mod:`boardsweep.pipeline.cluster.batch`), or :func:`embedded_cluster`, the default,
a :class:`distributed.LocalCluster` on 127.0.0.1 only.  A cluster started here
is closed with the run.

The dashboard of a cluster started here listens where ``--dashboard-address``
says, else where Dask's ``distributed.scheduler.dashboard.address``
configuration says, else on a free loopback port; ``security`` (a
:class:`distributed.security.Security`, see :func:`tls_security`) is passed to
the client of an existing scheduler for TLS.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import importlib.util
import logging
import os
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import Fault, InputError, SchedulerLost, one_line

__all__ = ["Target", "connect", "embedded_cluster", "pages_on_first_visit", "dashboard_link", "threads_here", "dashboard_address", "performance_report_path", "route_web_logs",
           "tls_security", "handshake", "NotAScheduler", "NoWorkers", "BadWorkers", "check_workers",
           "BadDashboardAddress", "check_dashboard_address", "ClusterNotStarted",
           "BadDaskConfig", "check_dask_config", "NoWorkersLeft", "no_workers_timeout",
           "task_timeout", "max_workers"]

#: Default seconds to wait for the first worker (a batch job, or one joining a scheduler) before giving up.
START_TIMEOUT_S = 300.0


@dataclass
class Target:
    """Where a run's tasks go.

    Attributes
    ----------
    workers : int, optional
        Workers of the embedded cluster (default: one per CPU; threads, see :func:`embedded_cluster`).
    scheduler : str, optional
        Address of an existing Dask scheduler.
    security : distributed.security.Security, optional
        TLS settings for the client of ``scheduler``.
    client : distributed.Client, optional
        A client the caller made; used as it is and left open.
    batch : str, optional
        A batch system (``slurm``, ``pbs``, ...): worker jobs through dask-jobqueue.
    jobs : batch.Jobs, optional
        How many worker jobs (default: one).
    start_timeout : float
        Seconds to wait for the first worker job, or for a worker to join ``scheduler``.
    dashboard_address : str, optional
        Where the dashboard of a cluster started here listens (``HOST:PORT`` or ``:PORT``).
    performance_report : str, optional
        Save Dask's performance report (HTML) of the run to this file.
    on_wait : callable, optional
        Called with one line of text while the run waits for its first worker.
    """

    workers: int | None = None
    scheduler: str | None = None
    security: Any = None
    client: Any = None
    batch: str | None = None
    jobs: Any = None
    start_timeout: float = START_TIMEOUT_S
    dashboard_address: str | None = None
    performance_report: str | None = None
    on_wait: Callable[[str], None] | None = None

    def describe(self) -> str:
        """Where the tasks run, in words."""
        if self.client is not None:
            return f"the given Dask client ({getattr(self.client.scheduler, 'address', '?')})"
        if self.scheduler:
            return f"Dask scheduler {self.scheduler}"
        if self.batch:
            return f"{self.jobs or 1} {self.batch} worker job(s) (dask-jobqueue)"
        return "a local Dask cluster"


def tls_security(ca_file: str, cert: str, key: str):
    """A client :class:`distributed.security.Security` for a TLS scheduler."""
    from distributed.security import Security

    return Security(
        tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key, require_encryption=True
    )


#: The embedded cluster's workers per CPU at most (and never fewer than :data:`MIN_MAX_WORKERS`):
#: more single-threaded workers than that only queue for the same CPUs, and 2000 of them took
#: minutes to start.
WORKERS_PER_CPU = 4
MIN_MAX_WORKERS = 16


class BadWorkers(InputError):
    """A worker count the machine cannot hold, or not a positive integer (one line, exit 2)."""


def cpus() -> int:
    """CPUs this process may run on (its affinity, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def max_workers() -> int:
    """The most workers the embedded cluster takes on this machine."""
    return max(MIN_MAX_WORKERS, WORKERS_PER_CPU * cpus())


def check_workers(workers: Any, option: str = "--workers") -> None:
    """Raise :class:`BadWorkers` (one line) unless ``workers`` is None or an
    integer from 1 to :func:`max_workers`; checked before anything starts."""
    if workers is None:
        return
    given = f"{option}{workers!r}" if option.endswith("=") else f"{option} {workers!r}"
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise BadWorkers(f"{given}: expected a positive integer (the local cluster's workers)")
    most = max_workers()
    if workers > most:
        raise BadWorkers(f"{given}: this machine has {cpus()} CPUs and the local cluster takes at most "
                         f"{most} workers ({WORKERS_PER_CPU} per CPU, at least {MIN_MAX_WORKERS}); for more, start "
                         "a Dask cluster on more machines and give its --scheduler (nothing was started)")


class BadDashboardAddress(InputError):
    """A ``--dashboard-address`` that is not ``[HOST]:PORT`` on this machine (one line, exit 2)."""


def check_dashboard_address(address: str | None, option: str = "--dashboard-address") -> None:
    """Raise :class:`BadDashboardAddress` (one line, before anything starts)
    unless ``address`` is None or ``[HOST]:PORT`` with a port from 0 to 65535
    and a host this machine can listen on (a port in use is left to Dask,
    which then picks a free one and says so)."""
    import socket

    if address is None:
        return
    host, colon, port = str(address).rpartition(":")
    if not colon:
        host, port = "", str(address)
    host = host.strip("[]")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise BadDashboardAddress(f"{option} {address!r}: expected [HOST]:PORT with a port from 0 to 65535, "
                                  "e.g. :8787 or 127.0.0.1:8787")
    try:
        infos = socket.getaddrinfo(host or "127.0.0.1", 0, type=socket.SOCK_STREAM)
        family, kind, proto, _, where = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.bind(where)
    except OSError as exc:
        raise BadDashboardAddress(f"{option} {address!r}: cannot listen on host {host!r} here "
                                  f"({' '.join(str(exc).split())}); give an address of this machine, "
                                  "e.g. :8787 or 0.0.0.0:8787") from None


class BadDaskConfig(InputError):
    """A Dask setting (environment or config file) of the wrong kind (one line, exit 2)."""


#: boardsweep's own Dask settings and their defaults (``boardsweep.processes``: worker processes;
#: the deadlines: :func:`no_workers_timeout`, :func:`task_timeout`).
OWN_DASK_DEFAULTS = {"boardsweep": {"processes": False, "no-workers-timeout": "30s", "task-timeout": "1h"}}


def check_dask_config() -> None:
    """Raise :class:`BadDaskConfig` (one line naming the key, its value and
    where it came from) for a Dask setting that is not of its default's kind:
    a duration that is not one (``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=abc``),
    a yes/no setting that is neither, a number that is not one.  Dask itself
    would fail deep inside a starting cluster, or a connection."""
    import dask.config

    import distributed  # noqa: F401 - registers distributed's defaults

    defaults = dask.config.merge(*dask.config.defaults, OWN_DASK_DEFAULTS)
    for key, default, value in _leaves(defaults, dask.config.config):
        problem = _wrong_kind(default, value)
        if problem:
            variable = "DASK_" + "__".join(part.upper().replace("-", "_") for part in key.split("."))
            where = (f"the environment variable {variable}" if variable in os.environ
                     else "a Dask config file or dask.config.set")
            raise BadDaskConfig(f"Dask setting {key} = {value!r} (from {where}): {problem}; fix or unset it")
    no_workers_timeout()  # boardsweep's own deadlines, read as the run will read them
    task_timeout()


def _leaves(defaults: dict, config: dict, prefix: str = ""):
    """(dotted key, default, value) of every setting both define, keys as Dask normalises them."""
    for name, default in defaults.items():
        key = f"{prefix}{name}"
        value = config.get(name, config.get(str(name).replace("-", "_"), default)) if isinstance(config, dict) else default
        if isinstance(default, dict):
            if isinstance(value, dict):
                yield from _leaves(default, value, key + ".")
        else:
            yield key, default, value


def _wrong_kind(default: Any, value: Any) -> str:
    """Why ``value`` cannot stand where Dask's default is ``default`` ('' when it can)."""
    if value is None or value == default:
        return ""
    if isinstance(value, bool) and not isinstance(default, bool):  # False turns many a limit off
        return ""
    if isinstance(default, bool):
        return "" if isinstance(value, bool) else "expected True or False"
    if isinstance(default, (int, float)):
        return "" if isinstance(value, (int, float)) and not isinstance(value, bool) or _is_size(value) else "expected a number"
    if isinstance(default, str) and _is_duration(default):
        return "" if isinstance(value, (int, float)) or _is_duration(value) else "expected a duration such as 30s"
    return ""


def _is_duration(text: Any) -> bool:
    from dask.utils import parse_timedelta

    if not isinstance(text, str) or not text.strip() or not text.strip()[0].isdigit():
        return False
    try:
        parse_timedelta(text)
    except (KeyError, ValueError, TypeError):
        return False
    return True


def _is_size(text: Any) -> bool:
    """A byte size (``4GiB``) or ``auto``: what Dask's numeric memory settings also take."""
    from dask.utils import parse_bytes

    if text == "auto":
        return True
    try:
        parse_bytes(text)
    except (ValueError, TypeError):
        return False
    return True


class ClusterNotStarted(Fault):
    """The local Dask cluster could not start (no free port, a thread limit, ...): one line, exit 1."""


class NoWorkers(Fault):
    """No worker joined the scheduler within the start timeout (one line, exit 1)."""


class NoWorkersLeft(SchedulerLost):
    """Every worker left mid-sweep and none joined within :func:`no_workers_timeout` (one line, exit 1)."""


#: Default seconds a run waits, once every worker of a scheduler it did not start has left,
#: for one to join before it ends (Dask setting ``boardsweep.no-workers-timeout``).
NO_WORKERS_TIMEOUT_S = 30.0


def no_workers_timeout() -> float:
    """Seconds a run waits for a worker once every worker has left: Dask's
    ``boardsweep.no-workers-timeout`` setting (``DASK_BOARDSWEEP__NO_WORKERS_TIMEOUT=2m``),
    else :data:`NO_WORKERS_TIMEOUT_S`."""
    import dask.config
    from dask.utils import parse_timedelta

    value = dask.config.get("boardsweep.no-workers-timeout", None)
    if value is None:
        return NO_WORKERS_TIMEOUT_S
    try:
        return float(parse_timedelta(value, default="seconds"))
    except (KeyError, ValueError, TypeError):
        raise BadDaskConfig(f"Dask setting boardsweep.no-workers-timeout = {value!r}: expected a duration "
                            "such as 30s; fix or unset it") from None


#: Default seconds one task (a block of replicates, or an exact answer) may run on a worker
#: before the run ends (Dask setting ``boardsweep.task-timeout``).
TASK_TIMEOUT_S = 3600.0


def task_timeout() -> float | None:
    """Seconds one task may run before the run ends, naming it: Dask's
    ``boardsweep.task-timeout`` setting (``DASK_BOARDSWEEP__TASK_TIMEOUT=10m``),
    else :data:`TASK_TIMEOUT_S`; None when set to 0 or False (no deadline).

    A kernel that never returns cannot be stopped inside its thread; the run
    ends, finished tasks kept, and its cluster is closed without waiting for
    it (worker processes are killed; threads of this process end with it)."""
    import dask.config
    from dask.utils import parse_timedelta

    value = dask.config.get("boardsweep.task-timeout", None)
    if value is None:
        return TASK_TIMEOUT_S
    if value is False or value == 0:
        return None
    try:
        seconds = float(parse_timedelta(value, default="seconds"))
    except (KeyError, ValueError, TypeError):
        seconds = -1.0
    if seconds < 0 or isinstance(value, bool):
        raise BadDaskConfig(f"Dask setting boardsweep.task-timeout = {value!r}: expected a duration such as "
                            "1h, or 0 for no deadline; fix or unset it")
    return seconds or None


class NotAScheduler(ConnectionError):
    """``--scheduler`` names a listener that did not answer as a Dask scheduler in time (one line)."""


def connect_timeout() -> float:
    """Seconds to connect and shake hands with a scheduler: Dask's
    ``distributed.comm.timeouts.connect`` (30 s unless configured)."""
    import dask.config
    from dask.utils import parse_timedelta

    import distributed  # noqa: F401 - registers distributed's configuration defaults

    return float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds"))


_HANDSHAKE_GRACE_S = 2.0


def handshake(address: str, security: Any = None, timeout: float | None = None) -> dict:
    """Dask's ``identity`` of the scheduler at ``address``, asked with one
    deadline for connecting, the handshake and the answer together.

    Raises :class:`NotAScheduler` (one line) when nothing listens there, when
    the listener does not answer within ``timeout`` seconds (default
    :func:`connect_timeout`), or answers something that is not a Dask
    scheduler (a web server, a Dask worker): without it, ``Client`` waits
    forever on a listener that never answers and runs out of memory reading
    an HTTP reply as a Dask frame length."""
    timeout = connect_timeout() if timeout is None else timeout
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="boardsweep-handshake") as pool:
        found = pool.submit(asyncio.run, _identity(address, security, timeout))
        try:
            reply = found.result()
        except (asyncio.TimeoutError, TimeoutError):
            raise NotAScheduler(f"no answer to Dask's handshake within {timeout:g} s (Dask's "
                                "distributed.comm.timeouts.connect); is a Dask scheduler listening there?") from None
        except OSError as exc:
            raise NotAScheduler(" ".join(str(exc).split()) or type(exc).__name__) from None
        except Exception as exc:  # noqa: BLE001 - whatever a foreign listener's bytes decode to
            raise NotAScheduler(f"the listener there answered, but not in Dask's protocol ({type(exc).__name__}); "
                                "is it a Dask scheduler, not a web server or the dashboard?") from None
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        what = f"a Dask {kind}" if isinstance(kind, str) and kind else "something else"
        raise NotAScheduler(f"that is {what}, not a Dask scheduler; give the scheduler's address "
                            "(it listens on 8786 by default)")
    return reply


async def _identity(address: str, security: Any, timeout: float):
    from distributed.comm import connect as comm_connect

    args = security.get_connection_args("client") if security is not None else {}

    async def ask():
        comm = await comm_connect(address, timeout=timeout, **args)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    # Dask's connect raises its own, more precise error ("Timed out trying to
    # connect ... after N s: ConnectionRefusedError") at ``timeout``; the
    # outer deadline only catches a listener that accepts and then says
    # nothing, so it waits a little longer to never race that error.
    return await asyncio.wait_for(ask(), timeout + _HANDSHAKE_GRACE_S)


def connect(stack: ExitStack, target: Target):
    """A client for the run, closed (with any cluster started here) by ``stack``."""
    import distributed  # noqa: F401 - sets up Dask's loggers, which route_web_logs then changes

    route_web_logs()
    client = _client(stack, target)
    if target.performance_report:
        from distributed import performance_report

        Path(target.performance_report).parent.mkdir(parents=True, exist_ok=True)
        stack.enter_context(performance_report(filename=target.performance_report))
    return client


def _client(stack: ExitStack, target: Target):
    from distributed import Client

    if target.client is not None:
        return target.client
    if target.scheduler:
        try:
            client = Client(target.scheduler, timeout=connect_timeout(), security=target.security)
        except (OSError, TimeoutError) as exc:
            raise SchedulerLost(
                f"cannot reach the Dask scheduler at {target.scheduler}: {one_line(exc)}"
            ) from None
        stack.enter_context(client)
        wait_for_workers(client, target.scheduler, target.start_timeout, target.on_wait)
        return client
    if target.batch:
        return _batch_client(stack, target)
    try:
        cluster = stack.enter_context(embedded_cluster(target.workers, dashboard_address(target.dashboard_address)))
        client = stack.enter_context(Client(cluster))  # its event loop's thread, too, may fail to start
        client.run(start_task_threads)
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


#: Seconds a worker's task threads may take to start (:func:`start_task_threads`).
THREAD_START_S = 10.0


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


#: Seconds between two looks for a worker on a scheduler that has none.
LOOK_EVERY_S = 0.5


def wait_for_workers(client, address: str, timeout: float, on_wait: Callable[[str], None] | None = None) -> None:
    """Return once the scheduler at ``address`` has a worker; meanwhile say so
    through ``on_wait``; raise :class:`NoWorkers` after ``timeout`` seconds."""
    t0 = time.monotonic()
    while not client.nthreads():
        waited = time.monotonic() - t0
        if waited > timeout:
            raise NoWorkers(f"no worker joined the Dask scheduler at {address} within {timeout:g} s; start "
                            f"workers (dask worker {address}) or raise --start-timeout; nothing was computed")
        if on_wait:
            on_wait(f"waiting for workers at {address}: none has joined yet; start some with `dask worker "
                    f"{address}`, or Ctrl-C stops ({waited:.0f} s of {timeout:g} s)")
        time.sleep(LOOK_EVERY_S)


def _batch_client(stack: ExitStack, target: Target):
    from distributed import Client

    from . import batch

    jobs = target.jobs or batch.Jobs(1, 1)
    address = target.dashboard_address or _configured_dashboard()
    cluster, submitted = batch.start_jobs(stack, target.batch, jobs, address)
    client = stack.enter_context(Client(cluster))
    batch.wait_for_worker(client, submitted, target.start_timeout, target.on_wait)
    return client


def embedded_cluster(workers: int | None, dashboard: str = "127.0.0.1:0"):
    """The cluster ``boardsweep run`` starts when given no other: ``workers``
    single-threaded workers (default: one per CPU), on 127.0.0.1 only, its
    dashboard at ``dashboard``.

    By default the workers are threads of this process (no process to spawn,
    kernels compiled once; every kernel releases the GIL) that talk to the
    scheduler in-process (``inproc://``: no message is serialised or sent
    through a socket, about 4 ms less per task); worker processes, over TCP on
    127.0.0.1, when Dask's config says ``boardsweep.processes: true``
    (``DASK_BOARDSWEEP__PROCESSES=True``).  Either way only web servers
    listen, on ``dashboard``'s host (the scheduler's) and 127.0.0.1 (the
    workers'); :func:`dashboard_link` gives the scheduler's link.

    The scheduler's web server listens at ``dashboard`` from the start, but
    its Bokeh pages are added on the first visit (:func:`pages_on_first_visit`):
    importing Bokeh costs half a second of CPU, which a run nobody watches
    never pays."""
    import dask
    from distributed import LocalCluster

    processes = bool(dask.config.get("boardsweep.processes", False))
    late = importlib.util.find_spec("bokeh") is not None  # without Bokeh: Dask's own "needs bokeh" page at once
    cluster = LocalCluster(
        n_workers=workers or os.cpu_count() or 1,
        threads_per_worker=1,
        processes=processes,
        memory_limit="auto" if processes else 0,  # threads share one process: no per-worker limit
        protocol="tcp://" if processes else "inproc://",
        host="127.0.0.1" if processes else None,  # processes: scheduler and workers on loopback only
        worker_class=None if processes else _loopback_worker(),
        dashboard_address=dashboard,
        # a failing task is reported once by the run, not by each worker; -v keeps Dask's own records
        silence_logs=False if logging.getLogger().handlers else logging.CRITICAL,
        scheduler_kwargs={"dashboard": False} if late else None,
        **({"preload": ["boardsweep.pipeline.cluster.worker_logs"]} if processes else {}),  # Ctrl-C left to this process
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


def dashboard_link(client) -> str:
    """The link to the dashboard of ``client``'s scheduler ('' if none).

    Dask's own, except for a scheduler whose workers talk in-process
    (``inproc://``, :func:`embedded_cluster`): its address names the
    machine's IP, where nothing listens, so the link names the address its
    web server is bound to (127.0.0.1 when it listens on every interface).
    Dask's ``distributed.dashboard.link`` template applies either way (a
    Jupyter proxy's, for example)."""
    from distributed.utils import format_dashboard_link

    scheduler = getattr(getattr(client, "cluster", None), "scheduler", None)
    server = getattr(scheduler, "http_server", None)
    if not str(getattr(scheduler, "address", "")).startswith("inproc://") or not getattr(server, "port", None):
        return client.dashboard_link or ""
    host = str(server.address)
    return format_dashboard_link("127.0.0.1" if host in ("", "0.0.0.0", "::") else host, server.port)


def pages_on_first_visit(scheduler) -> None:
    """Serve the dashboard's Bokeh pages from the first request for them.

    Until then, a stand-in answers every address the scheduler's web server
    does not serve itself (``/status``, ``/workers``, ...): it adds Dask's
    pages (:func:`distributed.dashboard.scheduler.connect`), steps aside,
    and redirects the browser to the address it asked for, which the pages
    now serve (or answer 404)."""
    from tornado import web

    routing = scheduler.http_application

    class FirstVisit(web.RequestHandler):
        def get(self, *args) -> None:
            if stand_in in routing.applications:  # one attach, whichever request comes first
                routing.applications.remove(stand_in)
                import distributed.dashboard.scheduler as pages

                # on the scheduler's event loop (tornado handlers run there): Bokeh's server takes that loop
                pages.connect(routing, scheduler.http_server, scheduler, prefix="/")
            self.redirect(self.request.uri)

        head = get

    stand_in = web.Application([(r"/.*", FirstVisit)])
    routing.add_application(stand_in)


def threads_here(target: Target) -> bool:
    """Whether the run's workers are threads of this process: the embedded
    cluster, unless Dask's config asks for worker processes."""
    import dask

    if target.client is not None or target.scheduler or target.batch:
        return False
    return not bool(dask.config.get("boardsweep.processes", False))


def _configured_dashboard() -> str | None:
    """Dask's ``distributed.scheduler.dashboard.address``, when configured."""
    import dask.config

    value = dask.config.get("distributed.scheduler.dashboard.address", None)
    return str(value) if value not in (None, "") else None


def dashboard_address(given: str | None = None) -> str:
    """Where the embedded cluster's dashboard listens: ``given``, else Dask's
    configuration, else a free port on 127.0.0.1.  A bare port (``8787`` or
    ``:8787``) listens on 127.0.0.1, like the rest of the embedded cluster;
    ``0.0.0.0:8787`` listens on every interface."""
    address = given or _configured_dashboard()
    if not address:
        return "127.0.0.1:0"
    host, _, port = address.rpartition(":")
    return f"{host or '127.0.0.1'}:{port}"


#: Loggers of the dashboard's web servers, which Dask sends to stderr on its own.
WEB_LOGGERS = ("tornado", "tornado.access", "tornado.application", "tornado.general", "bokeh")


def route_web_logs() -> None:
    """Send the dashboard's web-server messages (Bokeh and tornado: a browser
    tab that disconnects early logs a long traceback) to the application's log
    when it has one (``boardsweep -v``, or a script's ``logging`` setup), and
    nowhere otherwise: never into a run's output."""
    configured = bool(logging.getLogger().handlers)
    for name in WEB_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = [] if configured else [logging.NullHandler()]
        logger.propagate = configured


def performance_report_path(url: str) -> str:
    """``STORE.performance.html`` beside a local store (``results/x.zarr`` ->
    ``results/x.performance.html``); a store behind a URL: in the working folder."""
    from pathlib import Path

    name = Path(url.rstrip("/")).name.removesuffix(".zarr") + ".performance.html"
    if "://" in url and not url.startswith("file://"):
        return str(Path(name).resolve())
    return str(Path(url.removeprefix("file://").rstrip("/")).expanduser().resolve().with_name(name))
