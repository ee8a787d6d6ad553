"""What a run is asked to do, translated once from the caller's options.

``boardsweep run`` and :func:`boardsweep.run` take options in their own
spelling (``--cluster slurm --jobs 4``; ``cluster="slurm", jobs=4``);
:func:`cluster_target` turns either into one :class:`cluster.Target`, and
:class:`RunRequest` holds the whole request (the spec, the store, the
target, what may be replaced), checked once as it is made (``extend`` with
``overwrite`` is refused here and nowhere else).  :func:`check_target` checks
a target before anything is created, whoever made it; who hears of the run
as it goes is :class:`.startup.Hooks`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..cluster import START_TIMEOUT_S
from ..errors import NotAScheduler
from ..cluster import Target, check_available, check_dashboard_address, check_dask_config, check_workers, handshake
from ..cluster import parse_jobs
from ..errors import ArgumentTypeError, BadSchedulerAddress, InputError, SchedulerLost, expect_flag, one_line
from ..spec import Spec, check_storable

__all__ = ["RunRequest", "Spelling", "CLI_OPTIONS", "API_ARGUMENTS", "cluster_target", "check_target",
           "check_scheduler_address", "EXTEND_AND_OVERWRITE"]

#: The one line for ``--extend`` with ``--overwrite`` (``extend=True, overwrite=True``).
EXTEND_AND_OVERWRITE = "--extend grows a store in place and --overwrite replaces it: give one of them"


@dataclass(frozen=True)
class Spelling:
    """How a caller names the options of a target, for its one-line refusals."""

    workers: str
    scheduler: str
    batch: str
    jobs: str
    dashboard: str


#: ``boardsweep run``'s options, and :func:`boardsweep.run`'s arguments.
CLI_OPTIONS = Spelling("--workers", "--scheduler", "--cluster SYSTEM", "--jobs", "--dashboard-address")
API_ARGUMENTS = Spelling("workers=", "cluster=", "cluster='slurm' (or another batch system)", "jobs=",
                         "dashboard_address=")


def cluster_target(*, workers: int | None = None, scheduler: str | None = None, batch: str | None = None,
                   jobs: str | int | None = None, client=None, security=None, start_timeout: float = START_TIMEOUT_S,
                   dashboard_address: str | None = None, names: Spelling = CLI_OPTIONS) -> Target:
    """Where a run's tasks go, from the caller's options (``names``: their
    spelling); options that conflict are refused in one line (:class:`InputError`,
    exit 2) before anything starts."""
    check_workers(workers, names.workers)
    check_dashboard_address(dashboard_address)
    if batch is None:
        if jobs is not None:
            raise InputError(f"{names.jobs} sizes the worker jobs of {names.batch}; give it too")
        if scheduler and dashboard_address:
            raise InputError(f"{names.dashboard} applies to a cluster boardsweep starts; the scheduler at "
                             f"{scheduler} has its own dashboard")
        return Target(workers=workers, scheduler=scheduler, security=security, client=client,
                      start_timeout=start_timeout, dashboard_address=dashboard_address)
    if scheduler or workers:
        given = names.scheduler if scheduler else names.workers
        raise InputError(f"{names.batch.split()[0]} {batch} starts its own workers (sized by {names.jobs}); "
                         f"drop {given}")
    check_available(batch)
    return Target(batch=batch, jobs=parse_jobs(jobs if jobs is not None else "1"), start_timeout=start_timeout,
                  dashboard_address=dashboard_address)


@dataclass(frozen=True)
class RunRequest:
    """A run, as asked: ``spec`` into the store at ``store`` (default: the
    spec's, else results/<name>.zarr) on ``target``; ``overwrite`` replaces a
    store made by another spec, ``extend`` grows it in place (not both);
    ``max_tasks`` submits at most that many simulation tasks; ``pack`` packs
    a complete store."""

    spec: Spec
    store: str | None = None
    target: Target | None = None
    overwrite: bool = False
    extend: bool = False
    max_tasks: int | None = None
    pack: bool = True

    def __post_init__(self) -> None:
        for name in ("overwrite", "extend", "pack"):  # "False" is not False: refused, not read as true
            object.__setattr__(self, name, expect_flag(getattr(self, name), name))
        if self.max_tasks is not None and (isinstance(self.max_tasks, bool) or not isinstance(self.max_tasks, int)):
            raise ArgumentTypeError(f"max_tasks={self.max_tasks!r}: expected a whole number")
        if self.store is not None and not isinstance(self.store, str):
            raise ArgumentTypeError(f"store={self.store!r}: expected a folder path or an fsspec URL (a str)")
        if self.extend and self.overwrite:
            raise InputError(EXTEND_AND_OVERWRITE)
        if isinstance(self.spec, Spec):
            check_storable(self.spec)  # a grid axis the store cannot hold: refused before anything is made
        if self.target is None:
            object.__setattr__(self, "target", Target())

    @property
    def url(self) -> str:
        """The store's URL, normalized (:func:`store.normalize_url`)."""
        from ..store import normalize_url  # zarr: after the warm-up has begun (run/startup.py's policy, point 2)

        return normalize_url(self.store or self.spec.default_store())


def check_target(target: Target) -> None:
    """Refuse, before anything is created or started, a target whose workers,
    dashboard, Dask settings or scheduler address are wrong, or whose
    scheduler does not answer."""
    check_workers(target.workers)
    check_dashboard_address(target.dashboard_address)
    check_dask_config()
    if isinstance(target.scheduler, str) and target.scheduler:
        check_scheduler_address(target.scheduler)
        try:
            handshake(target.scheduler, target.security)
        except NotAScheduler as exc:
            raise SchedulerLost(f"cannot reach the Dask scheduler at {target.scheduler}: {exc} "
                                "(nothing was created)") from None


_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?|\[?[0-9A-Fa-f:.]+\]?)$")


def check_scheduler_address(address: str) -> None:
    """Raise :class:`BadSchedulerAddress` (one line) unless ``address`` is
    ``[scheme://]host[:port]`` with a scheme Dask knows and a well-formed host and port."""
    from distributed.comm.addressing import parse_address, parse_host_port  # Dask: the policy's point 2
    from distributed.comm.registry import get_backend

    try:
        scheme, location = parse_address(address)
        get_backend(scheme)
        if scheme in ("tcp", "tls", "ws", "wss"):
            host, port = parse_host_port(location, 8786)
            if not _HOST.match(host) or not 0 < int(port) < 65536:
                raise ValueError(f"{location!r} is not HOST:PORT")
    except (ValueError, TypeError) as exc:
        raise BadSchedulerAddress(f"--scheduler {address!r}: not a Dask scheduler address ({one_line(exc)}); "
                                  "expected e.g. tcp://HOST:8786 (nothing was created)") from None
