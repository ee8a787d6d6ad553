"""What a user names as the place a run's tasks go: a :class:`Target`.

The embedded cluster (the default), an existing scheduler (``--scheduler
ADDRESS``, with :func:`tls_security` for TLS), worker jobs on a batch system
(``--cluster slurm``), or a client the caller already has.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Target", "tls_security", "local_workers", "threads_here", "START_TIMEOUT_S"]

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


def local_workers(target: Target) -> int | None:
    """Workers of the embedded cluster ``target`` starts (``--workers``, else
    one per CPU), None where they are a scheduler's or a batch system's."""
    if target.client is not None or target.scheduler or target.batch:
        return None
    return target.workers or os.cpu_count() or 1


def threads_here(target: Target) -> bool:
    """Whether the run's workers are threads of this process: the embedded
    cluster, unless Dask's config asks for worker processes."""
    import dask

    if target.client is not None or target.scheduler or target.batch:
        return False
    return not bool(dask.config.get("boardsweep.processes", False))

