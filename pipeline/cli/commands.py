"""The ``boardsweep`` command.

Every command reaches games only through :mod:`boardsweep.core.games`.  A wrong option or
value prints one line ``boardsweep: error: ...`` on stderr and exits with 2.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import sys
from typing import Any

import click
import numpy as np

from ...core.games import Game, ParameterError, game_names, get_game
from ..cluster.batch import SYSTEMS as BATCH_SYSTEMS, BatchUnavailable, JobsNotStarted, WaitingLine, signals_end_run
from ..cluster.client import START_TIMEOUT_S, performance_report_path
from ..errors import BoardsweepError, causes
from ..spec.parse import SpecError

__all__ = ["main", "cli"]


class UserError(click.UsageError):
    """A user-facing error reported in one line with exit code 2."""


class RunFailed(click.ClickException):
    """A run or a check that did not succeed: one line, exit code 1."""

    exit_code = 1


def parse_sets(game: Game, sets: tuple[str, ...]) -> dict[str, Any]:
    """Turn ``--set name=value`` options into a validated parameter dict."""
    given: dict[str, Any] = {}
    for item in sets:
        if "=" not in item:
            raise UserError(f"--set {item!r}: expected NAME=VALUE")
        name, text = item.split("=", 1)
        given[name.strip()] = game.param(name.strip()).parse(text.strip())
    return game.resolve_params(given)


def load_spec(path: str, overrides: tuple[str, ...] = ()):
    """Parse and validate a sweep spec, with ``--set KEY=VALUE`` overrides
    (SpecError -> one-line error, exit 2)."""
    from ..spec.parse import load_spec as _load

    return _load(path, overrides)


def load_game(name: str) -> Game:
    try:
        return get_game(name)
    except ParameterError as exc:
        raise UserError(str(exc)) from None


def complete_game(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of a GAME argument: the installed games."""
    return [name for name in game_names() if name.startswith(incomplete)]


def scheduler_address(given: str | None) -> str | None:
    """``--scheduler``, else Dask's own configuration (``scheduler-address``,
    e.g. from ``DASK_SCHEDULER_ADDRESS``), else None (an embedded cluster)."""
    if given:
        return given
    import dask.config

    return dask.config.get("scheduler-address", None) or None


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def emit(summary: dict, fmt: str, game: Game | None = None, params: dict | None = None) -> None:
    """Print a JSON-ready summary as JSON or as plain tables (one per set of labels)."""
    summary = _jsonable(summary)
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2))
        return
    from ..views import display

    dims: dict[str, tuple] = {}
    if game is not None:
        coords = game.coords_for(params or {p.name: p.default for p in game.params})
        dims = {**coords, **{d: (*coords.get(d, ()), *names) for d, names in game.label_names.items()}}
    display.print_summary(summary, dims)


FORMAT = click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
SET = click.option(
    "--set", "sets", multiple=True, metavar="NAME=VALUE", help="Set a game parameter."
)

WORKERS = click.option("--workers", type=click.IntRange(min=1), default=None, help=(
    "Workers of the local cluster (default: one per CPU, at most 4 per CPU or 16): single-threaded workers "
    "in this process (worker processes with Dask's boardsweep.processes setting, DASK_BOARDSWEEP__PROCESSES=True)."))
TLS_CA = click.option("--tls-ca-file", type=click.Path(exists=True, dir_okay=False), default=None,
                      help="TLS: CA certificate(s) to trust (PEM), with --scheduler tls://...")
TLS_CERT = click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), default=None,
                        help="TLS: this client's certificate (PEM).")
TLS_KEY = click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), default=None,
                       help="TLS: this client's private key (PEM).")


def tls_options(scheduler: str | None, ca_file: str | None, cert: str | None, key: str | None):
    """A Security object (encryption required) from the --tls-* options, or None."""
    given = {"--tls-ca-file": ca_file, "--tls-cert": cert, "--tls-key": key}
    if not any(given.values()):
        if scheduler and scheduler.startswith("tls://"):
            raise UserError(f"scheduler {scheduler} uses TLS: give --tls-ca-file, --tls-cert and --tls-key")
        return None
    missing = [name for name, value in given.items() if not value]
    if missing:
        raise UserError(f"TLS needs --tls-ca-file, --tls-cert and --tls-key together; missing {', '.join(missing)}")
    if not scheduler:
        raise UserError("the --tls-* options secure the connection to --scheduler; give --scheduler tls://HOST:PORT")
    from ..run.execute import tls_security

    return tls_security(ca_file, cert, key)


