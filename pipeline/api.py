"""The Python API: ``boardsweep.run(spec, store)`` and ``boardsweep.Spec``.

>>> import boardsweep
>>> spec = boardsweep.Spec.from_file("sweeps/quickstart.toml")        # doctest: +SKIP
>>> result = boardsweep.run(spec, "results/quickstart.zarr")          # doctest: +SKIP
>>> ds = result.open()                                                # doctest: +SKIP

``run`` does what ``boardsweep run`` does, from a script or a notebook: on an
embedded local cluster, an existing :class:`distributed.Client`, a cluster
object (a ``LocalCluster``, a dask-jobqueue ``SLURMCluster``, ...), a
scheduler address or a batch system by name.  Both take one path,
:func:`run_request`: its kernels warm in a thread while Dask, xarray and zarr
are imported, and a new store's first tasks run meanwhile (the head start,
:mod:`boardsweep.pipeline.run.startup`).  In Jupyter it shows the dashboard
link and a progress bar; in a terminal, the CLI's progress bar and notices.

A plain script needs no ``if __name__ == "__main__":`` guard: while the run
starts its worker processes (multiprocessing's spawn, which imports the main
script again in each child) it hides the script from them, so they do not run
the sweep again.  Should a worker process still import the script and reach
``run`` (e.g. a worker restarted after the run), it stops with one line saying
to add the guard.  A script that makes its own ``LocalCluster`` needs the
guard anyway, as Dask documents.

Every wait has a deadline: an S3 request gives up after 3 attempts of 3 s
to connect and 6 s to answer (the spec's ``[storage_options]``
``config_kwargs`` change them); a scheduler that is not the embedded
cluster's ends the run once it has had no worker for Dask's
``boardsweep.no-workers-timeout`` (30 s); a kernel that calls ``sys.exit``
or raises ``KeyboardInterrupt`` fails its task, listed in the
:class:`TasksFailed` raised at the end.
"""

from __future__ import annotations

import html
import os
import sys
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Literal, Mapping

from .cluster import signals_end_run, SYSTEMS as BATCH_SYSTEMS, Target
from .errors import ArgumentTypeError, InputError, NotInWorker, expect_flag
from .run import begin, RunReport, API_ARGUMENTS, Hooks, RunRequest, cluster_target
from .spec import example_file, is_bare, is_example, Spec
from .errors import SpecError
from .words import count

__all__ = ["Spec", "Result", "run", "run_request", "as_spec", "report", "PROGRESS"]

#: The progress displays of :func:`run_request`: a terminal's (the CLI's bar and notices) or Jupyter's (HTML).
PROGRESS = ("terminal", "notebook")


