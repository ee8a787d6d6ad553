"""The task layout as a value: how many replicates and grid points one task holds.

A spec says what the user asked for; a run decides the layout once
(:func:`boardsweep.pipeline.plan.sizing.decide`) and passes this value beside
the unchanged :class:`~boardsweep.pipeline.spec.parse.Spec` to the planner,
the store and the workers.  :func:`given` is the layout a spec asks for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..spec import grid_chunks
from ..words import count

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = ["TaskLayout", "Recorded", "given", "GIVEN", "GROUPED", "AUTOMATIC", "CALIBRATED", "RECORDED"]

#: How a layout was chosen (:attr:`TaskLayout.how`); GROUPED: replicates grouped
#: automatically, known before anything is timed (:func:`sizing.auto_block`).
GIVEN, GROUPED, AUTOMATIC, CALIBRATED, RECORDED = "given", "grouped", "automatic", "calibrated", "recorded"


@dataclass(frozen=True)
class Recorded:
    """The layout a store being resumed records: its grid points per task along
    each axis (``grid_chunks``) and, where the store was made by this very
    spec, its replicates per task (``block``; None otherwise)."""

    grid_chunks: tuple[int, ...]
    block: int | None = None


@dataclass(frozen=True)
class TaskLayout:
    """Replicates per task (``block``) and grid points per task along each axis
    (``grid_chunks``; ``points_per_task`` is their product), with how they were
    chosen (``how``: given by the spec, automatic, calibrated on a worker or
    recorded in the store) and the line that says so (``note``; "" where the
    spec gave them)."""

    block: int
    grid_chunks: tuple[int, ...]
    how: str = GIVEN
    note: str = ""

    @property
    def points_per_task(self) -> int:
        """Grid points per task (at most): :math:`\\prod_a g_a` over the grid axes."""
        return int(np.prod(self.grid_chunks, dtype=np.int64))

    def words(self) -> str:
        """``2 replicates`` or ``2 replicates x 10 grid points``: one task, for people."""
        per_task = self.points_per_task
        return count(self.block, "replicate") + (f" x {count(per_task, 'grid point')}" if per_task > 1 else "")

    def blocks(self, slots: int) -> int:
        """Replicate blocks of a point: :math:`\\lceil S / b \\rceil` for ``slots`` :math:`S`."""
        return -(-slots // self.block)


def given(spec: Spec) -> TaskLayout:
    """The layout ``spec`` asks for, before a run decides anything: its
    ``[tasks] replicates_per_task`` and ``points_per_task`` (the last grid
    axis filled first, :func:`~boardsweep.pipeline.spec.grid.grid_chunks`)."""
    return TaskLayout(spec.block, grid_chunks(spec.shape, spec.points_per_task), GIVEN)