def run_target(batch: str | None, jobs: str | None, start_timeout: float, scheduler: str | None,
               workers: int | None, dashboard: str | None):
    """Where ``run`` sends its tasks, from its options (conflicting options: one line, exit 2)."""
    from ..cluster.batch import BatchUnavailable, check_available, parse_jobs
    from ..cluster.client import Target, check_dashboard_address, check_workers

    check_workers(workers)  # one line, exit 2, before anything starts
    check_dashboard_address(dashboard)

    if batch is None:
        if jobs is not None:
            raise UserError("--jobs sizes the worker jobs of --cluster; give --cluster SYSTEM too")
        if scheduler and dashboard:
            raise UserError(f"--dashboard-address applies to a cluster boardsweep starts; the scheduler at "
                            f"{scheduler} has its own dashboard")
        return Target(scheduler=scheduler, dashboard_address=dashboard, start_timeout=start_timeout)
    if scheduler or workers:
        given = "--scheduler" if scheduler else "--workers"
        raise UserError(f"--cluster {batch} starts its own workers (sized by --jobs); drop {given}")
    try:
        check_available(batch)
        parsed = parse_jobs(jobs if jobs is not None else "1")
    except BatchUnavailable as exc:
        raise UserError(str(exc)) from None
    return Target(batch=batch, jobs=parsed, start_timeout=start_timeout, dashboard_address=dashboard)


def _verbosity_options() -> list[click.Option]:
    """``-v`` and ``-q``, taken by the group and, again, by every subcommand."""
    return [click.Option(["-v", "--verbose"], count=True, help="More output: -v Dask's log messages, -vv debug."),
            click.Option(["-q", "--quiet"], is_flag=True,
                         help="Only results and errors: no banner, progress or timings.")]


class _Command(click.Command):
    """A subcommand that also takes ``-q`` and ``-v`` after its name
    (``boardsweep run SPEC -q``), added to those given before it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params += _verbosity_options()

    def invoke(self, ctx: click.Context) -> Any:
        verbose, quiet = ctx.params.pop("verbose", 0), ctx.params.pop("quiet", False)
        if verbose or quiet:
            before_v, before_q = ctx.meta.get("boardsweep.verbosity", (0, False))
            _set_verbosity(before_v + verbose, before_q or quiet)
        return super().invoke(ctx)


class _Group(click.Group):
    command_class = _Command

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params += _verbosity_options()


@click.group(cls=_Group, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="boardsweep")
@click.pass_context
def cli(ctx: click.Context, verbose: int, quiet: bool) -> None:
    """Exact and Monte Carlo odds of dice-driven board games.

    `boardsweep games` lists the installed games and `boardsweep games NAME`
    their parameters.  Shell completion: eval "$(_BOARDSWEEP_COMPLETE=bash_source boardsweep)".
    """
    if ctx.invoked_subcommand is None:  # a bare `boardsweep`: its help, and success
        if verbose and quiet:
            raise UserError("-v and -q exclude each other")
        click.echo(ctx.get_help())
        ctx.exit(0)
    ctx.meta["boardsweep.verbosity"] = (verbose, quiet)
    _set_verbosity(verbose, quiet)


def _set_verbosity(verbose: int, quiet: bool) -> None:
    """``-q`` / ``-v`` / ``-vv``, given before or after the subcommand: the
    output's verbosity and the log messages shown."""
    from ..views import display

    if verbose and quiet:
        raise UserError("-v and -q exclude each other")
    display.set_verbosity(-1 if quiet else verbose)
    if verbose:
        logging.basicConfig(level=logging.DEBUG if verbose > 1 else logging.INFO,
                            format="%(asctime)s %(name)s %(levelname)s: %(message)s")
        logging.getLogger().setLevel(logging.DEBUG if verbose > 1 else logging.INFO)  # -v, then -v again
        logging.getLogger("distributed").setLevel(logging.DEBUG if verbose > 1 else logging.INFO)
        logging.getLogger("asyncio").setLevel(logging.NOTSET)
    elif not logging.getLogger().handlers:
        _quiet_library_logs()


def _quiet_library_logs() -> None:
    """Without ``-v``, the command names every fault itself, in one line:
    Dask's records (its own stderr handler; the embedded cluster silences it
    only while it lives, and a comm closing after that logs "Batched Comm
    Closed" with a traceback) and asyncio's ("Task exception was never
    retrieved": a lost S3 server's requests left in zarr's and fsspec's
    loops) would print tracebacks around that line."""
    for name in ("distributed", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    # distributed sets its logger's level from Dask's configuration as it loads (later, for a run):
    # the same level there, unless the user's environment sets one
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "critical")
    if "dask.config" in sys.modules:  # loaded already (a program calling the CLI's function): told directly
        import dask.config

        if os.environ["DASK_LOGGING__DISTRIBUTED"] == "critical":
            dask.config.set({"logging.distributed": "critical"})


