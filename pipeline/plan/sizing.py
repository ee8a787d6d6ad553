"""The task layout decided once (:func:`decide`), and sizes checked before any work:
the store's bytes and the planner's memory.

A spec says what the user asked for (``[tasks] replicates_per_task``,
``points_per_task`` or ``seconds``, or nothing); a run decides from it, and
from the store it resumes, the layout its tasks and the store's chunks take:
:func:`decide` is that one decision, and its value a
:class:`~boardsweep.pipeline.plan.task_layout.TaskLayout`, which the run and
``run --dry-run`` both use, passed beside the unchanged spec.  Results never
depend on the layout, only the store's chunks do, so a resumed store keeps the
layout it records.  The sizes below decide it where the spec does not.

``store bytes = sum over variables of (cells x itemsize)``, uncompressed (an
upper bound: zarr compresses the chunks), with ``cells = grid points x
replicates x the variable's own dims`` for simulated variables and ``grid
points x own dims`` for exact ones.  ``plan memory = tasks x``
:data:`TASK_BYTES` ``+ grid points x (``:data:`POINT_BYTES` ``+ replicates x``
:data:`CELL_BYTES` ``+ replicate blocks x`` :data:`MEMBER_BYTES` ``)``: one
record per task (grid chunk x replicate block), and per grid point the done
mask, the planner's masks, and its index and row of replicates in each task
it is in (its parameters are made per task, never held per point).  ``tasks`` is the
layout's count where the spec fixes it; where the run chooses it (points
grouped automatically, ``[tasks] seconds``), the fewest it can choose, and
the run checks again once it has chosen (:func:`check_fits` with its layout).
A sweep is refused, before anything is written, when the store cannot fit in
the free space of its file system or the plan in half the available memory.

Tasks of a large grid hold many grid points by default.  A spec that gives
neither ``[tasks] points_per_task`` nor ``[tasks] seconds`` and has at least
:data:`AUTO_POINTS` grid points has them grouped by the run that creates its
store (:func:`groups_points`, :func:`auto_task_grid`): as many points per task
as make a task of :data:`AUTO_TASK_S` seconds, from one replicate timed on a
worker as ``[tasks] seconds`` times it, but at most a :data:`AUTO_MIN_TASKS`-th
of the grid (every worker of a cluster gets tasks) and :data:`AUTO_TASK_BYTES`
of results per task.

A smaller grid whose spec gives no ``[tasks]`` at all, no precision target,
run on workers whose number is known (the embedded cluster), has its
replicates grouped instead (:func:`groups_replicates`, :func:`auto_block`):
:math:`b` replicates per task, the largest divisor of :math:`R` that keeps
at least :data:`AUTO_TASKS_PER_WORKER` tasks per worker,
:math:`P R / b \\ge A W` (:math:`P` grid points, :math:`W` workers).  A task
costs the pipeline some 10 ms whatever the kernel takes: the quickstart's 96
tasks of one replicate cost 13% more CPU than 24 of four.  Results never depend on it (each replicate
draws its own stream); the store records the choice, the spec's identity does
not hold it.
"""

from __future__ import annotations

import math
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ...core.games import series_sources
from ..errors import TooLarge
from .tasks import task_count, task_shape
from ..spec import grid_chunks, Spec
from .task_layout import AUTOMATIC, CALIBRATED, GROUPED, RECORDED, Recorded, TaskLayout, given
from ..words import count

__all__ = ["TooLarge", "Estimate", "estimate", "check_fits", "human", "AUTO_POINTS", "AUTO_TASK_S",
           "groups_points", "auto_task_grid", "AUTO_TASKS_PER_WORKER", "groups_replicates", "auto_block", "decide"]

#: Client memory per planned task: the Task record (measured 1.0 KB; its cells share the
#: plan's grid), its key and its future.
TASK_BYTES = 2048
#: Planner memory per grid point (measured under 1 B at its peak: its tasks hold nothing per
#: point, was 21 B) and per replicate slot of a grid point (measured 2 B: the done mask, the
#: cells to do, their copy cut into chunks).
POINT_BYTES = 2
CELL_BYTES = 3
#: ... and per grid point of each task whose chunk is partly done: its index in the task's chunk
#: (int32) and its row of replicates (a whole chunk's are a range: nothing per point).
MEMBER_BYTES = 5
#: Metadata per array of the store (zarr.json, consolidated copy) and per task manifest.
META_BYTES = 4096
MANIFEST_BYTES = 512