@dataclass
class Result:
    """What :func:`run` did (``report``: a :class:`RunReport`) and where: ``store``.

    The report's fields read as the result's own (``result.complete``,
    ``result.tasks_run``, ``result.dashboard``...).
    """

    report: RunReport
    spec: Spec

    @property
    def store(self) -> str:
        return self.report.store

    def open(self, **kwargs: Any):
        """The store as a lazy :class:`xarray.Dataset` (:func:`boardsweep.open_sweep`)."""
        from .analysis import SweepAccessor  # noqa: F401  (registers ds.boardsweep)
        from .store import open_sweep

        return open_sweep(self.store, **kwargs)

    def load(self, **kwargs: Any):
        """The store read into memory (:func:`boardsweep.load_sweep`)."""
        from .analysis import SweepAccessor  # noqa: F401  (registers ds.boardsweep)
        from .store import load_sweep

        return load_sweep(self.store, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name in ("report", "spec"):
            raise AttributeError(name)
        return getattr(self.report, name)

    def __repr__(self) -> str:
        state = "complete" if self.report.complete else "INCOMPLETE"
        return (f"<boardsweep result {self.spec.name!r}: {self.store} {state}, "
                f"{count(self.report.tasks_run, 'simulation task')} and {count(self.report.exact_run, 'exact task')} "
                f"run in {self.report.wall_s:.1f} s>")


def as_spec(spec: Spec | str | Path | Mapping[str, Any]) -> Spec:
    """A :class:`Spec` from a spec, a file path, a shipped example's name (``"quickstart"``,
    where no file of that name is here), TOML text or a dict."""
    if isinstance(spec, Spec):
        return spec
    if isinstance(spec, Mapping):
        return Spec.from_dict(dict(spec))
    if isinstance(spec, str) and "\n" not in spec and is_bare(spec.strip()) \
            and is_example(spec.strip()):
        return Spec.from_file(example_file(spec.strip()))  # a shipped example by name, as the CLI reads it
    if isinstance(spec, os.PathLike) or (isinstance(spec, str) and _a_path(spec)):
        return Spec.from_file(spec)
    if isinstance(spec, str):
        return Spec.from_toml(spec)
    raise SpecError(f"expected a Spec, a spec file's path, TOML text or a dict, got {type(spec).__name__}")


def _a_path(text: str) -> bool:
    """``text`` names a spec file (one that exists, or one line without ``=``
    or ending in ``.toml``), not TOML text."""
    if "\n" in text:
        return False
    return os.path.exists(text) or "=" not in text or text.rstrip().endswith(".toml")


def run(spec: Spec | str | Path | Mapping[str, Any], store: str | Path | None = None, *, client: Any = None,
        workers: int | None = None, cluster: Any = None, progress: bool = True, overwrite: bool = False,
        extend: bool = False, jobs: int | str | None = None, dashboard_address: str | None = None,
        performance_report: str | Path | None = None) -> Result:
    """Run (or resume) a sweep and return what it did; ``result.open()`` opens the store.

    Parameters
    ----------
    spec : Spec, path, example name, TOML text or dict
        The sweep (see :class:`Spec`); a shipped example's name (``"quickstart"``) as ``boardsweep run`` takes it.
    store : str or Path, optional
        Store path or fsspec URL (default: the spec's, else ``results/<name>.zarr``).
    client : distributed.Client, optional
        Run on this client's cluster (left open).
    workers : int, optional
        Worker processes of the embedded local cluster (default: one per CPU).
    cluster : optional
        A Dask cluster object (a ``Client`` is made for it, the cluster is left
        running), a scheduler address (``tcp://HOST:8786``) or a batch system's
        name (``"slurm"``, ...; sized by ``jobs``, cancelled at the end).
    progress : bool
        Show the dashboard link and a progress bar (Jupyter: HTML; else what ``boardsweep run`` shows as it runs).
    overwrite, extend : bool
        As ``boardsweep run --overwrite`` / ``--extend``.
    jobs : int or "MIN:MAX", optional
        With a batch system: worker jobs, fixed or adaptive.
    dashboard_address : str, optional
        Where the dashboard of a cluster started here listens (``:8787``).
    performance_report : str or Path, optional
        Save Dask's performance report (HTML) of the run there.

    Returns
    -------
    Result

    Raises
    ------
    SpecError, StoreMismatch, StoreLocked, SweepError
        As ``boardsweep run`` (each with a one-line message; every wait has a deadline, see above).
    InputError
        What ``boardsweep run`` refuses: ``extend`` with ``overwrite``, a
        ``store`` that is not a path or URL, ``workers`` below 1 or above
        what the machine holds, a ``client`` that is not a :class:`distributed.Client`.
    """
    _refuse_in_worker()
    progress, overwrite, extend = map(expect_flag, (progress, overwrite, extend), ("progress", "overwrite", "extend"))
    _check_arguments(store, client, workers, cluster, performance_report)
    if cluster is not None and not isinstance(cluster, str):  # a cluster object: a client of our own for it
        from distributed import Client

        with Client(cluster) as own:
            return run(spec, store, client=own, progress=progress, overwrite=overwrite, extend=extend, jobs=jobs,
                       dashboard_address=dashboard_address, performance_report=performance_report)
    batch = cluster if isinstance(cluster, str) and cluster in BATCH_SYSTEMS else None
    target = cluster_target(workers=workers, scheduler=None if batch else cluster, batch=batch, jobs=jobs,
                            client=client, dashboard_address=dashboard_address, names=API_ARGUMENTS)
    target.performance_report = str(performance_report) if performance_report else None
    request = RunRequest(as_spec(spec), None if store is None else str(store), target, overwrite, extend)
    with _hidden_main():  # the script hidden from the worker processes started meanwhile
        return run_request(request, ("notebook" if _in_notebook() else "terminal") if progress else None)


def run_request(request: RunRequest, progress: Literal["terminal", "notebook"] | None = None) -> Result:
    """Run ``request``: the one path of :func:`run` and ``boardsweep run``.

    The warm-up begins first (:func:`run.begin`: the kernels in a thread where
    the workers are threads here, and a new store's first replicates), then
    Dask, xarray and zarr are imported (:func:`run.execute_request`) while it
    warms; the warm-up is stopped when the run ends, however it ends.

    Parameters
    ----------
    request : RunRequest
        The run, as asked (spec, store, target, what may be replaced).
    progress : {"terminal", "notebook"} or None
        What shows the run as it goes (:data:`PROGRESS`): the CLI's progress
        bar, waiting line and notices, or Jupyter's HTML bar; None: nothing.

    Returns
    -------
    Result
    """
    if progress is not None and progress not in PROGRESS:
        raise ArgumentTypeError(f"progress={progress!r}: expected one of {', '.join(map(repr, PROGRESS))} or None")
    show = _progress(progress, request.target)
    told, warming = begin(request, getattr(show, "compiling", None))
    with ExitStack() as stack:
        if warming is not None:  # stopped however the run ends, an interrupted import included
            stack.enter_context(warming)
        from .run import execute_request  # Dask, xarray and zarr: imported while the kernels warm (run/startup.py)

        if show is not None:
            stack.enter_context(show)
        if request.target.batch:  # SIGTERM and SIGHUP cancel the worker jobs as Ctrl-C does
            stack.enter_context(signals_end_run(request.target.batch))
        report = execute_request(request, Hooks(on_start=getattr(show, "start", None),
                                                on_progress=getattr(show, "update", None), on_compile=told,
                                                on_failure=getattr(show, "failed", None), warming=warming,
                                                on_packed=_verdict_on_workers))
    return Result(report, request.spec)


def _verdict_on_workers(url: str, client: Any) -> bool:
    """The run's verdict made by its workers, block by block, once the store is
    packed (:func:`analysis.verdict_on_workers`): the summary reads it back."""
    from .analysis import verdict_on_workers

    return verdict_on_workers(url, client)


def _check_arguments(store: Any, client: Any, workers: Any, cluster: Any, performance_report: Any = None) -> None:
    """Refuse, in the CLI's one line (:class:`InputError`), arguments that are
    not of their kind (:class:`ArgumentTypeError`), a closed ``client``, and
    more than one of ``client``, ``cluster`` and ``workers``."""
    if performance_report is not None and not isinstance(performance_report, (str, os.PathLike)):
        raise ArgumentTypeError(f"performance_report={performance_report!r}: expected a file path (a str or a Path)")
    given = [name for name, value in (("client", client), ("cluster", cluster), ("workers", workers))
             if value is not None]
    if len(given) > 1:
        raise InputError(f"give one of client=, cluster= and workers=, not {' and '.join(given)}")
    if store is not None and not isinstance(store, (str, os.PathLike)):
        raise ArgumentTypeError(f"store={store!r}: expected a folder path or an fsspec URL (a str or a Path), "
                         f"got {type(store).__name__}")
    if isinstance(store, str) and not store.strip():
        raise InputError("store='': expected a folder path or an fsspec URL")
    if client is not None:
        from distributed import Client

        if not isinstance(client, Client):
            hint = " (a scheduler address goes in cluster=)" if isinstance(client, str) else ""
            raise ArgumentTypeError(f"client={client!r}: expected a distributed.Client{hint}")
        if client.status in ("closing", "closed"):
            raise InputError("client=: the client is closed; pass an open distributed.Client (nothing was started)")


def _refuse_in_worker() -> None:
    """Stop a worker process that imports the user's script from running it again."""
    if getattr(sys.modules.get("__main__"), "__name__", "") == "__mp_main__":
        raise NotInWorker(
            "boardsweep.run was called while a Dask worker process imported your script: put the code that "
            "runs the sweep under `if __name__ == \"__main__\":`")


@contextmanager
def _hidden_main() -> Iterator[None]:
    """Hide the main script from worker processes started meanwhile
    (multiprocessing's spawn re-imports ``__main__`` from its ``__file__`` or
    ``__spec__``; without either, as in Jupyter, it imports nothing)."""
    main = sys.modules.get("__main__")
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if main is not None and k in main.__dict__}
    if main is None or "__file__" not in saved:  # interactive, Jupyter: nothing to hide
        yield
        return
    del main.__dict__["__file__"]
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.update(saved)


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    ip = shell.get_ipython()
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def _progress(progress: str | None, target: Target):
    """The display :func:`run_request`'s ``progress`` names, or None."""
    if progress is None:
        return None
    if progress == "notebook":
        return NotebookProgress()
    from .views import console, TaskBar, WaitingLine

    out = console()
    return TerminalProgress(TaskBar(out), WaitingLine(out, target))


