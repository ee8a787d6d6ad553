"""The run's part in deciding its task layout: what a resumed store records,
and how long one replicate takes on a worker (:func:`plan.layout.decide`
makes the decision)."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..errors import SweepError, TaskOverdue, one_line, overdue
from ..cluster.settings import task_timeout
from ..plan.layout import Recorded
from ..plan.tasks import replicate_seed
from ..spec.parse import Spec
from ..store import store_chunks
from .dispatch import contained_call
from .failures import point
from .worker import at_point, failed_at, time_replicate
from ..store import recorded_spec

__all__ = ["CALIBRATION_POINTS", "ESTIMATE_POINTS", "HereTiming", "recorded_layout", "time_on_worker", "time_here",
           "estimate_indices", "REPEAT_BELOW_S"]

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


#: Grid points ``run --dry-run`` times for its estimate of the run's time: every point of a
#: smaller grid, else this many spread evenly over it (the first, middle and last among them).
ESTIMATE_POINTS = 16


#: A replicate timed shorter than this (seconds) is timed once more, warm: the first call at a grid point also
#: builds what the game keeps per rule variant, which a run builds once per point, not once per replicate.
REPEAT_BELOW_S = 0.5


@dataclass(frozen=True)
class HereTiming:
    """Replicates timed here at ``points`` grid points (:func:`time_here`):
    ``slowest``, the warm replicate of the first, middle and last (what the
    run's calibration, :func:`time_on_worker`, sizes tasks by); ``kernel_s``,
    the sweep's simulation time, summed over its tasks; ``mean``, a warm
    replicate's mean over the points."""

    slowest: float
    kernel_s: float
    mean: float
    points: int


def estimate_indices(n: int) -> list[int]:
    """The grid points (flat indices into ``n``) :func:`time_here` times:
    all of them up to :data:`ESTIMATE_POINTS`, else that many spread evenly,
    the first, middle and last of :func:`picked_points` among them."""
    if n <= ESTIMATE_POINTS:
        return list(range(n))
    return sorted({round(i * (n - 1) / (ESTIMATE_POINTS - 1)) for i in range(ESTIMATE_POINTS)} | {n // 2})


def _time_point(spec: Spec, params: dict) -> tuple[float, float]:
    """(CPU seconds the first replicate of ``params`` takes in this thread, and
    a warm one's): a call that compiled (or loaded compiled) kernels is made
    again; a replicate of :data:`REPEAT_BELOW_S` or more is not repeated (both
    the same).  This thread's CPU time, not the wall clock: what the kernel
    costs, as a worker's core spends it, whatever else the machine runs now."""
    from .warm import COMPILE_CLOCK

    times: list[float] = []
    for _ in range(3):
        c0, t0 = COMPILE_CLOCK.count(), time.thread_time()
        with at_point(params):  # a kernel's error names its grid point
            spec.game.simulate(params, replicate_seed(spec.seed, params, 0), spec.run_shape, spec.checkpoints)
        if COMPILE_CLOCK.count() == c0:  # no compilation: a replicate's own time
            times.append(time.thread_time() - t0)
        if times and times[0] >= REPEAT_BELOW_S or len(times) == 2:
            break
    first = times[0] if times else 0.0
    return first, times[-1] if times else first


def _timing(spec: Spec, seconds: dict[int, tuple[float, float]]) -> HereTiming:
    """:class:`HereTiming` from (first, warm) seconds at grid points (flat index -> seconds):
    a point's :math:`R` replicates take :math:`t_1 + (R - 1) t_w`, the timed points' sum
    scaled to the grid's :math:`n` points."""
    n, replicates = len(spec.resolved_points()), spec.replicates
    slowest = max(seconds[i][1] for i in sorted({0, n // 2, n - 1})[:CALIBRATION_POINTS])
    kernel = sum(first + (replicates - 1) * warm for first, warm in seconds.values()) * n / len(seconds)
    mean = sum(warm for _, warm in seconds.values()) / len(seconds)
    return HereTiming(slowest, kernel, mean, len(seconds))


def time_here(spec: Spec) -> HereTiming:
    """One replicate timed at each grid point of :func:`estimate_indices` in a
    thread of this process (``run --dry-run``; the run's workers are threads
    too), once each, its compile time left out, under the task deadline the
    run's tasks have (Dask's ``boardsweep.task-timeout``): past it,
    :class:`TaskOverdue` naming the point under way (the thread is left to
    the process's end: a kernel cannot be stopped); a kernel's error,
    :class:`SweepError` naming the game and the point.

    Every point, not three: a replicate's time varies with the point (Shut
    the Box's random policy on 6-sided dice takes some 300 times its optimal
    policy on 2-sided ones), so three points said little of the sweep's
    time.  The timing costs about the sweep's kernel time over its
    replicates per point (:func:`_time_point`)."""
    points, deadline = spec.resolved_points(), task_timeout()
    indices = estimate_indices(len(points))
    under_way: list[dict] = []
    outcome: dict[str, Any] = {}

    def timing() -> None:
        try:
            seconds = {}
            for i in indices:
                under_way.append(points[i][1])
                seconds[i] = _time_point(spec, points[i][1])
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
    return _timing(spec, outcome["seconds"])
