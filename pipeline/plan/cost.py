"""The run's time, forecast without running anything: a cost model per game.

A replicate of a game's kernel at a grid point costs
:math:`t = t_0 + c(k) \\prod_u s_u + d(k')\\, C \\prod_v s_v` seconds (:math:`C`
checkpoints, each recorded per unit :math:`v`, e.g. per game, at :math:`d`
seconds, ``checkpoint_s``, or looked up at the checkpoint keys :math:`k'`,
``checkpoint_keys``, where the table has them: Monopoly's per tally, whose
histogram a checkpoint adds, and per number of games, whose lanes then
reach their checkpoints apart): :math:`t_0` its call's own cost
(``call_s``), :math:`s_u` the point's units of work (``units``: e.g.
Monopoly's games x players x turns), :math:`c(k)` the seconds per unit at the point's cost keys :math:`k` (``keys``: the rule
variant, e.g. the tally and deck policy), looked up in a table the script
``benchmarks/fit_costs.py`` measures on the real kernels and writes to
``costs.json`` beside this module (refit it when a kernel changes).  A key
value the table lacks is interpolated linearly between the tabulated
numbers on either side (outside them, the nearest's), else averaged over the
tabulated values.

The pipeline's own costs are kept apart from the kernel's: each task costs
``task_s`` and each grid point ``point_s`` on a worker, and the run costs
``startup_s`` once (the cluster, the kernels loaded from numba's cache, the
store's template) and ``exact_s`` per exact solve (the game's, where it has
one).  On :math:`W` workers the wall time is the start-up plus the time the
tasks, dealt in plan order to the worker free first, take to finish.

Nothing here runs a kernel or compiles one: a game without a model
(:func:`model_for` None) is timed by the run's own calibration instead
(``run.calibration.time_here``).
"""

from __future__ import annotations

import heapq
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:
    from ..spec import Spec
    from .task_layout import TaskLayout

__all__ = ["COSTS_PATH", "CostModel", "Overheads", "Forecast", "model_for", "overheads", "replicate_seconds",
           "forecast", "makespan", "fitted_on", "MAX_MODELLED_POINTS", "checkpoint_seconds"]

#: The shipped coefficients (written by ``benchmarks/fit_costs.py``).
COSTS_PATH = Path(__file__).with_name("costs.json")
#: Grid points whose replicate the model prices one by one; a larger grid is
#: priced at this many points spread evenly, scaled to the whole.
MAX_MODELLED_POINTS = 4096
#: Tasks the schedule is dealt out one by one up to; more are taken as evenly shared.
MAX_SCHEDULED_TASKS = 200_000


@dataclass(frozen=True)
class CostModel:
    """A game's kernel cost: seconds per unit of work :math:`c(k)` tabulated
    over the cost ``keys`` (``rows``: key values then seconds), ``units`` the
    parameters whose product is a replicate's work."""

    units: tuple[str, ...]
    keys: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    exact_s: float = 0.0
    call_s: float = 0.0
    checkpoint_s: float = 0.0
    checkpoint_units: tuple[str, ...] = ()
    checkpoint_keys: tuple[str, ...] = ()
    checkpoint_rows: tuple[tuple[Any, ...], ...] = ()


@dataclass(frozen=True)
class Overheads:
    """The pipeline's costs (seconds): per task and per grid point on a worker, once per run."""

    task_s: float
    point_s: float
    startup_s: float


@dataclass(frozen=True)
class Forecast:
    """A run's time before it runs: ``kernel_s``, the kernel's seconds summed
    over the tasks, simulations and exact solves (what the run reports as its kernel time); ``wall_s``, the
    run's wall time on ``workers`` (None: not known before the run), start-up
    included; ``slowest``, the slowest replicate of the first, middle and last
    points (what a ``[tasks] seconds`` layout is sized by); ``mean``, a
    replicate's mean; ``overhead_s``, the pipeline's share summed over tasks;
    ``source``, how it was made (``"model"`` or ``"timed"``)."""

    kernel_s: float
    wall_s: float | None
    slowest: float
    mean: float
    overhead_s: float
    startup_s: float
    workers: int | None
    source: str
    points: int


