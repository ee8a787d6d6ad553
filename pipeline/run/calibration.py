"""The run's part in deciding its task layout: what a resumed store records,
and how long one replicate takes on a worker (:func:`plan.sizing.decide`
makes the decision)."""

from __future__ import annotations

import threading
import uuid
from typing import Any, Callable, Mapping

from ..errors import SweepError, TaskOverdue, one_line, overdue
from ..cluster import task_timeout
from ..plan import Recorded
from ..spec import Spec
from ..store import store_chunks
from .dispatch import contained_call
from .failures import point
from .worker import failed_at, time_replicate
from ..store import recorded_spec

__all__ = ["CALIBRATION_POINTS", "recorded_layout", "time_on_worker", "time_here"]

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
        raise SweepError(f"timing one replicate to size the tasks failed: {_kernel_error(spec, exc)}") from None


def _kernel_error(spec: Spec, exc: BaseException) -> str:
    """A kernel's error in one line, with the game and the grid point it was raised at where known."""
    params = failed_at(exc)
    at = f" at {point(spec, params)}" if params is not None and all(a in params for a in spec.axes) else ""
    return f"game {spec.game_name!r}{at}: {one_line(exc)}"


def time_here(spec: Spec) -> dict[int, float]:
    """Seconds one replicate takes at the first, middle and last grid points
    (flat index -> seconds), timed in a thread of this process as the run's
    calibration times it on a worker (:func:`worker.time_replicate`: the
    kernel compiled or loaded first, then a warm replicate): ``run
    --dry-run``'s fallback for a game without a cost model
    (:func:`plan.cost.model_for`).  Under the task deadline the run's tasks
    have (Dask's ``boardsweep.task-timeout``): past it, :class:`TaskOverdue`
    naming the point under way (the thread is left to the process's end: a
    kernel cannot be stopped); a kernel's error, :class:`SweepError` naming
    the game and the point."""
    points, deadline = spec.resolved_points(), task_timeout()
    n = len(points)
    indices = sorted({0, n // 2, n - 1})[:CALIBRATION_POINTS]
    under_way: list[dict] = []
    outcome: dict[str, Any] = {}

    def timing() -> None:
        try:
            seconds = {}
            for i in indices:
                under_way.append(points[i][1])
                seconds[i] = time_replicate(spec.game, spec.seed, [points[i][1]], spec.run_shape, spec.checkpoints,
                                            0.0)
            outcome["seconds"] = seconds
        except BaseException as exc:  # noqa: BLE001 - reported by the caller's thread, in one line
            outcome["error"] = exc

    thread = threading.Thread(target=timing, name="boardsweep-dry-run-timing", daemon=True)
    thread.start()
    thread.join(deadline)
    if thread.is_alive():
        at = point(spec, under_way[-1]) if under_way else "its first grid point"
        raise TaskOverdue(
            f"the dry run's replicate of game {spec.game_name!r} at {at} ran past the task deadline of "
            f"{deadline:g} s and was abandoned (nothing was created; the run would end there too): fix the "
            "game's kernel (a loop that never ends?) or raise the deadline (Dask's boardsweep.task-timeout, "
            "e.g. DASK_BOARDSWEEP__TASK_TIMEOUT=2h)")
    if "error" in outcome:
        raise SweepError(f"the dry run's replicate failed: {_kernel_error(spec, outcome['error'])}; "
                         "the run would fail there too: fix the game's kernel") from None
    return outcome["seconds"]