@cli.command()
@click.argument("game_name", metavar="[GAME]", required=False, shell_complete=complete_game)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def games(game_name: str | None, fmt: str) -> None:
    """List the installed games, or describe GAME: its parameters (type, allowed
    values, default), run shape, output variables and whether an exact answer exists."""
    from ..views import display

    if game_name is None:
        display.print_games(fmt)
    else:
        display.print_game(load_game(game_name), fmt)


@cli.command()
@click.argument("game_name", metavar="GAME", shell_complete=complete_game)
@SET
@FORMAT
def exact(game_name: str, sets: tuple[str, ...], fmt: str) -> None:
    """Print the exact answer of GAME for one parameter set."""
    game = load_game(game_name)
    params = parse_sets(game, sets)
    if game.summarize_exact is None:
        raise UserError(f"game {game.name!r} has no exact solver")
    emit(game.summarize_exact(params), fmt, game, params)


@cli.command()
@click.argument("game_name", metavar="GAME", shell_complete=complete_game)
@SET
@click.option("--games", type=int, default=None, help="Games in the run.")
@click.option("--players", type=int, default=None, help="Tokens per game.")
@click.option("--turns", type=int, default=None, help="Turns per game.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Root seed (an integer >= 0).")
@FORMAT
def simulate(
    game_name: str,
    sets: tuple[str, ...],
    games: int | None,
    players: int | None,
    turns: int | None,
    seed: int,
    fmt: str,
) -> None:
    """Run one Monte Carlo simulation of GAME (no store) and print a summary."""
    game = load_game(game_name)
    params = parse_sets(game, sets)
    given = {k: v for k, v in (("games", games), ("players", players), ("turns", turns)) if v is not None}
    for key in given:
        if key not in game.run_shape:
            raise UserError(
                f"--{key} does not apply to game {game.name!r}; "
                f"its run shape is {', '.join('--' + k for k in game.run_shape)}"
            )
    run_shape = game.resolve_run_shape(given)
    checkpoints = np.array([run_shape[game.checkpoint_of]], dtype=np.int64)
    sim = game.simulate(params, seed, run_shape, checkpoints)
    emit(game.summarize(params, sim, run_shape), fmt, game, params)


@cli.command()
@click.argument("game_name", metavar="GAME", shell_complete=complete_game)
@click.option("--dice", required=True, help="Comma-separated die faces, two per roll.")
@click.option(
    "--cards",
    default="",
    help="Comma-separated card draws in the order they happen (see the game's replay docs).",
)
@click.option("--turns", type=int, default=None, help="Stop after this many turns.")
@SET
@FORMAT
def replay(
    game_name: str, dice: str, cards: str, turns: int | None, sets: tuple[str, ...], fmt: str
) -> None:
    """Replay a scripted game of GAME from given dice faces and card draws."""
    game = load_game(game_name)
    if "replay" not in game.extras:
        raise UserError(f"game {game.name!r} has no scripted replay")
    params = parse_sets(game, sets)
    try:
        faces = [int(x) for x in dice.replace(" ", "").split(",") if x]
    except ValueError:
        raise UserError(f"--dice {dice!r}: expected comma-separated integers") from None
    draws = [c for c in cards.replace(" ", "").split(",") if c]
    emit(game.extras["replay"](params, faces, draws, turns), fmt, game, params)


@cli.command()
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False))
@click.option("--store", "store_url", default=None, help=(
    "Store path or fsspec URL (default: the spec's, else results/<name>.zarr). An S3 request gives up "
    "after 3 attempts of 3 s to connect and 6 s to answer (18 s), set by the spec's [storage_options] "
    "config_kwargs (read_timeout, connect_timeout, retries.total_max_attempts)."))
@WORKERS
@click.option("--scheduler", default=None, metavar="ADDRESS", help="Use an existing Dask scheduler (default: Dask's scheduler-address config, e.g. DASK_SCHEDULER_ADDRESS; else a local cluster).")
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
    "Print the plan (grid points, tasks, estimated time and store size, the store) and create nothing."))
