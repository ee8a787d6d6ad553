"""The task layout: how many replicates and grid points one task holds, decided once.

A spec says what the user asked for (``[tasks] replicates_per_task``,
``points_per_task`` or ``seconds``, or nothing); a run decides from it, and
from the store it resumes, the layout its tasks and the store's chunks take:
:func:`decide` is that one decision, and its value a
:class:`~boardsweep.pipeline.plan.task_layout.TaskLayout`, which the run and
``run --dry-run`` both use, passed beside the unchanged spec.  Results never depend on the layout,
only the store's chunks do, so a resumed store keeps the layout it records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from . import sizing
from .task_layout import AUTOMATIC, CALIBRATED, GROUPED, RECORDED, Recorded, TaskLayout, given
from .tasks import task_shape
from ..spec import grid_chunks
from ..words import count

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = ["decide"]


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
    :data:`sizing.AUTO_TASK_S` (:func:`sizing.auto_task_grid`); a smaller one
    that says nothing groups its replicates (:func:`sizing.auto_block`)."""
    if recorded is not None:
        return _resumed(spec, recorded)
    if spec.task_seconds is not None:
        seconds, timed = time_replicate(spec.task_seconds)
        block, per_task = task_shape(spec.task_seconds, seconds, spec.replicates, len(spec.resolved_points()))
        layout = TaskLayout(max(1, min(block, spec.replicates)), grid_chunks(spec.shape, per_task), CALIBRATED)
        return _noted(layout, f"{block} replicates x {layout.points_per_task} grid points per task: one replicate "
                              f"takes {seconds:.3g} s on a worker (the slowest of {timed} grid points), tasks of "
                              f"about {spec.task_seconds:g} s asked")
    if sizing.groups_points(spec):
        seconds, timed = time_replicate(sizing.AUTO_TASK_S)
        layout = TaskLayout(spec.block, sizing.auto_task_grid(spec, seconds), AUTOMATIC)
        return _noted(layout, f"{count(layout.points_per_task, 'grid point')} x {count(spec.block, 'replicate')} "
                              f"per task, chosen automatically: one replicate takes {seconds:.3g} s on a worker "
                              f"(the slowest of {timed} grid points); [tasks] points_per_task sets it")
    if sizing.groups_replicates(spec, workers):
        block = sizing.auto_block(spec, workers)
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
    if sizing.groups_points(spec):
        return _noted(layout, f"{count(layout.points_per_task, 'grid point')} per task, as recorded in the store")
    return layout


def _noted(layout: TaskLayout, note: str) -> TaskLayout:
    return TaskLayout(layout.block, layout.grid_chunks, layout.how, note)
