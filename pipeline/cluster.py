"""Where a sweep's tasks run: the Dask client, and the cluster behind it.

:func:`connect` gives :func:`boardsweep.pipeline.execute.run_sweep` its
client, from a :class:`Target`: a client the caller already has (used as it
is, never closed), one to an existing scheduler, worker jobs on a batch system
(:mod:`boardsweep.pipeline.batch`), or :func:`embedded_cluster`, the default,
a :class:`distributed.LocalCluster` on 127.0.0.1 only.  A cluster started here
is closed with the run.

The dashboard of a cluster started here listens where ``--dashboard-address``
says, else where Dask's ``distributed.scheduler.dashboard.address``
configuration says, else on a free loopback port; ``security`` (a
:class:`distributed.security.Security`, see :func:`tls_security`) is passed to
the client of an existing scheduler for TLS.
"""

from __future__ import annotations

import logging
import os
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .errors import SchedulerLost, one_line

__all__ = ["Target", "connect", "embedded_cluster", "dashboard_address", "performance_report_path", "route_web_logs",
           "tls_security"]

#: Default seconds to wait for the first worker job before giving up.
START_TIMEOUT_S = 300.0


@dataclass
class Target:
    """Where a run's tasks go.

    Attributes
    ----------
    workers : int, optional
        Worker processes of the embedded cluster (default: one per CPU).
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
        Seconds to wait for the first worker job.
    dashboard_address : str, optional
        Where the dashboard of a cluster started here listens (``HOST:PORT`` or ``:PORT``).
    performance_report : str, optional
        Save Dask's performance report (HTML) of the run to this file.
    on_wait : callable, optional
        Called with one line of text while the run waits for its first worker job.
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
            client = Client(target.scheduler, timeout="20s", security=target.security)
        except (OSError, TimeoutError) as exc:
            raise SchedulerLost(
                f"cannot reach the Dask scheduler at {target.scheduler}: {one_line(exc)}"
            ) from None
        return stack.enter_context(client)
    if target.batch:
        return _batch_client(stack, target)
    cluster = stack.enter_context(embedded_cluster(target.workers, dashboard_address(target.dashboard_address)))
    return stack.enter_context(Client(cluster))


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
    kernels compiled once; every kernel releases the GIL); worker processes
    when Dask's config says ``boardsweep.processes: true``
    (``DASK_BOARDSWEEP__PROCESSES=True``)."""
    import dask
    from distributed import LocalCluster

    processes = bool(dask.config.get("boardsweep.processes", False))
    return LocalCluster(
        n_workers=workers or os.cpu_count() or 1,
        threads_per_worker=1,
        processes=processes,
        memory_limit="auto" if processes else 0,  # threads share one process: no per-worker limit
        protocol="tcp://",  # threads too: in-process comms would bind worker servers and links to every address
        host="127.0.0.1",  # scheduler and workers: loopback only
        dashboard_address=dashboard,
        silence_logs=logging.CRITICAL,  # a failing task is reported once by the run, not by each worker
    )


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