@click.option("--max-tasks", type=click.IntRange(min=0), default=None, hidden=True)
@click.option("--report-json", type=click.Path(dir_okay=False), default=None, hidden=True)
@TLS_CA
@TLS_CERT
@TLS_KEY
def run(
    spec_path: str,
    store_url: str | None,
    workers: int | None,
    scheduler: str | None,
    overwrite: bool,
    extend: bool,
    batch: str | None,
    jobs: str | None,
    start_timeout: float,
    dashboard_address: str | None,
    performance_report: bool,
    overrides: tuple[str, ...],
    dry_run: bool,
    max_tasks: int | None,
    report_json: str | None,
    tls_ca_file: str | None,
    tls_cert: str | None,
    tls_key: str | None,
) -> None:
    """Run (or resume) the sweep described by the spec file SPEC.

    `--set run.replicates=16` changes one key of SPEC for this run, and
    `--dry-run` prints what the run would do without doing it.

    `--cluster slurm --jobs 4` runs it on four SLURM worker jobs (likewise pbs,
    sge, lsf, htcondor, moab and oar), cancelled when the run ends.

    Exits 1 when the scheduler is lost or a task fails (finished tasks stay in
    the store; rerun the same command to resume).
    """
    from ..views import display

    if extend and overwrite:
        from ..run.execute import EXTEND_AND_OVERWRITE

        raise UserError(EXTEND_AND_OVERWRITE)
    scheduler = scheduler if batch else scheduler_address(scheduler)  # with --cluster: only a given one, refused
    security = tls_options(scheduler, tls_ca_file, tls_cert, tls_key)
    target = run_target(batch, jobs, start_timeout, scheduler, workers, dashboard_address)
    spec = load_spec(spec_path, overrides)
    url = store_url or spec.default_store()
    if dry_run:
        target.workers = workers
        _print_plan(spec, url, target)
        return
    if performance_report:
        target.performance_report = performance_report_path(url)
    target.workers, target.security = workers, security
    console = display.console()
    display.announce(console, spec, url, scheduler, target.describe())
    bar = display.TaskBar(console)
    compiling, warming = _warm_up(spec, target, bar.compiling)
    from ..run.execute import SweepError, run_sweep  # Dask, xarray and zarr: imported while the kernels warm
    from ..plan.sizing import TooLarge
    from ..store import StoreMismatch
    from ..store.lock import StoreLocked

    try:
        with bar, WaitingLine(console, target), signals_end_run(batch):
            report = run_sweep(
                spec, store_url, overwrite=overwrite, extend=extend, max_tasks=max_tasks,
                on_start=bar.start, on_progress=bar.update, target=target, on_compile=compiling,
                on_failure=bar.failed, warming=warming,
            )
    except (StoreMismatch, StoreLocked, TooLarge, BatchUnavailable) as exc:
        raise UserError(str(exc)) from None
    except (SweepError, JobsNotStarted) as exc:
        raise RunFailed(str(exc)) from None
    display.run_summary(console, report)
    if target.performance_report:
        display.info(console, f"performance report: {target.performance_report}")
    if report_json:
        from dataclasses import asdict

        with open(report_json, "w") as f:
            json.dump(asdict(report), f, indent=2)


