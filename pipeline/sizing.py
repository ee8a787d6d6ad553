"""Sizes checked before any work: the store's bytes and the planner's memory.

``store bytes = sum over variables of (cells x itemsize)``, uncompressed (an
upper bound: zarr compresses the chunks), with ``cells = grid points x
replicates x the variable's own dims`` for simulated variables and ``grid
points x own dims`` for exact ones.  The planner holds one task record per
(grid chunk, replicate block) and the done mask, one byte per replicate.
A sweep is refused, before anything is written, when the store cannot fit in
the free space of its file system or the plan in half the available memory.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError
from .plan import task_count
from .spec import Spec

__all__ = ["TooLarge", "Estimate", "estimate", "check_fits", "human"]

#: Client memory per planned task: the Task record, its key and its future (measured ~1.5 KB).
TASK_BYTES = 2048
#: Metadata per array of the store (zarr.json, consolidated copy) and per task manifest.
META_BYTES = 4096
MANIFEST_BYTES = 512


class TooLarge(InputError):
    """The sweep cannot fit; the message names the size, the room and the keys to change."""


@dataclass(frozen=True)
class Estimate:
    store_bytes: int
    plan_bytes: int
    tasks: int
    points: int


def _n_points(spec: Spec) -> int:
    return int(np.prod([len(v) for v in spec.grid.values()], dtype=np.int64)) if spec.grid else 1


def estimate(spec: Spec) -> Estimate:
    """The store's bytes and the planner's memory for ``spec`` (see the module docstring)."""
    game, points = spec.game, _n_points(spec)
    params = game.resolve_params({**spec.fixed, **{a: v[0] for a, v in spec.grid.items()}})
    sizes = {"checkpoint": len(spec.checkpoints), **{d: len(v) for d, v in game.coords_for(params).items()}}
    cells = 0
    for var in game.variables.values():
        cells += spec.slots * int(np.prod([sizes[d] for d in var.dims], dtype=np.int64)) * np.dtype(var.dtype).itemsize
    for var in game.exact_variables.values():
        cells += int(np.prod([sizes[d] for d in var.dims], dtype=np.int64)) * 8
    tasks = task_count(spec)
    store_bytes = points * (cells + spec.slots) + tasks * MANIFEST_BYTES + META_BYTES * (
        len(game.variables) + len(game.exact_variables) + 8)
    plan_bytes = tasks * TASK_BYTES + points * spec.slots
    return Estimate(int(store_bytes), int(plan_bytes), int(tasks), int(points))


def human(n: float) -> str:
    """Bytes for people: ``3.3 TB``."""
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} PB"


def _free_bytes(url: str) -> int | None:
    """Free space of the local file system that will hold ``url`` (None if remote)."""
    if "://" in url and not url.startswith("file://"):
        return None
    path = Path(url.removeprefix("file://"))
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free


def _available_memory() -> int:
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except ImportError:  # pragma: no cover - psutil comes with distributed
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


def check_fits(spec: Spec, url: str, existing: bool = False) -> Estimate:
    """Raise :class:`TooLarge` when ``spec`` cannot fit at ``url`` or in memory.

    ``existing``: the store is already there (its bytes are taken), so only
    the plan is checked against memory.
    """
    est = estimate(spec)
    count = "precision.max_replicates" if spec.precision_stderr is not None else "run.replicates"
    keys = f"{count}, the [grid] axes or checkpoints.count"
    free = None if existing else _free_bytes(url)
    if free is not None and est.store_bytes > free:
        raise TooLarge(
            f"{spec.source}: the store would need up to {human(est.store_bytes)} (uncompressed, "
            f"{est.points} grid points x {spec.slots} replicates) and {url} has "
            f"{human(free)} free; lower {keys}"
        )
    memory = _available_memory() // 2
    if est.plan_bytes > memory:
        raise TooLarge(
            f"{spec.source}: planning {est.tasks} tasks would need about {human(est.plan_bytes)} of "
            f"memory and {human(memory)} may be used (half of what is available); raise "
            f"tasks.replicates_per_task (now {spec.block}) or lower {keys}"
        )
    return est
