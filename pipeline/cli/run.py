"""The ``run`` command: a sweep run (or resumed) from a spec file.

The options become one :class:`run.RunRequest`, run by the API's own
function (:func:`boardsweep.pipeline.api.run_request`, which warms the kernels
and gives the head start); what is printed of the run's record (the summary,
``--format json``, ``--report-json``) is the command's.
"""

from __future__ import annotations

import json

import click

from ..cluster import SYSTEMS as BATCH_SYSTEMS
from ..cluster import START_TIMEOUT_S, performance_report_path
from ..run import CLI_OPTIONS, RunRequest, cluster_target
from . import interrupt
from .dry_run import print_plan
from ..urls import local_root
from ..words import json_text
from .options import (JSON_FORMAT, SCHEDULER, TLS_CA, TLS_CERT, TLS_KEY, WORKERS, load_spec, quiet_for_json,
                      scheduler_address, tls_options)
from .verbosity import Command

__all__ = ["run"]


@click.command(cls=Command)
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False))
@click.option("--store", "store_url", default=None, help=(
    "Store path or fsspec URL (default: the spec's, else results/<name>.zarr). An S3 request gives up "
    "after 3 attempts of 3 s to connect and 6 s to answer (18 s), set by the spec's [storage_options] "
    "config_kwargs (read_timeout, connect_timeout, retries.total_max_attempts)."))
@WORKERS
@SCHEDULER
@click.option("--overwrite", is_flag=True, help=(
    "Replace a boardsweep store made by a different spec: removes only the arrays, metadata and "
    "checksum records boardsweep made there (other files in the folder stay). Anything that is "
    "not a boardsweep store is never replaced."))
@click.option("--extend", is_flag=True, help=(
    "Grow the existing store in place to SPEC: SPEC may add grid-axis values and raise "
    "run.replicates, nothing else; only the new cells run, old cells are kept as they are."))
@click.option("--cluster", "batch", type=click.Choice(list(BATCH_SYSTEMS)), default=None, help=(
    "Start worker jobs on this batch system through dask-jobqueue (pip install 'boardsweep[hpc]'), "
    "configured by its own jobqueue.<system>.* settings (a Dask config file or "
    "DASK_JOBQUEUE__SLURM__CORES=1 and the like)."))
@click.option("--jobs", default=None, metavar="N|MIN:MAX", help=(
    "With --cluster: N worker jobs, or adaptively between MIN and MAX (default 1)."))
@click.option("--start-timeout", type=click.FloatRange(min=0), default=START_TIMEOUT_S, show_default=True,
              metavar="SECONDS", help=(
                  "With --cluster: give up when no worker job has started after this long, "
                  "naming the batch system's reason; with --scheduler: when no worker has joined it. "
                  "Once every worker has left mid-sweep, the run ends after Dask's boardsweep.no-workers-timeout "
                  "(30 s; DASK_BOARDSWEEP__NO_WORKERS_TIMEOUT=2m), or this with --cluster if longer."))
@click.option("--dashboard-address", default=None, metavar="[HOST]:PORT", help=(
    "Where the dashboard of the cluster boardsweep starts listens, e.g. :8787 for an SSH tunnel "
    "(default: Dask's distributed.scheduler.dashboard.address, else a free port; the embedded "
    "cluster's stays on 127.0.0.1 unless HOST says otherwise)."))
@click.option("--performance-report", is_flag=True, help=(
    "Save Dask's performance report of the run as STORE.performance.html beside the store."))
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=(
    "Override a spec key by its dotted path, e.g. --set run.replicates=16 --set grid.dice_sides=4,6 "
    "(repeatable); checked like the file and recorded in the store's spec."))
@click.option("--dry-run", is_flag=True, help=(
    "Print the plan (grid points, tasks, estimated time and store size, the store) and create nothing; "
    "the time from the game's cost model, nothing run or compiled (--format json: the plan as JSON)."))
