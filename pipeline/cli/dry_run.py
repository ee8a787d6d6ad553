"""``run --dry-run``: what a run would do, nothing created."""

from __future__ import annotations

import os

import click

from ..errors import one_line
from ..words import count

__all__ = ["print_plan"]


def print_plan(spec, url: str, target) -> None:
    """``run --dry-run``: what the run would do, nothing created.

    The time is estimated from replicates of every grid point (up to
    :data:`calibration.ESTIMATE_POINTS`, spread evenly), simulated here as a
    worker thread runs them (their CPU time, compile time apart; nothing is
    written): :func:`calibration.time_here`.  The task layout is the run's own
    decision (:func:`plan.layout.decide`), from the slowest of the first,
    middle and last points, as the run's calibration times them.  The store's size is the
    uncompressed upper bound that the run checks against the free space."""
    from ..plan import layout as task_layout
    from ..plan.sizing import estimate, human
    from ..plan.exact_work import exact_solves, exact_tasks
    from ..plan.tasks import task_count
    from ..views.progress import exact_words
    from ..run.calibration import CALIBRATION_POINTS, time_here
    from ..cluster.targets import local_workers
    from ..store.owner import check_location

    check_location(url)  # the run's own refusal of a location it cannot write, before anything is said
    points = spec.resolved_points()
    click.echo(f"dry run of sweep {spec.name} ({spec.game_name}) from {spec.source}; nothing is created")
    url, found, recorded = _store_state(spec, url)
    click.echo(f"  store:       {url}: {found}")
    axes = " x ".join(f"{axis} {len(values)}" for axis, values in spec.grid.items()) or "no grid axes"
    click.echo(f"  grid:        {count(len(points), 'point')} ({axes})")
    timed = time_here(spec)
    layout = task_layout.decide(spec, recorded, lambda budget: (timed.slowest, min(timed.points, CALIBRATION_POINTS)),
                                local_workers(target))
    laid = layout.apply(spec)
    how = {task_layout.AUTOMATIC: " (chosen automatically)", task_layout.GROUPED: " (grouped automatically)",
           task_layout.RECORDED: " (as recorded in the store)" if layout.note else ""}.get(layout.how, "")
    first = " (the first round)" if spec.precision_stderr is not None else ""
    click.echo(f"  replicates:  {spec.replicates} per point{first}"
               + (f", up to {spec.max_replicates} for a standard error of {spec.precision_stderr:g}"
                  if spec.precision_stderr is not None else ""))
    click.echo(f"  tasks:       {count(task_count(laid), 'simulation task')} of up to {layout.words()}"
               f" + {exact_words(exact_tasks(laid), exact_solves(laid))}{how}")
    click.echo(f"  store size:  up to {human(estimate(laid).store_bytes)} (uncompressed)")
    _print_time(timed, target)
    _print_planning(laid)


def _print_time(timed, target) -> None:
    """The time and where the run goes: ``timed`` (:class:`calibration.HereTiming`).

    The simulation's time is ``timed.kernel_s`` (:func:`calibration.time_here`);
    on :math:`W` workers the run takes about that over :math:`W`."""
    kernel = timed.kernel_s
    workers = target.workers or (os.cpu_count() or 1) if not (target.scheduler or target.batch) else None
    named = f"{workers} worker{'s' if workers != 1 else ''}" if workers else ""
    wall = f", about {_duration(kernel / workers)} on {named}" if workers else ""
    click.echo(f"  time:        one replicate takes {_duration(timed.mean)} of CPU on average (timed at "
               f"{count(timed.points, 'grid point')}): {_duration(kernel)} of simulation in all{wall}, plus start-up "
               "(longer while other programs share the cores)")
    click.echo(f"  runs on:     {target.describe()}" + (f" ({named})" if workers else ""))


def _print_planning(spec) -> None:
    """``run --dry-run``'s planning lines (:func:`planning.dry_run_lines`): what
    the run will be able to see, where the game's exact CLT variance says it."""
    from ..analysis.power import dry_run_lines

    for i, line in enumerate(dry_run_lines(spec)):
        click.echo(f"  {'planning:' if i == 0 else '':<13}{line}")


def _store_state(spec, url: str):
    """(the store's URL, what a run would do with what is there, the layout
    it records where the run resumes it: :class:`plan.layout.Recorded`), for
    ``--dry-run``; reads only."""
    from ..run.calibration import recorded_layout
    from ..store import inspect, normalize_url, read_attrs, recorded_spec

    try:
        url = normalize_url(url)
        found = inspect(url)
        if found in ("absent", "empty"):
            return url, "new", None
        if found == "creating":
            return url, "a store whose creation a run began: the run clears it and creates it afresh", None
        if found != "boardsweep":
            return url, f"holds a {found}, which a run refuses", None
        attrs = read_attrs(url, check=False)
        if recorded_spec(attrs) == spec.canonical_data:
            return (url, "exists, made by this spec: the run resumes it (see `boardsweep status`)",
                    recorded_layout(spec, attrs))
        return url, ("exists, made by another spec: the run refuses it (--extend grows it to a larger spec, "
                     "--overwrite replaces it)"), None
    except Exception as exc:  # noqa: BLE001 - a dry run says what it cannot see, and goes on
        return url, f"cannot be read ({one_line(exc, named=False)})", None


def _duration(seconds: float) -> str:
    """A time for people: ``0.098 s``, ``12 s``, ``4.2 min``, ``3.1 h``."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"
