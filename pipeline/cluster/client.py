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

The pieces live beside this module: :mod:`~boardsweep.pipeline.cluster.settings`
(what a user names, its checks and deadlines), :mod:`~boardsweep.pipeline.cluster.embedded`,
:mod:`~boardsweep.pipeline.cluster.scheduler`,
:mod:`~boardsweep.pipeline.cluster.batch` and
:mod:`~boardsweep.pipeline.cluster.dashboard`.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from .dashboard import configured_dashboard, route_web_logs
from .embedded import embedded_client
from .scheduler import scheduler_client
from .settings import Target

__all__ = ["connect", "DASK_LOG_LENGTH", "short_dask_logs"]

#: Entries kept by each of Dask's low-level logs (``distributed.admin.low-level-log-length``,
#: 1000 by default) in the clients and clusters a run starts: the messages every connection sent
#: last among them, each a task's whole arguments.  In-process each message counts as one byte
#: (it is never serialised), so all were kept: 2 MB a task at 50,000 grid points a task, 0.7 GB
#: over a 10^7-point sweep's 400 tasks.
DASK_LOG_LENGTH = 16


def short_dask_logs() -> dict:
    """The Dask setting a run's own clients and clusters are made under: each
    low-level log (the messages a connection sent last, transitions, events)
    at most :data:`DASK_LOG_LENGTH` entries, or fewer where Dask's config says."""
    import dask.config

    key = "distributed.admin.low-level-log-length"
    configured = dask.config.get(key, None)
    keep = configured if isinstance(configured, int) and 0 <= configured < DASK_LOG_LENGTH else DASK_LOG_LENGTH
    return {key: keep}


def connect(stack: ExitStack, target: Target):
    """A client for the run, closed (with any cluster started here) by ``stack``;
    one made here (and its cluster) keeps short low-level logs (:func:`short_dask_logs`)."""
    import dask.config

    import distributed  # noqa: F401 - sets up Dask's loggers, which route_web_logs then changes

    route_web_logs()
    if target.client is None:  # for the run's whole life: a connection made later (a worker restarted) too
        stack.enter_context(dask.config.set(short_dask_logs()))
    client = _client(stack, target)
    if target.performance_report:
        from distributed import performance_report

        Path(target.performance_report).parent.mkdir(parents=True, exist_ok=True)
        stack.enter_context(performance_report(filename=target.performance_report))
    return client


def _client(stack: ExitStack, target: Target):
    """The client ``target`` names: the caller's, a scheduler's, a batch cluster's, else an embedded cluster's."""
    if target.client is not None:
        return target.client
    if target.scheduler:
        return scheduler_client(stack, target)
    if target.batch:
        return _batch_client(stack, target)
    return embedded_client(stack, target)


def _batch_client(stack: ExitStack, target: Target):
    from distributed import Client

    from . import batch

    jobs = target.jobs or batch.Jobs(1, 1)
    address = target.dashboard_address or configured_dashboard()
    cluster, submitted = batch.start_jobs(stack, target.batch, jobs, address)
    client = stack.enter_context(Client(cluster))
    batch.wait_for_worker(client, submitted, target.start_timeout, target.on_wait)
    return client
