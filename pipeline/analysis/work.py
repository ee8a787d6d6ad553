"""The figures of a run's work that the views print: what a run will do
(:func:`planned_work`, from the plan), what its store holds (:func:`store_counts`)
and how far its precision target is met (:func:`precision_counts`).  Computed
here, so that the views only word them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PlannedWork", "planned_work", "store_counts", "precision_columns", "precision_counts"]


@dataclass(frozen=True)
class PlannedWork:
    """A run's work as its first line states it.

    ``points``: grid points (prod of the axes' lengths); ``tasks``: simulation
    tasks (None where the run chooses the points per task); ``layout``: the
    tasks' layout in words; ``grouped_s``: the seconds a task of grouped points
    aims at (None unless grouped); ``exact_tasks`` (None: not known yet) and
    ``exact_solves``: the exact work."""

    points: int
    tasks: int | None
    layout: str
    grouped_s: float | None
    exact_tasks: int | None
    exact_solves: int


def planned_work(spec: Any, layout: Any = None) -> PlannedWork:
    """The work of a run of ``spec`` laid out as ``layout`` (the spec's own,
    :func:`~boardsweep.pipeline.plan.given`, where None): tasks =
    prod_a ceil(n_a / g_a) x ceil(S / b) (:func:`~boardsweep.pipeline.plan.task_count`)."""
    from ..plan import AUTO_TASK_S, exact_solves, exact_tasks, given, groups_points, task_count

    points = int(np.prod(spec.shape)) if spec.shape else 1
    layout = layout or given(spec)
    solves = exact_solves(spec)
    if spec.task_seconds is not None:
        return PlannedWork(points, None, "", None, None, solves)
    if groups_points(spec):  # a new store's points per task are chosen by the run (a resumed one's recorded)
        return PlannedWork(points, None, "", AUTO_TASK_S, None, solves)
    return PlannedWork(points, task_count(spec, layout), layout.words(), None, exact_tasks(spec, layout), solves)


def store_counts(ds: Any) -> tuple[int, int, int, int]:
    """(replicates done, replicates wanted, exact answers done, grid points) of
    the store ``ds``: done = sum over points p of #{r < used_p : done[p, r]},
    wanted = sum_p used_p (used_p the replicates a precision target has point
    p use, else every replicate)."""
    axes = list(ds.attrs.get("grid_axes", []))
    done = np.asarray(ds["done"].transpose(*axes, "replicate").values, dtype=bool)
    flat = done.reshape(-1, done.shape[-1])
    if "replicates_used" in ds:  # a precision target: the replicates each point uses
        used = np.asarray(ds["replicates_used"].transpose(*axes).values).reshape(-1)
    else:
        used = np.full(flat.shape[0], flat.shape[-1])
    wanted = np.arange(flat.shape[-1]) < used[:, None]
    exact_done = int(np.asarray(ds["exact_done"].values).sum()) if "exact_done" in ds else 0
    return int((flat & wanted).sum()), int(wanted.sum()), exact_done, int(flat.shape[0])


def precision_columns(ds: Any) -> list[dict[str, Any]] | None:
    """Per grid point (grid order): replicates used, standard error reached,
    target and state (``met``, ``capped``: max_replicates reached first,
    ``running``; :data:`boardsweep.pipeline.plan.STATES` of the stored
    ``precision_state``), or ``None`` for a store without a precision target."""
    if "precision_state" not in ds:
        return None
    from ..plan import STATES

    axes = list(ds.attrs.get("grid_axes", []))
    grid = lambda name: np.asarray(ds[name].transpose(*axes).values).ravel()  # noqa: E731
    target = ds.attrs.get("precision_stderr")
    return [{"replicates_used": int(n), "stderr_reached": None if np.isnan(se) else float(se),
             "stderr_target": target, "precision": STATES[int(s)]}
            for n, se, s in zip(grid("replicates_used"), grid("stderr_reached"), grid("precision_state"))]


def precision_counts(columns: list[dict[str, Any]]) -> tuple[dict[str, int], float | None]:
    """({met, capped, running: grid points in that state}, the largest standard
    error reached, None where none is) of :func:`precision_columns`."""
    states = {k: sum(c["precision"] == k for c in columns) for k in ("met", "capped", "running")}
    reached = [c["stderr_reached"] for c in columns if c["stderr_reached"] is not None]
    return states, (max(reached) if reached else None)