#: Grid points from which a spec without ``[tasks] points_per_task`` or ``seconds``
#: has its points grouped into tasks.  A task of one point costs the pipeline some
#: 10 ms and 20 files and folders whatever the kernel takes: at 5,000 points about a
#: minute and 100,000 files, the size from which bookkeeping outweighs a fast game's
#: simulations; smaller grids keep one point per task (and store format 3).
AUTO_POINTS = 5000
#: The time an automatically sized task is made to take (seconds), where the two bounds below allow.
AUTO_TASK_S = 1.0
#: ... but the grid is cut into at least this many chunks of points ...
AUTO_MIN_TASKS = 100
#: ... and a task's results (uncompressed, one task's chunk of every simulated array) stay under this.
AUTO_TASK_BYTES = 64 * 10**6
#: Simulation tasks per worker that grouping replicates keeps at least (:func:`auto_block`).
AUTO_TASKS_PER_WORKER = 8


@dataclass(frozen=True)
class Estimate:
    store_bytes: int
    plan_bytes: int
    tasks: int
    points: int


def _n_points(spec: Spec) -> int:
    return int(np.prod([len(v) for v in spec.grid.values()], dtype=np.int64)) if spec.grid else 1


def _sizes(spec: Spec) -> dict[str, int]:
    """The length of each of the game's own dimensions (checkpoints and labels)."""
    game = spec.game
    params = game.resolve_params({**spec.fixed, **{a: v[0] for a, v in spec.grid.items()}})
    return {"checkpoint": len(spec.checkpoints), **{d: len(v) for d, v in game.coords_for(params).items()}}


def _replicate_bytes(spec: Spec, sizes: dict[str, int]) -> int:
    """Bytes of one replicate's simulated results at one grid point
    (uncompressed), its equal-batch series (store format 7) included."""
    own = sum(int(np.prod([sizes[d] for d in var.dims], dtype=np.int64)) * np.dtype(var.dtype).itemsize
              for var in spec.game.variables.values())
    series = {**sizes, "checkpoint": spec.series_batches}  # a series: the batches in place of the checkpoints
    return own + sum(int(np.prod([series[d] for d in spec.game.variables[name].dims], dtype=np.int64))
                     * np.dtype(spec.game.variables[name].dtype).itemsize
                     for name in (series_sources(spec.game) if spec.series_batches else ()))


def estimate(spec: Spec, layout: TaskLayout | None = None) -> Estimate:
    """The store's bytes and the planner's memory for ``spec`` laid out as
    ``layout`` (None: before the run decides it, the fewest tasks it may
    choose, :func:`_fewest_tasks`; see the module docstring)."""
    game, points = spec.game, _n_points(spec)
    sizes = _sizes(spec)
    cells = spec.slots * _replicate_bytes(spec, sizes)
    for var in game.exact_variables.values():
        cells += int(np.prod([sizes[d] for d in var.dims], dtype=np.int64)) * 8
    tasks = _fewest_tasks(spec) if layout is None else task_count(spec, layout)
    store_bytes = points * (cells + spec.slots) + tasks * MANIFEST_BYTES + META_BYTES * (
        len(game.variables) + len(game.exact_variables) + len(series_sources(game)) + 8)
    blocks = -(-spec.slots // (spec.block if layout is None else layout.block))
    plan_bytes = tasks * TASK_BYTES + points * (POINT_BYTES + CELL_BYTES * spec.slots + MEMBER_BYTES * blocks)
    return Estimate(int(store_bytes), int(plan_bytes), int(tasks), int(points))


def _fewest_tasks(spec: Spec) -> int:
    """The simulation tasks of the layout ``spec`` asks for (:func:`task_count`)
    where it is fixed; where a run chooses it from a timing, the fewest it may
    choose: one task with ``[tasks] seconds``, and for points grouped
    automatically the largest group :func:`auto_task_grid` allows (a replicate
    taking no time)."""
    if spec.task_seconds is not None:
        return 1
    if groups_points(spec):
        return task_count(spec, TaskLayout(spec.block, auto_task_grid(spec, 0.0)))
    return task_count(spec)


def human(n: float) -> str:
    """Bytes for people: ``3.3 TB``."""
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} PB"


