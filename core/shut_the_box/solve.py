"""Exact Shut the Box: optimal policy, and the law of the number of rolls.

Optimal play (Bellman equation, ``V(GOAL) = 0``)::

    V(s) = 1 + sum_o p(o) min_{a in A(o)} V(T(s, a))

is solved by policy iteration from the greedy policy.  Each policy ``pi`` is
evaluated exactly, ``(I - Q_pi) V = 1`` on the transient states, and improved
by ``pi(s, o) = argmin_a V(T(s, a))`` until no decision changes.  Each
improvement reads the table off ``V`` by a fixed rule that no rounding can
steer: among the moves within ``TIE_RTOL * max V`` of the best, the one the
greedy order prefers (``x+y``, then ``max``, then ``min``).  Solvers round
differently on different CPUs; this way the simulated games do not.  (Measured
for n = 2..8: the smallest real gap between two moves is ``6e-10 max V``
(n = 8), exact ties come out at most ``3e-16 max V`` apart, and the solved
``V`` has a Bellman residual below ``1e-13 max V``.)

Linear solves.  Up to :data:`DIRECT_MAX_STATES` states the system is
factorised by SuperLU with a COLAMD fill-reducing ordering.  Beyond that the
factors fill in catastrophically (every move flips one bit, so the chain lives
on a ``2n``-dimensional hypercube whose separators have ~ ``C(2n, n)``
vertices; measured: n = 7 greedy takes ~500 s direct), so BiCGSTAB is used,
preconditioned by one Gauss-Seidel sweep in order of decreasing number of
cards on: ``M = I - U`` where ``U`` holds the moves that turn a card on (a
triangular solve), followed by iterative refinement until the residual
``max |(I - Q) x - b|`` is below ``1e-12 max(1, max |x|)``.

A fixed policy makes the game an absorbing Markov chain with transient block
``Q``.  Its rolls ``T`` have mean ``m = (I - Q)^{-1} 1``, second moment
``w = (I - Q)^{-1} (1 + 2 Q m)`` and ``P(T = t) = e_0 Q^{t-1} r`` with
``r = (I - Q) 1`` the one-step absorption probabilities.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numba import njit

from . import rules

__all__ = [
    "POLICIES",
    "EXACT_MAX_SIDES",
    "DIRECT_MAX_STATES",
    "Chain",
    "OptimalSolution",
    "TIE_RTOL",
    "solve_optimal",
    "decide_policy",
    "policy_chain",
    "solve_linear",
    "moments",
    "rolls_pmf",
    "binned_pmf",
    "quantiles",
    "bellman_residual",
]

POLICIES = ("optimal", "greedy", "random")
#: Largest ``n`` solved exactly (4**8 = 65,536 states x 64 outcomes: a few seconds).
EXACT_MAX_SIDES = 8
#: Systems with at most this many transient states are solved by sparse LU.
DIRECT_MAX_STATES = 1 << 10
_RESIDUAL_TOL = 1e-12
#: Moves whose values differ by at most this times ``max V`` are ties.
TIE_RTOL = 1e-11


@dataclass(frozen=True)
class Chain:
    """Absorbing chain of one policy on the transient states ``0 .. 4**n - 2``.

    ``Q`` (CSR) is the transient block, ``absorb[s] = P(s -> GOAL)``.
    """

    n: int
    policy: str
    Q: sp.csr_array
    absorb: np.ndarray


@dataclass(frozen=True)
class OptimalSolution:
    """Optimal values ``V[s]`` (``V[GOAL] = 0``) and table ``policy[s, o] -> card``."""

    n: int
    value: np.ndarray
    policy: np.ndarray
    iterations: int


# --------------------------------------------------------------------------- kernels


@njit(cache=True, nogil=True)
def _transition(n, cand, table, weights):
    """CSR arrays of ``Q`` and the absorption vector for a policy.

    ``table[s, o]`` gives the card (deterministic policy) unless it has no
    rows, in which case candidate column ``k`` of outcome ``o`` is taken with
    probability ``weights[o, k]``.
    """
    G = (1 << (2 * n)) - 1
    O = n * n
    C = 2 * n
    indptr = np.zeros(G + 1, np.int64)
    indices = np.empty(G * C, np.int64)
    data = np.empty(G * C, np.float64)
    absorb = np.zeros(G, np.float64)
    row = np.zeros(C, np.float64)
    nnz = 0
    for s in range(G):
        row[:] = 0.0
        if table.shape[0] > 0:
            for o in range(O):
                row[table[s, o] - 1] += 1.0
        else:
            for o in range(O):
                for k in range(3):
                    row[cand[o, k] - 1] += weights[o, k]
        for a in range(C):
            if row[a] != 0.0:
                t = s ^ (1 << a)
                if t == G:
                    absorb[s] = row[a] / O
                else:
                    indices[nnz] = t
                    data[nnz] = row[a] / O
                    nnz += 1
        indptr[s + 1] = nnz
    return indptr, indices[:nnz].copy(), data[:nnz].copy(), absorb


@njit(cache=True, nogil=True)
def _up_sweep(indptr, indices, data, order, b):
    """Solve ``(I - U) x = b``, ``U`` = moves turning a card on, in ``order``."""
    x = np.empty_like(b)
    for i in range(order.shape[0]):
        s = order[i]
        acc = b[s]
        for k in range(indptr[s], indptr[s + 1]):
            t = indices[k]
            if t > s:  # one bit differs, so t > s means the move turns a card on
                acc += data[k] * x[t]
        x[s] = acc
    return x


@njit(cache=True, nogil=True)
def _decide(n, cand, V, tol, table):
    """``table[s, o]`` = the first candidate (greedy order) within ``tol`` of the best."""
    G = (1 << (2 * n)) - 1
    for s in range(G):
        for o in range(n * n):
            best = np.inf
            for k in range(3):
                best = min(best, V[s ^ (1 << (cand[o, k] - 1))])
            for k in range(3):
                a = cand[o, k]
                if V[s ^ (1 << (a - 1))] <= best + tol:
                    table[s, o] = a
                    break


@njit(cache=True, nogil=True)
def _bellman(n, cand, V):
    """``1 + sum_o p(o) min_a V(T(s, a))`` for every transient state."""
    G = (1 << (2 * n)) - 1
    O = n * n
    out = np.empty(G, np.float64)
    for s in range(G):
        acc = 0.0
        for o in range(O):
            best = np.inf
            for k in range(3):
                v = V[s ^ (1 << (cand[o, k] - 1))]
                if v < best:
                    best = v
            acc += best
        out[s] = 1.0 + acc / O
    return out


@njit(cache=True, nogil=True)
def _propagate(indptr, indices, data, absorb, steps, tail, pmf):
    """``pmf[t] = P(T = t)`` for ``t < steps`` from state 0; stop once ``P(T >= t) < tail``.

    Returns ``(t_end, P(T >= t_end))``: ``pmf[t_end:]`` is not filled.
    """
    G = absorb.shape[0]
    d = np.zeros(G, np.float64)
    nxt = np.zeros(G, np.float64)
    d[0] = 1.0
    pmf[0] = 0.0
    mass = 1.0
    t = 1
    while t < steps and mass >= tail:
        p = 0.0
        nxt[:] = 0.0
        for s in range(G):
            ds = d[s]
            if ds != 0.0:
                p += ds * absorb[s]
                for k in range(indptr[s], indptr[s + 1]):
                    nxt[indices[k]] += ds * data[k]
        pmf[t] = p
        d, nxt = nxt, d
        mass = 0.0
        for s in range(G):
            mass += d[s]
        t += 1
    return t, mass


# --------------------------------------------------------------------------- solvers


def _check_n(n: int) -> None:
    if not 2 <= n <= EXACT_MAX_SIDES:
        raise ValueError(f"exact solution needs 2 <= dice_sides <= {EXACT_MAX_SIDES}, got {n}")


@functools.lru_cache(maxsize=None)
def _order(n: int) -> np.ndarray:
    """Transient states by decreasing number of cards on (stable)."""
    s = np.arange(rules.goal(n), dtype=np.int64)
    return np.argsort(-np.bitwise_count(s).astype(np.int64), kind="stable")


def _chain_from(n: int, name: str, table: np.ndarray | None) -> Chain:
    cand = rules.candidates(n)
    if table is None:
        indptr, indices, data, absorb = _transition(
            n, cand, np.zeros((0, 0), np.int8), rules.random_weights(n)
        )
    else:
        indptr, indices, data, absorb = _transition(n, cand, table, np.zeros((0, 3)))
    G = rules.goal(n)
    return Chain(n, name, sp.csr_array((data, indices, indptr), shape=(G, G)), absorb)


def solve_linear(chain: Chain, b: np.ndarray) -> np.ndarray:
    """Solve ``(I - Q) x = b`` for the chain's transient block.

    Sparse LU (COLAMD) for small chains, else BiCGSTAB with the Gauss-Seidel
    ``I - U`` preconditioner plus iterative refinement.

    Raises
    ------
    ArithmeticError
        If the residual ``max |(I - Q) x - b|`` stays above ``1e-12 max(1, max|x|)``.
    """
    Q = chain.Q
    G = Q.shape[0]
    A = sp.eye_array(G, format="csr") - Q
    if G <= DIRECT_MAX_STATES:
        x = spla.spsolve(sp.csc_array(A), b, permc_spec="COLAMD")
        rounds = 1
    else:
        order = _order(chain.n)
        up = (Q.indptr, Q.indices, Q.data)
        M = spla.LinearOperator((G, G), matvec=lambda r: _up_sweep(*up, order, r))
        x = np.zeros(G)
        rounds = 6
    for _ in range(rounds):
        r = b - A @ x
        if np.max(np.abs(r)) <= _RESIDUAL_TOL * max(1.0, np.max(np.abs(x))):
            return x
        if G <= DIRECT_MAX_STATES:
            break
        dx, _info = spla.bicgstab(A, r, M=M, rtol=1e-12, atol=0.0, maxiter=1000)
        x = x + dx
    r = np.max(np.abs(b - A @ x))
    if not np.isfinite(r) or r > _RESIDUAL_TOL * max(1.0, np.max(np.abs(x))):
        raise ArithmeticError(f"linear solve failed: residual {r:.3e}")
    return x


@functools.lru_cache(maxsize=None)
def solve_optimal(n: int) -> OptimalSolution:
    """Optimal policy by policy iteration from the greedy policy.

    Solves ``V(s) = 1 + sum_o p(o) min_{a in A(o)} V(T(s, a))``: evaluate the
    policy, improve it with :func:`decide_policy` (near-ties broken by a fixed
    rule), stop when the table no longer changes.  Cached per ``n``; the
    returned arrays are read-only.
    """
    _check_n(n)
    table = rules.greedy_table(n)
    for iteration in range(1, 1000):
        chain = _chain_from(n, "optimal", table)
        V = np.append(solve_linear(chain, np.ones(rules.goal(n))), 0.0)
        improved = decide_policy(n, V)
        if np.array_equal(improved, table):
            break
        table = improved
    else:  # pragma: no cover - policy iteration terminates in a handful of steps
        raise ArithmeticError("policy iteration did not converge")
    V.setflags(write=False)
    table.setflags(write=False)
    return OptimalSolution(n, V, table, iteration)


def decide_policy(n: int, V: np.ndarray) -> np.ndarray:
    """The optimal table ``(4**n, n**2) -> card`` read off the values ``V``.

    ``pi(s, o)`` is the first card in greedy order (``x+y``, ``max``, ``min``)
    with ``V(T(s, a)) <= min_b V(T(s, b)) + TIE_RTOL max V``: a change of ``V``
    in its last bits (another CPU's rounding) leaves the table as it is.
    """
    table = np.empty((rules.n_states(n), n * n), dtype=np.int8)
    table[-1] = rules.greedy_table(n)[-1]  # the goal state: never played
    _decide(n, rules.candidates(n), np.asarray(V, np.float64), TIE_RTOL * float(np.max(V)), table)
    return table


@functools.lru_cache(maxsize=None)
def policy_chain(n: int, policy: str) -> Chain:
    """The absorbing chain of ``policy`` (``optimal``, ``greedy`` or ``random``)."""
    _check_n(n)
    if policy == "optimal":
        return _chain_from(n, policy, solve_optimal(n).policy)
    if policy == "greedy":
        return _chain_from(n, policy, rules.greedy_table(n))
    if policy == "random":
        return _chain_from(n, policy, None)
    raise ValueError(f"unknown policy {policy!r}; expected one of {POLICIES}")


@functools.lru_cache(maxsize=None)
def moments(n: int, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of the rolls to finish from every transient state.

    ``m = (I - Q)^{-1} 1``, ``w = (I - Q)^{-1} (1 + 2 Q m)``, ``var = w - m^2``.
    """
    chain = policy_chain(n, policy)
    ones = np.ones(chain.Q.shape[0])
    m = solve_linear(chain, ones)
    w = solve_linear(chain, ones + 2.0 * (chain.Q @ m))
    m.setflags(write=False)
    var = w - m * m
    var.setflags(write=False)
    return m, var


def rolls_pmf(
    n: int, policy: str, tail: float = 1e-12, max_rolls: int = 200_000
) -> tuple[np.ndarray, float]:
    """Exact ``P(T = t)`` for ``t = 0 .. len(pmf) - 1`` from the empty box.

    ``P(T = t) = e_0 Q^{t-1} r``; stops at the first ``t`` with
    ``P(T >= t) < tail`` or at ``t = max_rolls``.  Returns ``(pmf, P(T >= len(pmf)))``.
    """
    chain = policy_chain(n, policy)
    pmf = np.zeros(max_rolls, np.float64)
    Q = chain.Q
    end, mass = _propagate(Q.indptr, Q.indices, Q.data, chain.absorb, max_rolls, tail, pmf)
    return pmf[:end], float(mass)


def binned_pmf(n: int, policy: str, bins: int) -> np.ndarray:
    """``P(T = t)`` for ``t < bins - 1`` and ``P(T >= bins - 1)`` in the last bin."""
    pmf, mass = rolls_pmf(n, policy, tail=0.0, max_rolls=bins - 1)
    return np.append(pmf, mass)


def quantiles(pmf: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """Smallest ``t`` with ``P(T <= t) >= q``; NaN where the pmf's horizon is too short."""
    cdf = np.cumsum(pmf)
    qs = np.asarray(qs, dtype=np.float64)
    idx = np.searchsorted(cdf, qs - 1e-15, side="left").astype(np.float64)
    idx[idx >= cdf.shape[0]] = np.nan
    return idx


def bellman_residual(n: int) -> float:
    """``max_s |V(s) - 1 - sum_o p(o) min_a V(T(s, a))|`` of the optimal solution."""
    sol = solve_optimal(n)
    return float(np.max(np.abs(sol.value[:-1] - _bellman(n, rules.candidates(n), sol.value))))
