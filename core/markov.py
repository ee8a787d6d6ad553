"""Exact machinery shared by every game: finite Markov chains with scipy.sparse.

* :func:`stationary` solves ``pi P = pi, sum(pi) = 1`` by a direct sparse LU
  factorisation (COLAMD fill-reducing column order) of ``(I - P)^T`` with one
  equation replaced by the normalisation, and checks the residual.
* :func:`check_stochastic` asserts that every row of ``P`` sums to 1.
* :func:`fundamental_matrix` gives ``Z = (I - P + 1 pi^T)^{-1}`` and
  :func:`asymptotic_variance` the Markov-chain CLT variance of a state
  function, ``sigma^2(f) = 2 <f~, Z f~>_pi - <f~, f~>_pi`` with
  ``f~ = f - pi f``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

__all__ = [
    "check_stochastic",
    "stationary",
    "fundamental_matrix",
    "asymptotic_variance",
]


def check_stochastic(P: sp.spmatrix | np.ndarray, atol: float = 1e-12) -> None:
    """Raise ValueError unless ``P`` is non-negative with rows summing to 1."""
    P = sp.csr_array(P)
    if P.nnz and P.data.min() < -atol:
        raise ValueError(f"transition matrix has a negative entry {P.data.min()}")
    rows = np.asarray(P.sum(axis=1)).ravel()
    worst = np.max(np.abs(rows - 1.0))
    if worst > atol:
        raise ValueError(f"transition matrix rows do not sum to 1 (max error {worst:.3e})")


def stationary(P: sp.spmatrix | np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """Stationary distribution of a chain with one recurrent class: ``pi P = pi``.

    Solved directly.  A pivot state ``r`` in the recurrent class (the heaviest
    after a few power steps, since transient mass decays) gets ``pi_r = 1``;
    the other equations ``(I - P)^T pi = 0`` without row and column ``r`` form
    a non-singular sparse system, factorised by SuperLU with a COLAMD
    fill-reducing column order; then ``pi`` is normalised.  (Replacing an
    equation by the dense row ``1^T pi = 1`` instead ruins the ordering: 4x
    slower on the 31,000-state Monopoly chain.)  Transient states get 0.

    Raises
    ------
    ArithmeticError
        If the residual ``max |pi P - pi|`` exceeds ``tol``.
    """
    P = sp.csr_array(P, dtype=np.float64)
    n = P.shape[0]
    PT = P.T.tocsr()
    x = np.full(n, 1.0 / n)
    for _ in range(64):
        x = PT @ x
    pivot = int(np.argmax(x))
    M = (sp.eye_array(n, format="csr") - P).T.tocsc()
    keep = np.flatnonzero(np.arange(n) != pivot)
    pi = np.ones(n)
    if n > 1:
        reduced = M[keep][:, keep].tocsc()
        rhs = -M[keep][:, [pivot]].toarray().ravel()
        pi[keep] = spla.spsolve(reduced, rhs, permc_spec="COLAMD")
    pi /= pi.sum()
    residual = np.max(np.abs(PT @ pi - pi))
    if not np.isfinite(residual) or residual > tol or pi.min() < -tol:
        raise ArithmeticError(f"stationary solve failed: residual {residual:.3e}")
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def fundamental_matrix(P: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Dense fundamental matrix ``Z = (I - P + 1 pi^T)^{-1}`` of an ergodic chain."""
    P = P.toarray() if sp.issparse(P) else np.asarray(P, dtype=np.float64)
    n = P.shape[0]
    return np.linalg.inv(np.eye(n) - P + np.outer(np.ones(n), pi))


def asymptotic_variance(P: np.ndarray, pi: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Markov-chain CLT variance of ``sum_t f(X_t) / sqrt(N)`` for each column of ``f``.

    ``sigma^2 = 2 <f~, Z f~>_pi - <f~, f~>_pi`` where ``f~ = f - pi.f`` and ``Z`` is
    the fundamental matrix; ``f`` has shape (states,) or (states, k).
    """
    f = np.asarray(f, dtype=np.float64)
    single = f.ndim == 1
    f = f[:, None] if single else f
    Z = fundamental_matrix(P, pi)
    ft = f - pi @ f
    var = 2.0 * np.einsum("s,sk,sk->k", pi, ft, Z @ ft) - np.einsum("s,sk,sk->k", pi, ft, ft)
    return var[0] if single else var