def _print_plan(spec, url: str, target) -> None:
    """``run --dry-run``: what the run would do, nothing created.

    The time is estimated from one replicate of the first, middle and last
    grid points, simulated here (warm, as the run's ``[tasks] seconds``
    calibration does; nothing is written), the slowest of them counting for
    every replicate.  The store's size is the uncompressed upper bound that
    the run checks against the free space."""
    from ..plan.sizing import AUTO_TASK_S, auto_task_grid, estimate, groups_points, human
    from ..plan.tasks import exact_solves, task_count, task_shape
    from ..run.worker import time_replicate
    from ..words import count

    points = spec.resolved_points()
    picked = sorted({0, len(points) // 2, len(points) - 1})
    click.echo(f"dry run of sweep {spec.name} ({spec.game_name}) from {spec.source}; nothing is created")
    url, found, recorded = _store_state(spec, url)
    click.echo(f"  store:       {url}: {found}")
    axes = " x ".join(f"{axis} {len(values)}" for axis, values in spec.grid.items()) or "no grid axes"
    click.echo(f"  grid:        {count(len(points), 'point')} ({axes})")
    auto = groups_points(spec)
    seconds = time_replicate(spec.game, spec.seed, [points[i][1] for i in picked], spec.run_shape,
                             spec.checkpoints, spec.task_seconds or (AUTO_TASK_S if auto else 0.0))
    how = ""
    if spec.task_seconds is not None:
        spec = spec.with_block(*task_shape(spec.task_seconds, seconds, spec.replicates, len(points)))
    elif recorded is not None:  # the run keeps the store's chunks
        spec, how = spec.with_block(spec.block, grid_chunks=recorded), " (as recorded in the store)" if auto else ""
    elif auto:  # the run times a replicate on a worker and chooses by the same rule
        spec, how = spec.with_block(spec.block, grid_chunks=auto_task_grid(spec, seconds)), " (chosen automatically)"
    first = " (the first round)" if spec.precision_stderr is not None else ""
    click.echo(f"  replicates:  {spec.replicates} per point{first}"
               + (f", up to {spec.max_replicates} for a standard error of {spec.precision_stderr:g}"
                  if spec.precision_stderr is not None else ""))
    per_task = int(np.prod(spec.task_grid, dtype=np.int64))
    click.echo(f"  tasks:       {count(task_count(spec), 'simulation task')} of up to "
               f"{count(spec.block, 'replicate')}" + (f" x {count(per_task, 'grid point')}" if per_task > 1 else "")
               + f" + {count(exact_solves(spec), 'exact solve')}{how}")
    size = estimate(spec)
    click.echo(f"  store size:  up to {human(size.store_bytes)} (uncompressed)")
    kernel = seconds * spec.replicates * len(points)
    workers = target.workers or (os.cpu_count() or 1) if not (target.scheduler or target.batch) else None
    named = f"{workers} worker{'s' if workers != 1 else ''}" if workers else ""
    wall = f", about {_duration(kernel / workers)} on {named}" if workers else ""
    click.echo(f"  time:        one replicate takes up to {_duration(seconds)} (timed at {len(picked)} grid points): "
               f"{_duration(kernel)} of simulation in all{wall}, plus start-up")
    click.echo(f"  runs on:     {target.describe()}" + (f" ({named})" if workers else ""))
    _print_planning(spec)


def _print_planning(spec) -> None:
    """``run --dry-run``'s planning lines (:func:`planning.dry_run_lines`): what
    the run will be able to see, where the game's exact CLT variance says it."""
    from ..plan.power import dry_run_lines

    for i, line in enumerate(dry_run_lines(spec)):
        click.echo(f"  {'planning:' if i == 0 else '':<13}{line}")


def _store_state(spec, url: str) -> tuple[str, str, tuple[int, ...] | None]:
    """(the store's URL, what a run would do with what is there, the store's
    grid points per task where the run resumes it), for ``--dry-run``; reads only."""
    from ..store import inspect, normalize_url, read_attrs
    from ..store.manifests import store_chunks

    try:
        url = normalize_url(url)
        found = inspect(url)
        if found in ("absent", "empty"):
            return url, "new", None
        if found != "boardsweep":
            return url, f"holds a {found}, which a run refuses", None
        attrs = read_attrs(url, check=False)
        if json.loads(attrs.get("spec_canonical", "{}")) == spec.canonical():
            return (url, "exists, made by this spec: the run resumes it (see `boardsweep status`)",
                    store_chunks(attrs) or (1,) * len(spec.axes))
        return url, ("exists, made by another spec: the run refuses it (--extend grows it to a larger spec, "
                     "--overwrite replaces it)"), None
    except Exception as exc:  # noqa: BLE001 - a dry run says what it cannot see, and goes on
        return url, f"cannot be read ({_one_line(exc)})", None


def _duration(seconds: float) -> str:
    """A time for people: ``0.098 s``, ``12 s``, ``4.2 min``, ``3.1 h``."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _warm_up(spec, target, on_compile):
    """(``on_compile`` made to tell once, the warm-up): the kernels of
    ``spec`` loaded or compiled in a thread from now on (:class:`warm.WarmUp`)
    when the run's workers will be threads of this process, else None."""
    from ..cluster.client import threads_here
    from ..run.warm import WarmUp, once

    told = once(on_compile)
    return told, (WarmUp(spec, told) if threads_here(target) else None)


@cli.command()
@click.argument("store_url", metavar="STORE")
@click.option("--sel", "sels", multiple=True, metavar="AXIS=VALUE", help="Select grid points.")
@click.option("--variable", default=None, help="Simulated variable (default: the first distribution).")
@click.option("--top", type=click.IntRange(min=1), default=None, help="Rows per grid point (table default 5).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@click.option("--summary", is_flag=True,
              help="The headline answers on one screen and the verdict (CSV and JSON: every row).")
@click.option("--all", "every", is_flag=True,
              help="With --summary: every grid point, headline and label (estimate, se, df, exact, z, p).")
def query(store_url: str, sels: tuple[str, ...], variable: str | None, top: int | None, fmt: str,
          summary: bool, every: bool) -> None:
    """Estimates, standard errors and exact values from the sweep store STORE."""
    from ..views import display

    ds = display.open_store(store_url, UserError, sels=sels)
    if summary or every:
        display.print_headline_summary(ds, fmt, every=every, store=store_url)
        return
    variable = display.pick_variable(ds, variable, UserError)
    display.print_rows(ds, variable, top, fmt)


@cli.command()
@click.argument("store_url", metavar="STORE")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def status(store_url: str, fmt: str) -> None:
    """Show done/total replicates per grid point of the sweep store STORE.

    Exits 0 only when every cell is done and its data intact, 1 otherwise
    (damaged cells are named; `run` recomputes them).
    """
    from ..views import display
    from ..plan import growth as grow

    st = display.require_store(store_url, UserError, growing_ok=True)  # opened once: kept for what follows
    growing = grow.interrupted(st.attrs)
    if growing is not None:
        raise RunFailed(f"store {store_url} is incomplete: growing it to a larger spec was interrupted; "
                        f"rerun `boardsweep run SPEC --store {store_url} --extend` with that spec to finish")
    damage = st.check()
    if damage.labels:
        raise RunFailed(f"store {store_url} is damaged: {st.describe(damage)}; rerun `boardsweep run SPEC "
                        f"--store {store_url}` to write its labels again from its spec")
    if damage.arrays:
        raise RunFailed(f"store {store_url} is incomplete: {st.describe(damage)}; "
                        f"rerun `boardsweep run SPEC --store {store_url}` to complete it")
    ds = display.open_store(st, UserError, check=False, eager=False)
    text = st.describe(damage, limit=10**9) if damage else ""
    display.print_status(ds, fmt, damage, text)
    masks = (damage.done, damage.exact_done) if damage.done is not None else (ds["done"], ds["exact_done"])
    if "precision_state" in ds:  # complete: every point met its target or its cap
        from ..plan.precision import stored_complete

        axes = list(ds.attrs.get("grid_axes", []))
        done = masks[0] if damage.done is not None else ds["done"].transpose(*axes, "replicate").values
        masks = (np.array(stored_complete(ds, np.asarray(done, dtype=bool))), masks[1])
    if damage or not all(bool(m.all()) for m in masks):
        raise click.exceptions.Exit(1)


@cli.command()
@click.argument("store_url", metavar="STORE")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write the digest to this file (default: stdout).")
@click.option("--partial", is_flag=True, help="Record the digest of an unfinished store too, marked partial "
              "in the file (verify refuses it as a reference).")
def digest(store_url: str, out: str | None, partial: bool) -> None:
    """Print the digest of the finished sweep store STORE: per-variable SHA-256 (JSON)."""
    from ..run.execute import normalize_url
    from ..store import StoreMismatch, store_exists
    from ..store.identity import inspect, rootless_line
    from ..store.integrity import StoreDamaged
    from ..run.verify import write_digest

    try:
        url = normalize_url(store_url)
        if inspect(url) == "rootless":
            raise StoreDamaged(rootless_line(url))
        if not store_exists(url):
            raise UserError(f"no sweep store at {url}")
        text = write_digest(url, out, partial)
    except StoreMismatch as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"--out {out}: cannot write the digest there ({exc.strerror or exc})") from None
    if out is None:
        click.echo(text, nl=False)
    else:
        click.echo(f"digest of {url} written to {out}")


@cli.command()
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False))
@click.option("--against", required=True, metavar="STORE_OR_DIGEST",
              help="A sweep store (compared cell by cell) or a digest file from `boardsweep digest`.")