@lru_cache(maxsize=1)
def _table() -> dict:
    with open(COSTS_PATH, encoding="utf-8") as f:
        return json.load(f)


def fitted_on() -> str:
    """Where and when the shipped coefficients were measured (one line)."""
    fitted = _table().get("fitted", {})
    return f"{fitted.get('cpu', 'an unknown CPU')}, {fitted.get('date', 'no date')}"


def overheads() -> Overheads:
    """The pipeline's shipped costs (:class:`Overheads`)."""
    p = _table()["pipeline"]
    return Overheads(float(p["task_s"]), float(p["point_s"]), float(p["startup_s"]))


def model_for(game_name: str) -> CostModel | None:
    """The shipped cost model of ``game_name``; None for a game without one."""
    entry = _table()["games"].get(game_name)
    if entry is None:
        return None
    return CostModel(tuple(entry["units"]), tuple(entry["keys"]), tuple(tuple(r) for r in entry["rows"]),
                     float(entry.get("exact_s", 0.0)), float(entry.get("call_s", 0.0)),
                     float(entry.get("checkpoint_s", 0.0)), tuple(entry.get("checkpoint_units", ())),
                     tuple(entry.get("checkpoint_keys", ())), tuple(tuple(r) for r in entry.get("checkpoint_rows", ())))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _lookup(rows: Sequence[tuple], values: Sequence[Any]) -> float:
    """:math:`c(k)`: rows whose first column is ``values[0]``, recursively; a
    value not tabulated is interpolated linearly between the tabulated numbers
    on either side (outside them, the nearest's); a value per seat (``"a,b"``)
    the mean of its seats' values; else the tabulated values' mean."""
    if not values:
        return sum(r[-1] for r in rows) / len(rows)
    value, rest = values[0], values[1:]
    tabulated = sorted({r[0] for r in rows}, key=repr)
    if value in tabulated:
        return _lookup([r[1:] for r in rows if r[0] == value], rest)
    seats = value.split(",") if isinstance(value, str) else []
    if len(seats) > 1 and all(seat in tabulated for seat in seats):
        return sum(_lookup(rows, [seat, *rest]) for seat in seats) / len(seats)
    parts = {t: _lookup([r[1:] for r in rows if r[0] == t], rest) for t in tabulated}
    if _number(value) and len(tabulated) >= 2 and all(_number(t) for t in tabulated):
        if value <= min(tabulated) or value >= max(tabulated):
            return parts[min(tabulated, key=lambda t: abs(t - value))]
        a, b = max(t for t in tabulated if t < value), min(t for t in tabulated if t > value)
        return parts[a] + (parts[b] - parts[a]) * (value - a) / (b - a)
    return sum(parts.values()) / len(parts)


def replicate_seconds(model: CostModel, params: Mapping[str, Any], run_shape: Mapping[str, int],
                      checkpoints: int = 0) -> float:
    """:math:`t = t_0 + c(k) \\prod_u s_u + d\\, C \\prod_v s_v`: one replicate's
    kernel seconds at ``params`` with :math:`C` ``checkpoints`` (each costs
    :math:`d`, ``checkpoint_s``, per unit :math:`v` of ``checkpoint_units``)."""
    merged = {**run_shape, **params}
    work = math.prod(float(merged.get(u, 1)) for u in model.units)
    per_checkpoint = checkpoint_seconds(model, merged)
    return model.call_s + _lookup(model.rows, [merged.get(k) for k in model.keys]) * work + per_checkpoint * checkpoints


def checkpoint_seconds(model: CostModel, merged: Mapping[str, Any]) -> float:
    """:math:`d(k') \\prod_v s_v`: one checkpoint's seconds in a replicate at
    ``merged`` (its parameters and run shape), :math:`d` looked up in
    ``checkpoint_rows`` at the ``checkpoint_keys`` where the model has them
    (as :math:`c(k)` is), else ``checkpoint_s``."""
    per = model.checkpoint_s
    if model.checkpoint_keys and model.checkpoint_rows:
        per = _lookup(model.checkpoint_rows, [merged.get(k) for k in model.checkpoint_keys])
    return per * math.prod(float(merged.get(u, 1)) for u in model.checkpoint_units)