class TerminalProgress:
    """The CLI's display of a run: the progress bar (its ``start``, ``update``,
    and the lines ``compiling`` and ``failed``) and, while the run waits for its
    first worker, the waiting line."""

    def __init__(self, bar: Any, waiting: Any) -> None:
        self.bar, self.waiting = bar, waiting
        self.start, self.update, self.compiling, self.failed = bar.start, bar.update, bar.compiling, bar.failed

    def __enter__(self) -> "TerminalProgress":
        self.bar.__enter__()
        self.waiting.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.waiting.__exit__(*exc)
        finally:
            self.bar.__exit__(*exc)


class NotebookProgress:
    """Dashboard link and progress bar as HTML, updated in place (no widgets needed)."""

    EVERY_S = 0.25

    def __init__(self) -> None:
        self.handle, self.link, self.t0, self.shown = None, "", time.monotonic(), 0.0

    def __enter__(self) -> "NotebookProgress":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def start(self, report: RunReport) -> None:
        from IPython.display import HTML, display

        self.link, self.t0 = report.dashboard, time.monotonic()
        self.handle = display(HTML(self._html(0, report.pending)), display_id=True)

    def update(self, done: int, total: int) -> None:
        from IPython.display import HTML

        now = time.monotonic()
        if self.handle is not None and (done == total or now - self.shown >= self.EVERY_S):
            self.handle.update(HTML(self._html(done, total)))
            self.shown = now

    def _html(self, done: int, total: int) -> str:
        link = html.escape(self.link)
        dashboard = (f'dashboard: <a href="{link}" target="_blank">{link}</a>' if link else "no dashboard")
        elapsed = time.monotonic() - self.t0
        return (f"<div>{dashboard}<br><progress value='{done}' max='{max(total, 1)}' style='width:60%'></progress>"
                f" tasks {done}/{total}, {elapsed:.0f} s</div>")


