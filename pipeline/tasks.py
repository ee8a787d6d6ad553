"""What a Dask worker runs: simulate one task block or solve one grid point,
write the result into the store itself, and return only small metadata.

Large arrays never travel back to the client.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..core.games import Game
from .grow import kept_cells
from .plan import Task, replicate_seed
from .store import unplayed, write_exact, write_region

__all__ = ["simulate_block", "run_task", "run_exact", "time_replicate"]


def simulate_block(
    game: Game, root: int, task: Task, run_shape: dict, checkpoints: np.ndarray
) -> dict[str, np.ndarray]:
    """Simulate the replicates of ``task``; arrays are stacked on a leading axis."""
    runs = [
        game.simulate(task.params, replicate_seed(root, task.params, r), run_shape, checkpoints)
        for r in range(task.start, task.stop)
    ]
    return unplayed(game, task.params, {name: np.stack([run[name] for run in runs]) for name in game.variables})


def run_task(
    game: Game, root: int, task: Task, run_shape: dict, checkpoints: np.ndarray, url: str,
    token: str | None = None,
) -> dict[str, Any]:
    """Simulate ``task``, write its region and done flags; return timings.
    ``token`` (the spec's SHA-256) lets the worker keep the store open.  A
    task with a ``base`` writes its whole chunk: the stored replicates
    ``[base, start)`` read back unchanged, then its own."""
    t0 = time.perf_counter()
    arrays = simulate_block(game, root, task, run_shape, checkpoints)
    start = task.start
    if task.base is not None:
        kept = kept_cells(url, task.index, task.base, task.start, list(arrays))
        arrays = {name: np.concatenate([kept[name], values]) for name, values in arrays.items()}
        start = task.base
    t1 = time.perf_counter()
    write_region(url, task.index, start, task.stop, arrays, token)
    t2 = time.perf_counter()
    return {"key": task.key, "kernel_s": t1 - t0, "write_s": t2 - t1}


def run_exact(
    game: Game, index: tuple[int, ...], params: dict, run_shape: dict, checkpoints: np.ndarray, url: str,
    token: str | None = None,
) -> dict[str, Any]:
    """Compute the exact answer of one grid point (NaN where none) and write it."""
    t0 = time.perf_counter()
    if game.exact is None:
        arrays = {}
    else:
        arrays = game.exact(params, run_shape, checkpoints)
        arrays = unplayed(game, params, {k: v for k, v in arrays.items() if k in game.exact_variables})
    t1 = time.perf_counter()
    write_exact(url, index, arrays, token)
    return {"key": "exact-" + "-".join(map(str, index)), "kernel_s": t1 - t0, "write_s": time.perf_counter() - t1}


#: A first (compiling) run shorter than this is repeated warm when timing a replicate.
COLD_LIMIT_S = 60.0


def time_replicate(
    game: Game, root: int, points: list[dict], run_shape: dict, checkpoints: np.ndarray, budget: float
) -> float:
    """Seconds one replicate takes on this worker: the largest over ``points``.

    Each point's replicate 0 runs once (compiling the kernel on a fresh
    worker) and then once more warm, whose time counts; when the first run
    took longer than :data:`COLD_LIMIT_S` and twice ``budget`` (so that a
    task of one replicate is right anyway) it is not repeated.  Nothing is
    written.
    """
    worst = 0.0
    for params in points:
        seed = replicate_seed(root, params, 0)
        t0 = time.perf_counter()
        game.simulate(params, seed, run_shape, checkpoints)
        took = time.perf_counter() - t0
        if took < max(COLD_LIMIT_S, 2 * budget):
            t0 = time.perf_counter()
            game.simulate(params, seed, run_shape, checkpoints)
            took = time.perf_counter() - t0
        worst = max(worst, took)
    return worst