def makespan(durations: Sequence[float], workers: int) -> float:
    """Seconds until ``durations`` (tasks in plan order, each to the worker free
    first) are done on ``workers``: with more than :data:`MAX_SCHEDULED_TASKS`,
    :math:`\\max(\\sum d / W, \\max d)`."""
    if not durations:
        return 0.0
    if len(durations) > MAX_SCHEDULED_TASKS or workers <= 1:
        return max(sum(durations) / max(workers, 1), max(durations))
    free = [0.0] * workers
    for d in durations:
        heapq.heappush(free, heapq.heappop(free) + d)
    return max(free)


def sampled_indices(n: int, most: int = MAX_MODELLED_POINTS) -> list[int]:
    """The grid points (flat indices into ``n``) priced one by one: all of them
    up to ``most``, else that many spread evenly, the first, middle and last among them."""
    if n <= most:
        return list(range(n))
    return sorted({round(i * (n - 1) / (most - 1)) for i in range(most)} | {n // 2})


def priced_points(spec: Spec, model: CostModel) -> dict[int, float]:
    """One replicate's kernel seconds at each grid point of :func:`sampled_indices`
    (flat index -> seconds), from ``model``; nothing is run."""
    points, shape, checkpoints = spec.resolved_points(), spec.run_shape, len(spec.checkpoints)
    return {i: replicate_seconds(model, points[i][1], shape, checkpoints) for i in sampled_indices(len(points))}


def _durations(spec: Spec, layout: TaskLayout, seconds: Mapping[int, float], costs: Overheads,
               n: int) -> tuple[list[float], int]:
    """(the first-round tasks' seconds, how many tasks each stands for): each
    task in plan order, its replicates' kernel time plus ``task_s`` and
    ``point_s`` per point; tasks of several points, or a grid priced at a
    sample, as one mean task standing for them all."""
    reps, block = spec.replicates, layout.block
    blocks = -(-reps // block)
    per_task = layout.points_per_task
    if per_task == 1 and len(seconds) == n and n * blocks <= MAX_SCHEDULED_TASKS:
        return [min(block, reps - j * block) * seconds[i] + costs.task_s + costs.point_s
                for j in range(blocks) for i in range(n)], 1
    tasks = -(-n // per_task) * blocks if per_task > 1 else n * blocks
    kernel = reps * sum(seconds.values()) * n / len(seconds)
    mean = (kernel + tasks * costs.task_s + n * blocks * costs.point_s) / tasks
    return [mean], tasks


def forecast(spec: Spec, layout: TaskLayout, seconds: Mapping[int, float], workers: int | None, source: str,
             exact_solves: int = 0, exact_s: float = 0.0, costs: Overheads | None = None) -> Forecast:
    """The run's time (:class:`Forecast`) from one replicate's ``seconds`` at
    grid points (flat index -> seconds; the first, middle and last among them)
    of ``spec`` laid out as ``layout``: kernel :math:`K = R \\sum_p t_p + E e` (scaled from the
    priced points to all :math:`n`), wall :math:`S + M(W) + E e / W` (start-up,
    the tasks' makespan, :math:`E` exact solves of :math:`e` seconds each)."""
    costs = costs or overheads()
    n = len(spec.resolved_points())
    picked = [i for i in sorted({0, n // 2, n - 1}) if i in seconds]
    kernel = spec.replicates * sum(seconds.values()) * n / len(seconds)
    durations, each = _durations(spec, layout, seconds, costs, n)
    overhead = sum(durations) * each - kernel
    wall = None
    if workers:
        tasks = durations[0] * math.ceil(each / workers) if each > 1 else makespan(durations, workers)
        wall = costs.startup_s + tasks + exact_solves * exact_s / workers
    return Forecast(kernel + exact_solves * exact_s, wall, max(seconds[i] for i in picked) if picked else max(seconds.values()),
                    sum(seconds.values()) / len(seconds), overhead, costs.startup_s, workers, source, len(seconds))
