"""What a Dask worker runs: simulate one task block or solve one grid point,
write the result into the store itself, and return only small metadata.

Large arrays never travel back to the client.  Each record separates the
time spent compiling numba kernels (or loading them from numba's disk
cache, or waiting for another thread's compilation:
:class:`boardsweep.pipeline.warm.CompileClock`) from the kernel time proper.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..core.games import Game
from .errors import Fault
from .grow import kept_cells
from .plan import Task, replicate_seed
from .store import unplayed, write_exact, write_region
from .warm import COMPILE_CLOCK

__all__ = ["OutputInvalid", "checked_outputs", "simulate_block", "run_task", "simulate_task", "store_task", "run_exact",
           "time_replicate"]


class OutputInvalid(Fault):
    """A game returned an output that does not match its declaration."""


def checked_outputs(game: Game, params: dict, outputs: dict, checkpoints: np.ndarray,
                    exact: bool = False) -> dict[str, np.ndarray]:
    """``outputs`` of one run (``exact``: of the exact solver) as the
    declared arrays, or :class:`OutputInvalid` naming the first that differs.

    Each declared variable must be present (exact answers may be left out:
    NaN), shaped ``(len(checkpoints) or the label count per dim)``, and of
    its declared kind: an integer output integer-typed with every value in the
    declared type's range (no NaN, no float counts), a float output real."""
    declared = game.exact_variables if exact else game.variables
    labels = game.coords_for(params)
    where = f"game {game.name!r} ({'exact' if exact else 'simulate'}) at {params}"
    out = {}
    for name, var in declared.items():
        if name not in outputs:
            if exact:
                continue
            raise OutputInvalid(f"{where}: output {name!r} missing; nothing stored")
        values = np.asarray(outputs[name])
        shape = tuple(len(checkpoints) if d == "checkpoint" else len(labels[d]) for d in var.dims)
        if values.shape != shape:
            raise OutputInvalid(f"{where}: output {name!r} has shape {values.shape}, {shape} declared "
                                f"(dims {var.dims}); nothing stored")
        out[name] = _as_declared(where, name, values, np.dtype(var.dtype))
    return out


def _as_declared(where: str, name: str, values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    kind = values.dtype.kind
    if dtype.kind in "iu":
        if kind not in "iub":
            raise OutputInvalid(f"{where}: output {name!r} is {values.dtype}, {dtype} declared (integer counts "
                                "only: no NaN, no fractions); nothing stored")
        info = np.iinfo(dtype)
        if values.size and (int(values.min()) < info.min or int(values.max()) > info.max):
            raise OutputInvalid(f"{where}: output {name!r} has values outside {dtype}; nothing stored")
    elif kind not in "iufb":
        raise OutputInvalid(f"{where}: output {name!r} is {values.dtype}, {dtype} declared; nothing stored")
    return values.astype(dtype, copy=False)

def simulate_block(
    game: Game, root: int, task: Task, run_shape: dict, checkpoints: np.ndarray
) -> dict[str, np.ndarray]:
    """Simulate the replicates of ``task``; arrays are stacked on a leading axis."""
    runs = [
        checked_outputs(game, task.params,
                        game.simulate(task.params, replicate_seed(root, task.params, r), run_shape, checkpoints),
                        checkpoints)
        for r in range(task.start, task.stop)
    ]
    return unplayed(game, task.params, {name: np.stack([run[name] for run in runs]) for name in game.variables})


def run_task(
    game: Game, root: int, task: Task, run_shape: dict, checkpoints: np.ndarray, url: str,
    token: str | None = None,
) -> dict[str, Any]:
    """Simulate ``task``, write its region and done flags; return timings.
    ``token`` (the spec's SHA-256) lets the worker keep the store open."""
    arrays, record = simulate_task(game, root, task, run_shape, checkpoints)
    return store_task(url, task, arrays, record, token)


def simulate_task(
    game: Game, root: int, task: Task, run_shape: dict, checkpoints: np.ndarray
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(arrays, timings) of ``task`` simulated in this thread, nothing written."""
    t0, c0 = time.perf_counter(), COMPILE_CLOCK.seconds()
    arrays = simulate_block(game, root, task, run_shape, checkpoints)
    compile_s = COMPILE_CLOCK.seconds() - c0
    return arrays, {"key": task.key, "kernel_s": time.perf_counter() - t0 - compile_s, "compile_s": compile_s}


def store_task(url: str, task: Task, arrays: dict[str, np.ndarray], record: dict[str, Any],
               token: str | None = None) -> dict[str, Any]:
    """Write ``task``'s simulated ``arrays``, then its done flags; ``record``
    with the write time.  A task with a ``base`` writes its whole chunk: the
    stored replicates ``[base, start)`` read back unchanged, then its own."""
    t1 = time.perf_counter()
    start = task.start
    if task.base is not None:
        kept = kept_cells(url, task.index, task.base, task.start, list(arrays))
        arrays = {name: np.concatenate([kept[name], values]) for name, values in arrays.items()}
        start = task.base
    write_region(url, task.index, start, task.stop, arrays, token)
    return {**record, "write_s": time.perf_counter() - t1}


def run_exact(
    game: Game, index: tuple[int, ...], params: dict, run_shape: dict, checkpoints: np.ndarray, url: str,
    token: str | None = None,
) -> dict[str, Any]:
    """Compute the exact answer of one grid point (NaN where none) and write it."""
    t0, c0 = time.perf_counter(), COMPILE_CLOCK.seconds()
    if game.exact is None:
        arrays = {}
    else:
        arrays = checked_outputs(game, params, game.exact(params, run_shape, checkpoints), checkpoints, exact=True)
        arrays = unplayed(game, params, arrays)
    t1, compile_s = time.perf_counter(), COMPILE_CLOCK.seconds() - c0
    write_exact(url, index, arrays, token)
    return {"key": "exact-" + "-".join(map(str, index)), "kernel_s": t1 - t0 - compile_s, "compile_s": compile_s,
            "write_s": time.perf_counter() - t1}


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