@click.option("--store", "rerun_store", default=None,
              help="Keep the re-run in this new store (default: a temporary directory, removed).")
@WORKERS
@click.option("--scheduler", default=None, metavar="ADDRESS", help="Use an existing Dask scheduler (default: Dask's scheduler-address config, e.g. DASK_SCHEDULER_ADDRESS; else a local cluster).")
@TLS_CA
@TLS_CERT
@TLS_KEY
def verify(
    spec_path: str,
    against: str,
    rerun_store: str | None,
    workers: int | None,
    scheduler: str | None,
    tls_ca_file: str | None,
    tls_cert: str | None,
    tls_key: str | None,
) -> None:
    """Re-run SPEC into a fresh store and compare it with --against.

    Integers (counts, events, rolls) must be equal bit for bit; floats (exact
    answers) within relative 1e-9, since solvers round differently per CPU.
    Exits 0 when they agree, 1 naming the first differing variable and cell.
    """
    from pathlib import Path

    from ..views import display
    from ..run.execute import SweepError
    from ..run.verify import verify as _verify

    scheduler = scheduler_address(scheduler)
    security = tls_options(scheduler, tls_ca_file, tls_cert, tls_key)
    spec = load_spec(spec_path)
    if not Path(against).exists() and "://" not in against:
        raise UserError(f"--against {against}: no such store or digest file")
    console = display.console()
    display.info(console, f"verify: re-running sweep [bold]{spec.name}[/bold] and comparing with {against}")
    bar = display.TaskBar(console)
    try:
        with bar:
            result = _verify(spec, against, rerun_store=rerun_store, workers=workers, scheduler=scheduler,
                             security=security, on_start=bar.start, on_progress=bar.update)
    except BoardsweepError:
        raise  # its own line and exit code, in main
    except ValueError as exc:
        raise UserError(str(exc)) from None
    except SweepError as exc:
        raise RunFailed(str(exc)) from None
    if not result.ok:
        for line in result.differences[1:]:
            click.echo(f"  also: {line}", err=True)
        raise RunFailed(f"verify failed: {result.message}")
    console.print(f"verify: OK, {result.message}")


