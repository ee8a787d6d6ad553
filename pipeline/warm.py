"""Kernels ready before the tasks need them.

While a run starts (the store made, the cluster started), a thread of the
``boardsweep`` process simulates one short run of each grid point's variant,
its result discarded: numba loads the kernels from its disk cache, or
compiles them, so that worker threads of the same process find them ready
(:class:`boardsweep.pipeline.execute` starts it when the workers are threads).
Nothing here is stored: the tasks compute every result.
"""

from __future__ import annotations

import threading

import numpy as np

from ..core.games import Game
from .plan import replicate_seed

__all__ = ["WARM_POINTS", "warm_points"]

#: Grid points whose kernels are warmed at most (in grid order).
WARM_POINTS = 16


def warm_points(game: Game, root: int, points: list[dict], run_shape: dict, checkpoints: np.ndarray,
                stop: threading.Event | None = None) -> None:
    """Simulate one short run (the run shape given, its checkpoint dimension
    cut to 4) of each of ``points``, stopping early once ``stop`` is set.  An
    error is left for the real task to report."""
    length = min(run_shape[game.checkpoint_of], max(game.run_shape_minimum.get(game.checkpoint_of, 1), 4))
    shape = {**run_shape, game.checkpoint_of: length}
    first = np.asarray([length], dtype=np.asarray(checkpoints).dtype)
    for params in points:
        if stop is not None and stop.is_set():
            return
        try:
            game.simulate(params, replicate_seed(root, params, 0), shape, first)
        except Exception:  # noqa: BLE001, S112 - the task that runs this point reports its error
            continue
