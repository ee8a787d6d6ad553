"""What the store records of each grid point and label, as the views show it:
a label's text, a point's exact state (the store's own readers, handed on so
that the views read nothing of the store themselves), and the points counted
by exact state."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["label_text", "exact_states", "exact_state", "answer_counts"]


def label_text(labels: Any) -> list[str]:
    """The text of each label of a label coordinate (:func:`~boardsweep.pipeline.store.label_text`)."""
    from ..store import label_text as text

    return text(labels)


def exact_states(ds: Any) -> Any:
    """(state, text) of every grid point's exact answer (:func:`~boardsweep.pipeline.store.exact_states`)."""
    from ..store import exact_states as states

    return states(ds)


def exact_state(ds: Any, point: dict) -> Any:
    """The exact state of the grid point ``point`` (:func:`~boardsweep.pipeline.store.exact_state`)."""
    from ..store import exact_state as state

    return state(ds, point)


def answer_counts(states: np.ndarray) -> dict[str, int]:
    """Grid points per exact answer state {stored, none, pending: count}
    (:func:`~boardsweep.pipeline.plan.answer_counts`): count_s = #{p : state_p = s}."""
    from ..plan import answer_counts as counts

    return counts(states)