def _free_bytes(folder: Path | None) -> int | None:
    """Free space of the local file system that will hold ``folder`` (None: object storage)."""
    if folder is None:
        return None
    while not folder.exists():  # the nearest folder above that is there (the store's is made later)
        folder = folder.parent
    return shutil.disk_usage(folder).free


def _available_memory() -> int:
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except ImportError:  # pragma: no cover - psutil comes with distributed
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


def check_fits(spec: Spec, folder: Path | None, existing: bool = False, layout: TaskLayout | None = None) -> Estimate:
    """Raise :class:`TooLarge` when ``spec`` (laid out as ``layout``, the
    run's; None: before it is decided) cannot fit in the store's ``folder``
    or in memory: store bytes <= free bytes, plan bytes <= available memory / 2.

    ``folder``: the store's local folder, as the store answers it
    (``boardsweep.pipeline.store.local_root`` of its URL), ``None`` for object
    storage (no free space to check).  ``existing``: the store is already
    there (its bytes are taken), so only the plan is checked against memory.
    """
    est = estimate(spec, layout)
    count = "precision.max_replicates" if spec.precision_stderr is not None else "run.replicates"
    keys = f"{count}, the [grid] axes or checkpoints.count"
    free = None if existing else _free_bytes(folder)
    if free is not None and est.store_bytes > free:
        raise TooLarge(
            f"{spec.source}: the store would need up to {human(est.store_bytes)} (uncompressed, "
            f"{est.points} grid points x {spec.slots} replicates) and {folder} has "
            f"{human(free)} free; lower {keys}"
        )
    memory = _available_memory() // 2
    if est.plan_bytes > memory:
        chosen = layout or given(spec)
        raise TooLarge(
            f"{spec.source}: planning {est.tasks} tasks would need about {human(est.plan_bytes)} of "
            f"memory and {human(memory)} may be used (half of what is available); raise "
            f"tasks.points_per_task (now {chosen.points_per_task}) or tasks.replicates_per_task "
            f"(now {chosen.block}), or lower {keys}"
        )
    return est


def groups_points(spec: Spec) -> bool:
    """Whether a run that creates the store of ``spec`` chooses its grid points
    per task itself: the spec gives neither ``[tasks] points_per_task`` nor
    ``seconds``, no store fixed them, and the grid has :data:`AUTO_POINTS` points or more."""
    return spec.auto_points and spec.task_seconds is None and _n_points(spec) >= AUTO_POINTS


