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

The pieces live beside this module: :mod:`~boardsweep.pipeline.cluster.targets`
(what a user names), :mod:`~boardsweep.pipeline.cluster.settings` (checks and
deadlines), :mod:`~boardsweep.pipeline.cluster.embedded`,
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
from .targets import Target

__all__ = ["connect"]


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
