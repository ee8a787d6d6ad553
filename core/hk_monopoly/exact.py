"""Exact landing frequencies of hk_monopoly from the movement chain.

Money never changes how a token moves (the ``short`` jail strategy pays the
fine whatever the player's money), so one token's turn-end locations form a
Markov chain.  Its state after a turn is either a square (free) or "in jail
after ``k`` failed throws", ``k`` = 0, 1, 2:

* free on square ``i``: roll ``(d1, d2)`` (each of ``sides**2`` ordered
  outcomes equally likely), move to ``j = i + d1 + d2`` (mod 20); if ``j`` is
  a Go To Jail square the token is in jail with ``k = 0``;
* in jail with ``k`` failed throws: ``short`` and ``k < 2`` -> move from the
  jail square like a free token; otherwise doubles -> move by the throw,
  a failed throw with ``k = 2`` -> move by the throw, else ``k + 1``.

The long-run share of turns ending on each location (20 squares plus
``IN_JAIL``) is the stationary law aggregated over ``k``
(:func:`stationary_frequency`).  The expected share over a finite game of
``turns`` turns from Go, for a token that never retires, is
:func:`horizon_frequency`; it is what a simulation with no retirements (e.g.
``buy_policy=never`` with a Chance that only pays) estimates without bias.
Where a seat retires (``buy_policy=always``: rents) a token's turns end at a
time that depends on where it landed, and the pooled frequencies differ from
it: the verdict does not test those points (the headline's ``exact_unless``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .board import GO_TO_JAIL
from ..markov import check_stochastic, stationary

__all__ = ["transition_matrix", "stationary_frequency", "horizon_frequency", "start_vector"]

_JAIL_STATES = 3  # failed throws 0, 1, 2


def _land(board: np.ndarray, start: int, steps: int) -> int:
    """Chain state after moving ``steps`` from square ``start``."""
    n = board.shape[0]
    j = (start + steps) % n
    return n if board[j, 0] == GO_TO_JAIL else j


def _rows(board: np.ndarray, jail: int, sides: int, long_jail: bool):
    """Yield (from_state, to_state, probability) for every transition."""
    n = board.shape[0]
    p = 1.0 / sides**2
    throws = [(d1, d2) for d1 in range(1, sides + 1) for d2 in range(1, sides + 1)]
    for i in range(n):
        for d1, d2 in throws:
            yield i, _land(board, i, d1 + d2), p
    for k in range(_JAIL_STATES):
        here = n + k
        for d1, d2 in throws:
            if (not long_jail and k < 2) or d1 == d2 or k == 2:
                yield here, _land(board, jail, d1 + d2), p
            else:
                yield here, n + k + 1, p


def transition_matrix(board: np.ndarray, jail: int, sides: int, long_jail: bool) -> sp.csr_array:
    """One token's turn-to-turn transition matrix (states: squares, then jail k=0..2).

    Parameters
    ----------
    board : ndarray
        int64 (squares, 3) board table.
    jail : int
        0-based index of the jail square.
    sides : int
        Faces of each of the two dice.
    long_jail : bool
        True for the ``long`` jail strategy (roll for doubles), False for ``short``.
    """
    n_states = board.shape[0] + _JAIL_STATES
    rows, cols, vals = zip(*_rows(board, jail, sides, long_jail))
    P = sp.coo_array((vals, (rows, cols)), shape=(n_states, n_states)).tocsr()
    P.sum_duplicates()
    check_stochastic(P)
    return P


def _to_locations(dist: np.ndarray, n: int) -> np.ndarray:
    """Aggregate a chain-state vector onto the n + 1 locations (jail states -> IN_JAIL)."""
    out = np.zeros(n + 1)
    out[:n] = dist[:n]
    out[n] = dist[n:].sum()
    return out


def stationary_frequency(board: np.ndarray, jail: int, sides: int, long_jail: bool) -> np.ndarray:
    """Long-run share of turns ending on each location (squares, then IN_JAIL)."""
    P = transition_matrix(board, jail, sides, long_jail)
    return _to_locations(stationary(P), board.shape[0])


def start_vector(board: np.ndarray, go: int) -> np.ndarray:
    """The chain state before the first turn: on Go, free."""
    v = np.zeros(board.shape[0] + _JAIL_STATES)
    v[go] = 1.0
    return v


def horizon_frequency(
    board: np.ndarray, go: int, jail: int, sides: int, long_jail: bool, turns: int
) -> np.ndarray:
    """Expected share of a token's first ``turns`` turns that end on each location.

    The token starts free on Go and plays all ``turns`` turns (no retirement):
    ``(1 / T) * sum_{t=1..T} e_Go P^t`` aggregated onto locations.
    """
    P = transition_matrix(board, jail, sides, long_jail)
    PT = P.T.tocsr()
    v = start_vector(board, go)
    total = np.zeros_like(v)
    for _ in range(turns):
        v = PT @ v
        total += v
    return _to_locations(total / turns, board.shape[0])
