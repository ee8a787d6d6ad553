"""The run's part in deciding its task layout: what a resumed store records,
and how long one replicate takes on a worker (:func:`plan.layout.decide`
makes the decision)."""

from __future__ import annotations

import uuid
from typing import Any, Callable, Mapping

from ..errors import SweepError, one_line, overdue
from ..cluster.settings import task_timeout
from ..plan.layout import Recorded
from ..spec.parse import Spec
from ..store import store_chunks
from .dispatch import contained_call
from .worker import time_replicate
from ..store import recorded_spec

__all__ = ["CALIBRATION_POINTS", "recorded_layout", "time_on_worker"]

#: Grid points whose replicate is timed to size the tasks of a ``[tasks] seconds`` spec.
CALIBRATION_POINTS = 3


def recorded_layout(spec: Spec, attrs: Mapping[str, Any]) -> Recorded:
    """The layout a store records (its attributes ``attrs``): its grid chunks
    (one point per task where it records none) and, where ``spec`` made it,
    its replicates per task."""
    chunks = store_chunks(attrs) or (1,) * len(spec.axes)
    same = recorded_spec(attrs) == spec.canonical_data
    block = int(attrs["replicates_per_task"]) if same and "replicates_per_task" in attrs else None
    return Recorded(tuple(chunks), block)


def picked_points(spec: Spec) -> list[dict]:
    """The grid points whose replicate is timed: the first, the middle and the last."""
    points = spec.resolved_points()  # read only: the worker gets copies
    return [points[i][1] for i in sorted({0, len(points) // 2, len(points) - 1})[:CALIBRATION_POINTS]]


def time_on_worker(spec: Spec, budget: float, client_once: Callable[[], Any]) -> tuple[float, int]:
    """(seconds one replicate takes on a worker, grid points timed): replicate
    0 of the first, middle and last grid points, timed warm, the slowest
    counting (:func:`worker.time_replicate`)."""
    picked = picked_points(spec)
    future = client_once().submit(
        contained_call, time_replicate, spec.game, spec.seed, picked, spec.run_shape,
        spec.checkpoints, budget, pure=False, key=f"calibrate-{uuid.uuid4().hex[:8]}")
    deadline = task_timeout()  # the calibration is a task like the others
    try:
        return float(future.result(timeout=deadline)), len(picked)
    except TimeoutError:
        raise overdue(f"timing one replicate at {len(picked)} grid points to size the tasks", deadline) from None
    except Exception as exc:  # noqa: BLE001 - the game's own error, in one line
        raise SweepError(f"timing one replicate to size the tasks failed: {one_line(exc)}") from None
