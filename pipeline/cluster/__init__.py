"""Where tasks run: targets (embedded, a scheduler, a batch system), their settings,
the embedded cluster, batch jobs and the dashboard.

Code outside this folder imports from here (``from ..cluster import X``), never
from its modules: ``__all__`` is what the other folders use of it.  The face is
lazy (PEP 562): a name's module (and Dask with it) is imported when the name is
first asked for, so that importing the folder costs nothing.
"""

# ruff: noqa: F401 - the TYPE_CHECKING imports are this face's declaration of what it hands on

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

if TYPE_CHECKING:  # what type checkers and readers follow; at run time each name is imported on first use
    from .batch import check_available, parse_jobs, signals_end_run, SYSTEMS
    from .client import connect
    from .dashboard import check_dashboard_address, dashboard_link, performance_report_path
    from .scheduler import handshake, LOOK_EVERY_S
    from .settings import (check_dask_config, check_workers, local_workers, malformed_config_file, no_workers_timeout,
                           START_TIMEOUT_S, Target, task_timeout, threads_here, tls_security)

#: This folder's modules -> the public names each gives the folder (the list above, for the run time).
_HOME = {
    "batch": ("check_available", "parse_jobs", "signals_end_run", "SYSTEMS"),
    "client": ("connect",),
    "dashboard": ("check_dashboard_address", "dashboard_link", "performance_report_path"),
    "scheduler": ("handshake", "LOOK_EVERY_S"),
    "settings": ("check_dask_config", "check_workers", "local_workers", "malformed_config_file", "no_workers_timeout",
                 "START_TIMEOUT_S", "Target", "task_timeout", "threads_here", "tls_security"),
}
_AS: dict[str, str] = {}
__all__, __getattr__ = lazy(__name__, _HOME, _AS)

