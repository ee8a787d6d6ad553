"""Run a sweep on Dask: prepare the store, submit the missing tasks, follow them.

``run_sweep`` is what ``boardsweep run`` calls.  It takes the store's lock,
creates the store (or checks that an existing one was made by the same spec),
reads the done masks, and submits only the missing tasks to an embedded
:class:`distributed.LocalCluster` or to an existing scheduler.  Workers write
their own regions (see :mod:`pipeline.tasks`); the client only receives small
timing records.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from pipeline import store
from pipeline.lock import StoreLock
from pipeline.plan import plan_tasks
from pipeline.spec import Spec
from pipeline.tasks import run_exact, run_task

__all__ = ["RunReport", "run_sweep", "normalize_url"]


@dataclass
class RunReport:
    """What a run did (for the summary and the benchmark)."""

    store: str
    tasks_total: int
    tasks_run: int = 0
    exact_run: int = 0
    kernel_s: float = 0.0
    write_s: float = 0.0
    wall_s: float = 0.0
    dashboard: str = ""
    workers: int = 0
    pending: int = 0
    complete: bool = False
    records: list[dict] = field(default_factory=list)


def normalize_url(url: str) -> str:
    """Absolute path for a local store (workers may run elsewhere), URLs unchanged."""
    if "://" in url and not url.startswith("file://"):
        return url
    return str(Path(url.removeprefix("file://")).expanduser().resolve())


def prepare_store(spec: Spec, url: str, overwrite: bool) -> None:
    """Create the store, or check that it belongs to ``spec`` (lock already held)."""
    if store.store_exists(url):
        if overwrite:
            store.clear_store(url)
        else:
            store.check_spec(url, spec)
            return
    elif _has_foreign_files(url):
        raise store.StoreMismatch(
            f"store {url} exists and is not a zarr store; refusing to write into it"
        )
    store.create_store(url, spec)


def _has_foreign_files(url: str) -> bool:
    import fsspec

    fs, root = fsspec.core.url_to_fs(url)
    if not fs.exists(root):
        return False
    return any(Path(p).name != ".boardsweep.lock" for p in fs.ls(root, detail=False))


def _client(stack: ExitStack, workers: int | None, scheduler: str | None):
    from distributed import Client, LocalCluster

    if scheduler:
        return stack.enter_context(Client(scheduler, timeout="20s"))
    cluster = stack.enter_context(
        LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        )
    )
    return stack.enter_context(Client(cluster))


def run_sweep(
    spec: Spec,
    url: str | None = None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    overwrite: bool = False,
    max_tasks: int | None = None,
    on_start: Callable[[RunReport], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> RunReport:
    """Run (or resume) ``spec`` into the store at ``url``.

    Parameters
    ----------
    spec : Spec
        The validated sweep.
    url : str, optional
        Store path or fsspec URL (default: the spec's, else results/<name>.zarr).
    workers : int, optional
        Worker processes of the embedded cluster (default: CPU count).
    scheduler : str, optional
        Address of an existing Dask scheduler; no local cluster is started.
    overwrite : bool
        Replace a store made by a different spec.
    max_tasks : int, optional
        Submit at most this many simulation tasks (the rest stay missing, as
        after an interruption); for tests and staged runs.
    on_start, on_progress : callable, optional
        Called with the report once the client is up, and with (done, total)
        after each finished task.

    Returns
    -------
    RunReport
    """
    url = normalize_url(url or spec.default_store())
    t0 = time.perf_counter()
    with ExitStack() as stack:
        stack.enter_context(StoreLock(url))
        prepare_store(spec, url, overwrite)
        tasks = plan_tasks(spec, store.read_done(url))
        exact_done = store.read_exact_done(url)
        points = [(i, p) for i, p in spec.points() if not exact_done[i]]
        report = RunReport(store=url, tasks_total=len(spec.points()) * -(-spec.replicates // spec.block))
        if max_tasks is not None:
            tasks = tasks[:max_tasks]
        if tasks or points:
            client = _client(stack, workers, scheduler)
            report.dashboard = client.dashboard_link or ""
            report.workers = len(client.scheduler_info().get("workers", {}))
            report.pending = len(tasks) + len(points)
            if on_start:
                on_start(report)
            _submit_and_wait(client, spec, url, tasks, points, report, on_progress)
        report.complete = bool(store.read_done(url).all())
    report.wall_s = time.perf_counter() - t0
    return report


def _submit_and_wait(client, spec, url, tasks, points, report, on_progress) -> None:
    from distributed import as_completed

    game, tag = spec.game, uuid.uuid4().hex[:8]
    futures = [
        client.submit(run_exact, game, index, params, spec.run_shape, spec.checkpoints, url,
                      key=f"exact-{'-'.join(map(str, index))}-{tag}", pure=False)
        for index, params in points
    ]
    futures += [
        client.submit(run_task, game, spec.seed, task, spec.run_shape, spec.checkpoints, url,
                      key=f"sim-{task.key}-{tag}", pure=False)
        for task in tasks
    ]
    total, finished = len(futures), 0
    try:
        for future in as_completed(futures):
            record = future.result()
            finished += 1
            report.records.append(record)
            report.kernel_s += record["kernel_s"]
            report.write_s += record["write_s"]
            if record["key"].startswith("exact-"):
                report.exact_run += 1
            else:
                report.tasks_run += 1
            if on_progress:
                on_progress(finished, total)
    finally:
        client.cancel(futures)
