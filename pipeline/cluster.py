"""Where a sweep's tasks run: the Dask client, and the cluster behind it.

:func:`connect` gives :func:`boardsweep.pipeline.execute.run_sweep` its
client: one to an existing scheduler, or to a cluster started for the run and
closed with it.  :func:`embedded_cluster` is the default, a
:class:`distributed.LocalCluster` on 127.0.0.1 only (scheduler, workers and
dashboard).  ``security`` (a :class:`distributed.security.Security`, see
:func:`tls_security`) is passed to the client of an existing scheduler for TLS.
"""

from __future__ import annotations

import logging
import os
from contextlib import ExitStack

__all__ = ["connect", "embedded_cluster", "tls_security"]


def tls_security(ca_file: str, cert: str, key: str):
    """A client :class:`distributed.security.Security` for a TLS scheduler."""
    from distributed.security import Security

    return Security(
        tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key, require_encryption=True
    )


def connect(stack: ExitStack, workers: int | None, scheduler: str | None, security=None):
    """A client for the run, closed (with any cluster started here) by ``stack``."""
    from distributed import Client

    from .execute import SchedulerLost, _one_line

    if scheduler:
        try:
            client = Client(scheduler, timeout="20s", security=security)
        except (OSError, TimeoutError) as exc:
            raise SchedulerLost(
                f"cannot reach the Dask scheduler at {scheduler}: {_one_line(exc)}"
            ) from None
        return stack.enter_context(client)
    cluster = stack.enter_context(embedded_cluster(workers))
    return stack.enter_context(Client(cluster))


def embedded_cluster(workers: int | None):
    """The cluster ``boardsweep run`` starts when given no other: ``workers``
    single-threaded worker processes (default: one per CPU), on 127.0.0.1 only."""
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=workers or os.cpu_count() or 1,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",  # scheduler and workers: loopback only
        dashboard_address="127.0.0.1:0",
        silence_logs=logging.ERROR,
    )
