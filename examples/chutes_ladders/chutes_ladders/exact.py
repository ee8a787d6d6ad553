"""Exact answers from the absorbing Markov chain of one token.

With ``Q`` the transient block of the one-token transition matrix (squares
``0..N-1``; ``N`` absorbs), the expected number of spins from the start is
``t = (I - Q)^{-1} 1`` at square 0, and the survival function of the spins
``T`` is ``S(r) = P(T > r) = e_0 Q^r 1``.  Tokens move independently, so with
``p`` players taking turns the game lasts ``min_i T_i`` rounds:
``P(rounds > r) = S(r)^p``, and seat ``i`` (1-based) wins with probability
``sum_r P(T = r) S(r)^(i-1) S(r-1)^(p-i)`` (earlier seats must not have
finished by round ``r``, later ones not before it).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from chutes_ladders.board import Board, load_board, move_table

__all__ = ["transition_matrix", "expected_spins", "survival", "spins_pmf", "rounds_pmf",
           "expected_rounds", "win_shares", "TAIL"]

#: The survival function is propagated until it falls below this.
TAIL = 1e-15
_MAX_STEPS = 1_000_000


def transition_matrix(board: str | Board, sides: int, overshoot: str) -> np.ndarray:
    """One-token transition matrix over squares ``0..N`` (``N`` absorbing)."""
    if not isinstance(board, Board):
        board = load_board(board)
    table = move_table(board, sides, overshoot)
    n = table.shape[0]
    P = np.zeros((n, n))
    for x in range(n):
        np.add.at(P[x], table[x], 1.0 / sides)
    return P


def expected_spins(board: str, sides: int, overshoot: str) -> float:
    """``E[T]`` for one player from square 0: ``((I - Q)^{-1} 1)_0``."""
    Q = transition_matrix(board, sides, overshoot)[:-1, :-1]
    t = np.linalg.solve(np.eye(Q.shape[0]) - Q, np.ones(Q.shape[0]))
    return float(t[0])


def _propagate(board: str, sides: int, overshoot: str) -> tuple[np.ndarray, np.ndarray]:
    return _propagate_board(load_board(board), sides, overshoot)


@lru_cache(maxsize=64)
def _propagate_board(board: Board, sides: int, overshoot: str) -> tuple[np.ndarray, np.ndarray]:
    """``S(r) = P(T > r)`` and ``f(r) = P(T = r)`` for ``r = 0, 1, ...`` until
    ``S`` is below :data:`TAIL`.  ``f(r) = v_{r-1} a`` with ``v_r = e_0 Q^r``
    and ``a`` the one-spin absorption probabilities (no cancellation: an
    impossible length has ``f = 0`` exactly)."""
    P = transition_matrix(board, sides, overshoot)
    Q, a = P[:-1, :-1], P[:-1, -1]
    v = np.zeros(Q.shape[0])
    v[0] = 1.0
    S, f = [1.0], [0.0]
    while S[-1] > TAIL and len(S) < _MAX_STEPS:
        f.append(float(v @ a))
        v = v @ Q
        S.append(float(v.sum()))
    out = np.array(S), np.array(f)
    for x in out:
        x.flags.writeable = False
    return out


def survival(board: str, sides: int, overshoot: str) -> np.ndarray:
    """``S(r) = P(T > r)`` of one token's spins ``T``, until below :data:`TAIL`."""
    return _propagate(board, sides, overshoot)[0]


def spins_pmf(board: str, sides: int, overshoot: str) -> np.ndarray:
    """``P(T = r)`` for ``r = 0, 1, ...`` (one token)."""
    return _propagate(board, sides, overshoot)[1]


def rounds_pmf(board: str, sides: int, overshoot: str, players: int) -> np.ndarray:
    """``P(rounds = r) = S(r-1)^p - S(r)^p = f(r) sum_j S(r-1)^j S(r)^(p-1-j)``."""
    S, f = _propagate(board, sides, overshoot)
    before = np.concatenate([[1.0], S[:-1]])
    return f * sum(before ** j * S ** (players - 1 - j) for j in range(players))


def expected_rounds(board: str, sides: int, overshoot: str, players: int) -> float:
    """``E[min_i T_i] = sum_{r >= 0} S(r)^p``."""
    return float(np.sum(survival(board, sides, overshoot) ** players))


def win_shares(board: str, sides: int, overshoot: str, players: int) -> np.ndarray:
    """Probability that seat ``i`` (seats in turn order) reaches the last square first."""
    S, f = _propagate(board, sides, overshoot)
    f, before, at = f[1:], S[:-1], S[1:]  # P(T = r), S(r-1), S(r) for r = 1, 2, ...
    return np.array([np.sum(f * at ** i * before ** (players - 1 - i)) for i in range(players)])