@cli.command()
@click.argument("store_url", metavar="STORE")
@click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False), help=(
    "Report folder (default: beside the store, results/x.zarr -> results/x.report).  An earlier report "
    "there is replaced: only the files it recorded making are removed; a folder holding a page or table "
    "boardsweep did not write is refused."))
@click.option("--variable", default=None, help="Simulated variable (default: counts, else the first distribution).")
def report(store_url: str, out_dir: str | None, variable: str | None) -> None:
    """Write a report of STORE: the headline answers, the verdict, figures and tables (index.html, PNG, CSV)."""
    from ..views import display
    from ..views.report import build_report, default_out_dir

    ds = display.open_store(store_url, UserError)
    if variable is not None:
        variable = display.pick_variable(ds, variable, UserError)
    out = out_dir if out_dir is not None else str(default_out_dir(store_url))
    build_report(store_url, out, variable, loaded=ds)
    click.echo(f"report written to {os.path.join(out, 'index.html')}")


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning user errors into one line and exit code 2."""
    try:
        code = cli.main(args=argv, prog_name="boardsweep", standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)  # a command's click.exceptions.Exit(code), e.g. status on an incomplete store
    except (click.UsageError, ParameterError, SpecError) as exc:
        message = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
        click.echo(f"boardsweep: error: {message}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        _say_interrupted("boardsweep: aborted")
        sys.exit(130)
    except click.ClickException as exc:
        click.echo(f"boardsweep: error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except BoardsweepError as exc:  # the one place a user-facing error becomes a line and an exit code
        click.echo(f"boardsweep: error: {_one_line(exc)}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _say_interrupted("boardsweep: interrupted")
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - never a traceback for users; -v shows it
        if any(isinstance(e, KeyboardInterrupt) for e in causes(exc)):  # a Ctrl-C wrapped by what it interrupted
            _say_interrupted("boardsweep: interrupted")
            sys.exit(130)
        known = diagnose(exc)
        if known is not None:  # a cause in the environment, named: not a bug
            click.echo(f"boardsweep: error: {known[0]}", err=True)
            sys.exit(known[1])
        if _verbose():
            raise
        click.echo(f"boardsweep: error: unexpected {type(exc).__name__}: {_one_line(exc)} "
                   "(rerun with -v for the traceback)", err=True)
        sys.exit(1)


def _verbose() -> bool:
    """Whether ``-v`` was given (False where the display module itself cannot be loaded)."""
    try:
        from ..views import display

        return display.verbosity() > 0
    except Exception:  # noqa: BLE001 - the error being reported may be the reason
        return False


def _say_interrupted(line: str) -> None:
    """The interruption's one line (once: :mod:`boardsweep.pipeline.cli.entry` ends a
    process whose cleanup overruns its grace, and then prints none)."""
    from ..errors import INTERRUPTION_REPORTED

    INTERRUPTION_REPORTED.set()
    try:
        click.echo(line, err=True)
    except OSError:  # a closed stderr: the exit code says it
        pass


def diagnose(exc: BaseException) -> tuple[str, int] | None:
    """(one line, exit code) for an error whose cause lies outside boardsweep
    (the output stream, the working folder, storage credentials, the
    process's limits), else None: "unexpected" is kept for bugs."""
    chain = causes(exc)
    stream = _output_stream(exc)
    if stream is not None:
        return (f"cannot write to {stream}: {_one_line(exc)} (the output stream is full or closed, "
                "not the store: send the output elsewhere)"), 1
    if any(isinstance(e, FileNotFoundError) for e in chain) and _working_folder_gone():
        return ("the working folder was deleted while boardsweep ran in it: cd to an existing folder "
                "(or give absolute paths) and rerun"), 2
    if _storage_unreachable(exc):  # a storage that does not answer (digest, report, query with the server down)
        return (f"cannot reach the storage ({_one_line(chain[-1])}); check the endpoint (AWS_ENDPOINT_URL or "
                "fsspec's configuration) and that the server is up"), 1
    for e in chain:
        name = type(e).__name__
        code = _s3_error_code(e)
        if name in ("NoCredentialsError", "PartialCredentialsError") or code in _CREDENTIAL_CODES or (
                isinstance(e, PermissionError) and "://" in str(getattr(e, "filename", "") or "") + str(e)
                and code is None and ("Access Denied" in str(e) or "Forbidden" in str(e))):
            return (f"the storage refused the credentials ({name}: {' '.join(str(e).split())}); give valid "
                    "ones in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, ~/.aws/credentials or fsspec's "
                    "configuration (nothing was changed by this refusal)"), 2
        if isinstance(e, MemoryError) or (isinstance(e, RuntimeError) and "not enough memory" in str(e)) or (
                (isinstance(e, SystemError) or "returned NULL" in str(e)) and _address_space_limited()):
            return (f"out of memory ({_one_line(e)}): a smaller sweep, or more memory or `ulimit -v` "
                    "for this process; finished tasks are kept in the store"), 1
        if isinstance(e, RuntimeError) and "can't start new thread" in str(e):
            return ("cannot start a thread: this process's limits (ulimit -v, ulimit -u) are too low for "
                    "the run's workers; raise them or give fewer --workers"), 1
        if "cannot cache function" in str(e):
            return (f"numba cannot write its kernel cache ({_one_line(e)}): set NUMBA_CACHE_DIR to a "
                    "folder you can write"), 1
    return None


def _storage_unreachable(exc: BaseException) -> bool:
    """:func:`store.remote.unreachable`, False where the store modules cannot be
    loaded (numba unable to cache the kernels they import: named next)."""
    try:
        from ..store.remote import unreachable
    except Exception:  # noqa: BLE001 - the error being diagnosed may be the reason
        return False
    return unreachable(exc)


#: S3 error codes that say the credentials are missing, wrong or not allowed.
_CREDENTIAL_CODES = {"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken",
                     "ExpiredToken", "AuthorizationHeaderMalformed", "403"}


def _s3_error_code(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code")) or None
    return None


def _output_stream(exc: BaseException) -> str | None:
    """``stdout`` or ``stderr`` where ``exc`` is an OSError raised writing to
    that stream (a full ``/dev/full``, a closed pipe), else None."""
    if not isinstance(exc, OSError):
        return None
    streams = {"stdout": (sys.stdout, sys.__stdout__), "stderr": (sys.stderr, sys.__stderr__)}
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames, tb = [*frames[-1:], tb.tb_frame], tb.tb_next
    for frame in frames:  # the write that failed: the innermost frame, or the one calling it
        for value in frame.f_locals.values():
            for name, candidates in streams.items():
                for stream in candidates:
                    if stream is not None and (value is stream or value is getattr(stream, "buffer", None)
                                               or getattr(value, "file", None) is stream):
                        return name
    if exc.errno in (errno.ENOSPC, errno.EPIPE, errno.EIO) and getattr(exc, "filename", None) is None:
        for name in ("stdout", "stderr"):  # a write of nothing fails too on a full /dev/full or a closed pipe
            try:
                os.write(getattr(sys, f"__{name}__").fileno(), b"")
            except OSError as again:
                if again.errno == exc.errno:
                    return name
            except (AttributeError, ValueError):  # no such stream, or no file descriptor
                pass
    return None


def _address_space_limited() -> bool:
    """Whether ``ulimit -v`` limits this process: a SystemError, or a C function
    that "returned NULL", there has run out of address space (its MemoryError
    lost on the way)."""
    import resource

    return resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY


def _working_folder_gone() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def command_line() -> None:
    """The ``boardsweep`` command (and ``python -m boardsweep``): :func:`main`,
    then the process ends at once.

    When a command has said its last word, its store is written and closed and
    its cluster shut down; what is left is the interpreter tearing down numba,
    Dask and xarray module by module (0.7 s of CPU).  So stdout, stderr and the
    log handlers are flushed and the process exits with :func:`os._exit`, as
    some other command-line tools do.  An exception :func:`main` lets through
    (under ``-v``) ends the process the usual way, with its traceback; Python
    code calling :func:`main` keeps its interpreter."""
    try:
        main()
        code = 0
    except SystemExit as exc:
        if exc.code is not None and not isinstance(exc.code, int):
            raise  # sys.exit("message"): Python prints it
        code = exc.code or 0
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (`| head`), a closed stream
            pass
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":
    command_line()

