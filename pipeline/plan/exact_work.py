"""Exact work, counted once: what a sweep plans and what its store holds.

Four quantities, one name each (the words every command prints):

* **exact tasks**: the tasks that compute exact answers, one per chunk of
  grid points of the task layout (:func:`exact_tasks`; a run counts those it
  ran in ``RunReport.exact_run``);
* **exact solves**: the solver's calls those tasks make, one per distinct
  set of the values an exact answer depends on (``Game.exact_params``), so
  points that agree on them share a solve (:func:`exact_solves`; a run counts
  those it made in ``RunReport.exact_solves``);
* **exact answers**: one per grid point, in the store: *stored*, *none
  exists* (no single exact answer) or *not computed yet*
  (:func:`answer_counts` of :func:`boardsweep.pipeline.store.metadata.exact_states`);
* **tested points**: the points whose stored exact answer the verdict tests,
  where it applies (a headline's ``exact_unless``): counted by the verdict
  (``tested_points`` of :func:`boardsweep.pipeline.analysis.headlines.verdict`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .task_layout import TaskLayout, given
from .tasks import exact_key

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = ["exact_tasks", "exact_solves", "answer_counts", "ANSWER_STATES"]

#: The states of a grid point's exact answer (:func:`metadata.exact_states`), in the order they are told.
ANSWER_STATES = ("stored", "none", "pending")


def exact_tasks(spec: Spec, layout: TaskLayout | None = None) -> int:
    """Exact tasks of a whole sweep: one per chunk of ``layout``'s grid
    points (the spec's own where None), prod over axes of ceil(points /
    points per task) (every point's exact answer is computed, or marked done
    where the game has no solver)."""
    chunks = 1
    for n, g in zip(spec.shape, (layout or given(spec)).grid_chunks):
        chunks *= -(-n // g)
    return chunks


def exact_solves(spec: Spec) -> int:
    """Exact solves a whole sweep needs: one per distinct set of the values
    its exact answer depends on (``Game.exact_params``), else one per point."""
    game = spec.game
    if game.exact is None:
        return 0
    if game.exact_params is None:
        return len(spec.resolved_points())
    checkpoints = tuple(int(c) for c in spec.checkpoints)
    combinations = spec.resolved_points().combinations(game.exact_params)  # the key reads nothing else
    return len({exact_key(game, params, spec.run_shape, checkpoints) for params in combinations})


def answer_counts(states: np.ndarray) -> dict[str, int]:
    """Grid points per exact answer state: {``stored``, ``none``, ``pending``: count}
    of the states :func:`metadata.exact_states` reads."""
    states = np.asarray(states, dtype=object)
    return {state: int((states == state).sum()) for state in ANSWER_STATES}