def auto_task_grid(spec: Spec, replicate_s: float) -> tuple[int, ...]:
    """Grid points per task along each axis (a :class:`TaskLayout`'s ``grid_chunks``) for a
    spec whose points are grouped automatically, when one replicate takes
    ``replicate_s`` seconds: enough points for a task of :data:`AUTO_TASK_S`
    (``spec.block`` replicates each), at most a :data:`AUTO_MIN_TASKS`-th of
    the grid and :data:`AUTO_TASK_BYTES` of results, at least one."""
    points = _n_points(spec)
    wanted = math.ceil(AUTO_TASK_S / (max(replicate_s, 1e-9) * spec.block))
    fits = AUTO_TASK_BYTES // max(1, _replicate_bytes(spec, _sizes(spec)) * spec.block)
    return grid_chunks(spec.shape, max(1, min(wanted, points // AUTO_MIN_TASKS, fits)))


def groups_replicates(spec: Spec, workers: int | None) -> bool:
    """Whether a run that creates the store of ``spec`` on ``workers`` workers
    (None: not known before the run, a scheduler's or a batch system's) groups
    its replicates into tasks itself: the spec gives no ``[tasks]`` at all and
    no precision target, and its grid points are not grouped (:func:`groups_points`)."""
    return (workers is not None and spec.auto_block and spec.auto_points and spec.task_seconds is None
            and spec.precision_stderr is None and not groups_points(spec))


def auto_block(spec: Spec, workers: int) -> int:
    """Replicates per task of a spec whose replicates are grouped
    (:func:`groups_replicates`) on ``workers`` workers: the largest divisor
    :math:`b` of the replicates :math:`R` with :math:`P R / b \\ge A W`
    tasks (:math:`P` grid points, :math:`A` :data:`AUTO_TASKS_PER_WORKER`), at
    least 1; a divisor, so that every task holds as many replicates."""
    wanted, replicates = AUTO_TASKS_PER_WORKER * max(1, workers), spec.replicates
    points = _n_points(spec)
    return max(b for b in range(1, replicates + 1)
               if replicates % b == 0 and (b == 1 or points * (replicates // b) >= wanted))


def decide(spec: Spec, recorded: Recorded | None, time_replicate: Callable[[float], tuple[float, int]],
           workers: int | None = None) -> TaskLayout:
    """The task layout of a run of ``spec`` on ``workers`` workers (None: not
    known before the run): the store's where it resumes one (``recorded``),
    else the spec's, calibrated or chosen automatically from
    ``time_replicate(budget)`` -> (seconds one replicate takes, grid points
    timed), called at most once.

    ``[tasks] seconds`` :math:`T`: :math:`b = \\min(R, \\lfloor T/s \\rfloor)`
    replicates per task, then as many grid points as fit (:func:`tasks.task_shape`);
    a large grid that says nothing groups its points into tasks of about
    :data:`AUTO_TASK_S` (:func:`auto_task_grid`); a smaller one
    that says nothing groups its replicates (:func:`auto_block`)."""
    if recorded is not None:
        return _resumed(spec, recorded)
    if spec.task_seconds is not None:
        seconds, timed = time_replicate(spec.task_seconds)
        block, per_task = task_shape(spec.task_seconds, seconds, spec.replicates, len(spec.resolved_points()))
        layout = TaskLayout(max(1, min(block, spec.replicates)), grid_chunks(spec.shape, per_task), CALIBRATED)
        return _noted(layout, f"{block} replicates x {layout.points_per_task} grid points per task: one replicate "
                              f"takes {seconds:.3g} s on a worker (the slowest of {timed} grid points), tasks of "
                              f"about {spec.task_seconds:g} s asked")
    if groups_points(spec):
        seconds, timed = time_replicate(AUTO_TASK_S)
        layout = TaskLayout(spec.block, auto_task_grid(spec, seconds), AUTOMATIC)
        return _noted(layout, f"{count(layout.points_per_task, 'grid point')} x {count(spec.block, 'replicate')} "
                              f"per task, chosen automatically: one replicate takes {seconds:.3g} s on a worker "
                              f"(the slowest of {timed} grid points); [tasks] points_per_task sets it")
    if groups_replicates(spec, workers):
        block = auto_block(spec, workers)
        if block > 1:
            return TaskLayout(block, given(spec).grid_chunks, GROUPED,  # one short line: a first run's output
                              f"{block} replicates per task, chosen for {count(workers, 'worker')}")
    return given(spec)


def _resumed(spec: Spec, recorded: Recorded) -> TaskLayout:
    """The layout of a store being resumed: its grid chunks (a grown axis keeps
    them), and with ``[tasks] seconds`` or replicates grouped automatically
    its recorded replicates per task (a spec of the same identity that names
    them made the same block)."""
    chunks = tuple(int(g) for g in recorded.grid_chunks)
    if recorded.block is not None and (spec.task_seconds is not None or recorded.block != spec.block):
        block = max(1, min(int(recorded.block), spec.replicates))
        return TaskLayout(block, chunks, RECORDED,
                          f"{recorded.block} replicates and {int(np.prod(chunks, dtype=np.int64))} grid points per "
                          "task, as recorded in the store")
    layout = TaskLayout(spec.block, chunks, RECORDED)
    if groups_points(spec):
        return _noted(layout, f"{count(layout.points_per_task, 'grid point')} per task, as recorded in the store")
    return layout


def _noted(layout: TaskLayout, note: str) -> TaskLayout:
    return TaskLayout(layout.block, layout.grid_chunks, layout.how, note)