@JSON_FORMAT
@click.option("--max-tasks", type=click.IntRange(min=0), default=None, hidden=True)
@click.option("--report-json", type=click.Path(dir_okay=False), default=None, hidden=True)
@TLS_CA
@TLS_CERT
@TLS_KEY
def run(spec_path: str, store_url: str | None, workers: int | None, scheduler: str | None, overwrite: bool,
        extend: bool, batch: str | None, jobs: str | None, start_timeout: float, dashboard_address: str | None,
        performance_report: bool, overrides: tuple[str, ...], dry_run: bool, fmt: str, max_tasks: int | None,
        report_json: str | None, tls_ca_file: str | None, tls_cert: str | None, tls_key: str | None) -> None:
    """Run (or resume) the sweep described by the spec file SPEC.

    `--set run.replicates=16` changes one key of SPEC for this run, and
    `--dry-run` prints what the run would do without doing it.

    `--cluster slurm --jobs 4` runs it on four SLURM worker jobs (likewise pbs,
    sge, lsf, htcondor, moab and oar), cancelled when the run ends.

    Exits 1 when the scheduler is lost or a task fails (finished tasks stay in
    the store; rerun the same command to resume).  `--format json` prints
    only the run's record, headline rows and verdict, as JSON.
    """
    quiet_for_json(fmt)
    scheduler = scheduler if batch else scheduler_address(scheduler)  # with --cluster: only a given one, refused
    security = tls_options(scheduler, tls_ca_file, tls_cert, tls_key)
    target = cluster_target(workers=workers, scheduler=scheduler, batch=batch, jobs=jobs, start_timeout=start_timeout,
                            dashboard_address=dashboard_address, names=CLI_OPTIONS)
    request = RunRequest(load_spec(spec_path, overrides), store_url, target, overwrite, extend, max_tasks)
    url = request.store or request.spec.default_store()
    if local_root(url) is None:  # a URL no run can use (fiel://, memory://) refused before anything is said
        from ..store import normalize_url  # xarray and zarr: a folder's run imports them while kernels warm

        normalize_url(url)
    if dry_run:
        print_plan(request.spec, url, target, fmt)
        return
    from ..analysis import planned_work, read_finished
    from ..api import run_request
    from ..run import layout_known_now
    from ..views import announce, console, info, run_summary

    target.security = security
    if performance_report:
        target.performance_report = performance_report_path(url, local_root(url))
    out = console()
    announce(out, request.spec, url, planned_work(request.spec, layout_known_now(request.spec, target)), scheduler,
             target.describe())
    interrupt.keeps(f"the finished tasks, in {url},", store=url)
    report = run_request(request, progress="terminal").report  # the API's own run (pipeline/api.py)
    if fmt == "json":
        _print_json(request.spec, report)
    else:
        run_summary(out, report, read_finished(report.store))
    if target.performance_report and fmt != "json":
        info(out, f"performance report: {target.performance_report}")
    if report_json:
        from dataclasses import asdict

        with open(report_json, "w") as f:
            json.dump(asdict(report), f, indent=2)


#: What ``run --format json`` records of the run (:class:`RunReport`'s fields; not its per-task records).
#: Compile time as the run waited for it (``compile_wait_s``, within ``wall_s``), not summed over tasks.
JSON_RUN_FIELDS = ("complete", "tasks_total", "tasks_run", "exact_run", "exact_solves", "points_per_task", "block",
                   "workers", "wall_s", "kernel_s", "compile_wait_s", "write_s", "repaired", "calibration", "dashboard")


def _print_json(spec, report) -> None:
    """``run --format json``: the store, the run's record and the headline summary
    (:func:`query_rows.summary_record`), every number at full precision."""
    from ..store import load_sweep
    from ..views import summary_record

    ds = load_sweep(report.store, check=False)  # the run has just checked and written it
    click.echo(json_text({"sweep": spec.name, "store": report.store,
                          "run": {name: getattr(report, name) for name in JSON_RUN_FIELDS},
                          **summary_record(ds)}))
