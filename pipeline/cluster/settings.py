"""Where a run's tasks go (a :class:`Target`), the checks of its settings before anything starts, and its deadlines.

What a user names as the place a run's tasks go: the embedded cluster (the
default), an existing scheduler (``--scheduler ADDRESS``, with
:func:`tls_security` for TLS), worker jobs on a batch system (``--cluster
slurm``), or a client the caller already has; the workers it has here
(:func:`local_workers`, :func:`threads_here`).

The worker count (:func:`check_workers`), Dask's configuration
(:func:`check_dask_config`: every setting of its default's kind) and the
durations boardsweep reads from it: :func:`no_workers_timeout`,
:func:`task_timeout` and :func:`connect_timeout`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import BadDaskConfig, BadWorkers

__all__ = ["check_workers", "max_workers", "cpus", "check_dask_config", "no_workers_timeout", "task_timeout",
           "connect_timeout", "NO_WORKERS_TIMEOUT_S", "TASK_TIMEOUT_S", "malformed_config_file",
           "Target", "tls_security", "local_workers", "threads_here", "START_TIMEOUT_S"]


#: The embedded cluster's workers per CPU at most (and never fewer than :data:`MIN_MAX_WORKERS`):
#: more single-threaded workers than that only queue for the same CPUs, and 2000 of them took
#: minutes to start.
WORKERS_PER_CPU = 4
MIN_MAX_WORKERS = 16


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


def malformed_config_file(exc: BaseException) -> str | None:
    """One line for Dask's error on a config file it cannot read (raised when
    ``dask`` is first imported): the file, the line and column of YAML's mark,
    the problem and what to do; None for any other error."""
    import re

    found = re.match(r"A dask config file at '(.+)' is malformed(?:, original error message:|\s*-)\s*(.*)\Z",
                     str(exc), re.S) if isinstance(exc, ValueError) else None
    if found is None:
        return None
    path, detail = found.groups()
    lines = detail.splitlines()
    marks = [i for i, line in enumerate(lines) if re.search(r"line \d+, column \d+", line)]
    if marks:  # YAML's own: the problem is the last unindented text before its mark
        where = re.search(r"line (\d+), column (\d+)", lines[marks[-1]]).groups()
        problem = next((line.strip() for line in reversed(lines[:marks[-1]]) if line and not line[0].isspace()),
                       "not YAML")
        detail = f"line {where[0]}, column {where[1]}: {problem}"
    else:
        detail = " ".join(detail.split())
    return (f"the Dask config file {path} is malformed ({detail}): fix or remove it (Dask reads every "
            "YAML file in DASK_CONFIG, ~/.config/dask and /etc/dask); nothing was changed")


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


def connect_timeout() -> float:
    """Seconds to connect and shake hands with a scheduler: Dask's
    ``distributed.comm.timeouts.connect`` (30 s unless configured)."""
    import dask.config
    from dask.utils import parse_timedelta

    import distributed  # noqa: F401 - registers distributed's configuration defaults

    return float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds"))


# -- the target: where a run's tasks go ------------------------------------------

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