def report(store: str | os.PathLike | Any, out_dir: str | os.PathLike | None = None, variable: str | None = None,
           loaded: Any = None, deck_orders: bool = False, progress: Any = None, block_points: int | None = None,
           every: bool = False) -> dict | None:
    """Write the report of the sweep store ``store`` into ``out_dir``; summary.json's entries (None: a grid in blocks).

    ``store``: a path or URL, or an xarray Dataset already read (``out_dir`` then needed); ``loaded``: the
    store's Dataset as the caller opened it (read from there, not opened again).  The store is read here
    (:func:`boardsweep.pipeline.analysis.read_sweep`: whole in memory up to the report's table size,
    :func:`boardsweep.pipeline.views.report.report_points`, else block by block) and drawn by
    :func:`boardsweep.pipeline.views.build_report`, whose parameters the others are.
    """
    from .analysis import read_sweep
    from .run import store_above
    from .store import local_root
    from .views import build_report, default_out_dir, report_points

    if isinstance(store, (str, os.PathLike)):
        url = str(store)
        out = Path(out_dir) if out_dir is not None else default_out_dir(url, local_root(url))
        whole, most = report_points(block_points, every)
        ds, in_blocks = read_sweep(url, whole, most, opened=loaded)
    elif out_dir is None:
        raise ValueError("report: out_dir is needed when the store is a Dataset")
    else:
        url, out, ds, in_blocks = None, Path(out_dir), store.load(), False
    return build_report(ds, out, variable, store=url, in_blocks=in_blocks, deck_orders=deck_orders,
                        progress=progress, block_points=block_points, every=every, inside=store_above(out))
