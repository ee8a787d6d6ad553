"""Rules of Shut the Box (Project Euler 640) as arrays.

Cards ``1..2n`` are bits ``0..2n-1`` of a state ``s`` in ``[0, 4**n)``; a set
bit means the card is "on".  The game starts at ``s = 0`` and ends at
``GOAL = 4**n - 1``.  Two ``n``-sided dice give the ordered outcome
``o = (x, y)``, index ``o = (x-1) n + (y-1)``, probability ``1/n**2``; the
player then toggles one card of ``A(o) = {x, y, x+y}``:
``T(s, a) = s XOR 2**(a-1)``.

Fixed policies are tables ``policy[s, o] -> card`` (int8); the random policy is
a stochastic one, described by :func:`random_weights`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "MAX_SIDES",
    "n_cards",
    "n_states",
    "goal",
    "outcomes",
    "candidates",
    "greedy_card",
    "greedy_table",
    "random_weights",
]

#: Largest number of dice sides accepted anywhere (4**10 states).
MAX_SIDES = 10


def n_cards(n: int) -> int:
    """Number of cards, ``2n``."""
    return 2 * n


def n_states(n: int) -> int:
    """Number of card configurations, ``2**(2n)``."""
    return 1 << (2 * n)


def goal(n: int) -> int:
    """The absorbing state: every card on, ``2**(2n) - 1``."""
    return n_states(n) - 1


def outcomes(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Ordered dice outcomes ``(x, y)`` as two int64 arrays of length ``n**2``."""
    faces = np.arange(1, n + 1, dtype=np.int64)
    return np.repeat(faces, n), np.tile(faces, n)


def candidates(n: int) -> np.ndarray:
    """Admissible cards per outcome, shape ``(n**2, 3)``: columns ``x+y, max, min``.

    The order is the greedy preference (largest card first); for doubles the
    last two columns hold the same card.
    """
    x, y = outcomes(n)
    return np.stack([x + y, np.maximum(x, y), np.minimum(x, y)], axis=1)


@njit(cache=True, inline="always")
def greedy_card(s: int, x: int, y: int) -> int:
    """The greedy choice in state ``s`` after the roll ``(x, y)``.

    Turn on the largest card among ``x+y, max(x, y), min(x, y)`` that is
    currently off; if all three are on, make the naive move: toggle the
    smallest of them, ``min(x, y)``, i.e. turn off the least valuable card.
    """
    hi = max(x, y)
    lo = min(x, y)
    if (s >> (x + y - 1)) & 1 == 0:
        return x + y
    if (s >> (hi - 1)) & 1 == 0:
        return hi
    return lo


@njit(cache=True, nogil=True)
def _greedy_table(n, out):
    for s in range(out.shape[0]):
        for x in range(1, n + 1):
            for y in range(1, n + 1):
                out[s, (x - 1) * n + (y - 1)] = greedy_card(s, x, y)


def greedy_table(n: int) -> np.ndarray:
    """The greedy policy (:func:`greedy_card`) as a table ``(4**n, n**2) -> card`` (int8)."""
    out = np.empty((n_states(n), n * n), dtype=np.int8)
    _greedy_table(n, out)
    return out


def random_weights(n: int) -> np.ndarray:
    """Probabilities of the candidate columns under the random policy, ``(n**2, 3)``.

    Uniform over the *distinct* admissible cards: 1/3 each, or 1/2 for
    ``x+y`` and ``x`` when ``x = y`` (the duplicate column gets 0).
    """
    cand = candidates(n)
    double = cand[:, 1] == cand[:, 2]
    w = np.where(double[:, None], [0.5, 0.5, 0.0], 1.0 / 3.0)
    return w.astype(np.float64)
