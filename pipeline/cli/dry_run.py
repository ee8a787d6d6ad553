"""``run --dry-run``: what a run would do, nothing created, nothing compiled."""

from __future__ import annotations

from typing import Any

import click

from ..errors import one_line
from ..words import count, json_text

__all__ = ["print_plan", "plan_record"]


def plan_record(spec, url: str, target) -> dict[str, Any]:
    """What the run of ``spec`` into ``url`` on ``target`` would do, as one
    record (``run --dry-run``, text or JSON): the store, the grid, the task
    layout (the run's own decision, :func:`plan.sizing.decide`), the store's
    uncompressed upper bound that the run checks against the free space, and
    the time (:func:`plan.cost.forecast`): from the game's cost model where it
    has one (nothing run or compiled), else from a replicate timed here at the
    first, middle and last points as the run's calibration times one
    (:func:`calibration.time_here`)."""
    from ..plan import (cost_model_for, costs_fitted_on, decide, estimate_size as estimate, exact_solves, exact_tasks,
                        forecast, priced_points, task_count)
    from ..run import CALIBRATION_POINTS, time_here
    from ..cluster import local_workers
    from ..store import check_location

    check_location(url)  # the run's own refusal of a location it cannot write, before anything is said
    points = spec.resolved_points()
    url, found, recorded = _store_state(spec, url)
    model = cost_model_for(spec.game_name)
    seconds = priced_points(spec, model) if model is not None else time_here(spec)
    n = len(points)
    slowest = max(seconds[i] for i in sorted({0, n // 2, n - 1}) if i in seconds)
    workers = local_workers(target)
    layout = decide(spec, recorded, lambda budget: (slowest, min(n, CALIBRATION_POINTS)), workers)
    solves = exact_solves(spec)
    timed = forecast(spec, layout, seconds, workers, "model" if model is not None else "timed", solves,
                          model.exact_s if model is not None else 0.0)
    return {
        "sweep": spec.name, "game": spec.game_name, "source": str(spec.source),
        "store": {"url": url, "state": found},
        "grid": {"points": n, "axes": {axis: len(values) for axis, values in spec.grid.items()}},
        "replicates": spec.replicates, "max_replicates": spec.max_replicates if spec.precision_stderr else None,
        "precision_stderr": spec.precision_stderr,
        "tasks": {"simulation": task_count(spec, layout), "exact": exact_tasks(spec, layout), "exact_solves": solves,
                  "replicates_per_task": layout.block, "points_per_task": layout.points_per_task,
                  "how": layout.how, "note": layout.note, "words": layout.words()},
        "store_bytes": estimate(spec, layout).store_bytes,
        "time": {"source": timed.source, "kernel_s": timed.kernel_s, "overhead_s": timed.overhead_s,
                 "startup_s": timed.startup_s, "wall_s": timed.wall_s, "workers": workers,
                 "replicate_mean_s": timed.mean, "points_priced": timed.points,
                 "model_fitted_on": costs_fitted_on() if model is not None else None,
                 "kernels_to_compile": _to_compile(spec) if model is not None else None},
        "runs_on": target.describe(),
        "planning": _planning(spec),
    }


def print_plan(spec, url: str, target, fmt: str = "table") -> None:
    """``run --dry-run``: what the run would do (:func:`plan_record`), as lines or, with ``fmt`` "json", JSON."""
    plan = plan_record(spec, url, target)
    if fmt == "json":
        click.echo(json_text(plan))
        return
    _print_text(spec, plan)


def _print_text(spec, plan: dict[str, Any]) -> None:
    """The plan (:func:`plan_record`) in lines for people."""
    from ..plan import AUTOMATIC, GROUPED, RECORDED, human_bytes as human
    from ..views import exact_words

    tasks = plan["tasks"]
    click.echo(f"dry run of sweep {spec.name} ({spec.game_name}) from {spec.source}; nothing is created")
    click.echo(f"  store:       {plan['store']['url']}: {plan['store']['state']}")
    axes = " x ".join(f"{axis} {n}" for axis, n in plan["grid"]["axes"].items()) or "no grid axes"
    click.echo(f"  grid:        {count(plan['grid']['points'], 'point')} ({axes})")
    how = {AUTOMATIC: " (chosen automatically)", GROUPED: " (grouped automatically)",
           RECORDED: " (as recorded in the store)" if tasks["note"] else ""}.get(tasks["how"], "")
    first = " (the first round)" if spec.precision_stderr is not None else ""
    click.echo(f"  replicates:  {spec.replicates} per point{first}"
               + (f", up to {spec.max_replicates} for a standard error of {spec.precision_stderr:g}"
                  if spec.precision_stderr is not None else ""))
    click.echo(f"  tasks:       {count(tasks['simulation'], 'simulation task')} of up to {tasks['words']}"
               f" + {exact_words(tasks['exact'], tasks['exact_solves'])}{how}")
    click.echo(f"  store size:  up to {human(plan['store_bytes'])} (uncompressed)")
    _print_time(spec, plan["time"], plan["runs_on"])
    for i, line in enumerate(plan["planning"]):
        click.echo(f"  {'planning:' if i == 0 else '':<13}{line}")


def _print_time(spec, timed: dict[str, Any], runs_on: str) -> None:
    """The time lines: the wall time :math:`S + M(W)` on :math:`W` workers
    (:func:`plan.cost.forecast`), the kernel's and the pipeline's shares, and
    where the estimate comes from."""
    workers = timed["workers"]
    named = f"{workers} worker{'s' if workers != 1 else ''}" if workers else ""
    shares = (f"{_duration(timed['kernel_s'])} of kernel summed over tasks, {_duration(timed['overhead_s'])} of "
              f"per-task overhead")
    if timed["wall_s"] is not None:
        click.echo(f"  time:        about {_duration(timed['wall_s'])} on {named} ({shares}, "
                   f"{_duration(timed['startup_s'])} of start-up); longer while other programs share the cores")
    else:
        click.echo(f"  time:        {shares}, plus start-up; the wall time depends on the cluster's workers")
    if timed["source"] == "model":
        compile_ = timed["kernels_to_compile"]
        more = (f"; plus compiling {count(compile_, 'unit')} of numba code first (not in numba's cache yet: "
                "some seconds each, not in the time above)" if compile_ else "")
        click.echo(f"  estimated:   from game {spec.game_name!r}'s cost model (benchmarks/fit_costs.py on "
                   f"{timed['model_fitted_on']}), nothing run{more}")
    else:
        click.echo(f"  estimated:   game {spec.game_name!r} has no cost model: one replicate timed here at "
                   f"{count(timed['points_priced'], 'grid point')} (its kernel compiled first), scaled to the grid")
    click.echo(f"  runs on:     {runs_on}" + (f" ({named})" if workers else ""))


def _to_compile(spec) -> int:
    """Units of the game's numba code a run at the first, middle and last
    points would compile (not in numba's disk cache: ``extras["compiled_code"]``); 0 where unknown."""
    code = spec.game.extras.get("compiled_code")
    if code is None:
        return 0
    points = spec.resolved_points()
    n, units = len(points), {}
    try:
        for i in sorted({0, n // 2, n - 1}):
            units.update(code(points[i][1], spec.run_shape))
    except Exception:  # noqa: BLE001 - a dry run says what it can, and goes on
        return 0
    return sum(1 for cached in units.values() if not cached)


def _planning(spec) -> list[str]:
    """``run --dry-run``'s planning lines (:func:`planning.dry_run_lines`): what
    the run will be able to see, where the game's exact CLT variance says it."""
    from ..analysis import dry_run_lines

    return dry_run_lines(spec)


def _store_state(spec, url: str):
    """(the store's URL, what a run would do with what is there, the layout
    it records where the run resumes it: :class:`plan.task_layout.Recorded`), for
    ``--dry-run``; reads only."""
    from ..run import recorded_layout
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
