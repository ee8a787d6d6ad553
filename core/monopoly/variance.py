"""Exact asymptotic (CLT) variance of the simulated landing frequencies.

Setting
-------
``X_t`` is the roll-by-roll chain of :mod:`boardsweep.core.monopoly.exact` (state before
roll ``t``) with independent card draws.  During roll ``t`` the tally counts a
random vector ``c_t`` (41 locations) with ``E = sum(c_t)`` events; ``c_t``
depends on ``X_t`` *and* on what the roll does (dice, cards), i.e. on the
branch taken, which also fixes ``X_{t+1}``.  The simulated frequency after
``N`` rolls is the ratio estimator

    f_hat = sum_t c_t / sum_t E_t  ->  f = (pi C) / (pi E)

Derivation (delta method + Markov additive CLT)
-----------------------------------------------
``f_hat_loc - f_loc = sum_t y_t / sum_t E_t`` with ``y_t = c_t,loc - f_loc E_t``,
and ``E_pi[y] = 0``.  Since ``sum_t E_t / N -> mu_E = pi E``,
``sqrt(N) (f_hat - f) ~ N(0, sigma^2(y) / mu_E^2)`` where ``sigma^2(y)`` is the
CLT variance of the additive functional ``sum_t y_t``.

``y_t`` is not a function of ``X_t`` alone (``per_landing`` counts the Chance
square *and* where its card sends the token; ``per_roll`` counts the state
*after* the roll), so :func:`boardsweep.core.markov.asymptotic_variance` does not apply
directly.  The martingale decomposition does: with ``m(s) = E[y_t | X_t = s]``
(``= C - f E``) and ``h = Z m`` (``Z`` the fundamental matrix, so
``h - P h = m`` because ``pi m = 0``),

    y_t = D_t + h(X_t) - h(X_{t+1}),   D_t = y_t - m(X_t) + h(X_{t+1}) - (P h)(X_t)

and ``D_t`` is a martingale difference, so
``sigma^2(y) = E_pi[D_t^2] = sum_s pi_s sum_b q_{s,b} D_{s,b}^2`` over the
branches ``b`` of one roll from ``s`` (probability ``q``, counted vector
``c_b``, next state ``n_b``).  The telescoping term is bounded, so it does not
change the limit.  For ``per_roll`` (``c_t`` = indicator of ``X_{t+1}``'s
location) this equals the state-function formula of
:func:`boardsweep.core.markov.asymptotic_variance` (tested).

Units: the returned ``sigma^2`` is per roll, i.e. ``Var(f_hat) ~ sigma^2 / N``
with ``N`` the number of rolls.  Tokens of a run are independent with
independent draws, so for a run of ``k`` tokens ``N`` is the total of rolls
over all tokens (the store's ``rolls``).  ``shuffled_cycle`` has no single
answer (the decks are a random environment): NaN.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..markov import check_stochastic, stationary

from .board import IN_JAIL, JAIL, N_LOCATIONS, N_SQUARES
from .exact import base_states, Decks, resolution_tables, roll_classes
from .rules import Rules

__all__ = ["Branches", "roll_branches", "asymptotic_variance", "asymptotic_variance_params"]


class Branches:
    """Every outcome of one roll from every base state (independent draws).

    Attributes: ``state``, ``next`` (B,) int state indices, ``prob`` (B,)
    probability of the branch given ``state``, ``counts`` (B, 41) counted
    events, ``n_states``.  Branches come in the order of :func:`roll_branches`
    (state, then roll class, then card branch), so every sum over them below
    adds its terms in that order.
    """

    def __init__(self, state, nxt, prob, counts, n_states):
        self.state = np.asarray(state, dtype=np.int64)
        self.next = np.asarray(nxt, dtype=np.int64)
        self.prob = np.asarray(prob, dtype=np.float64)
        self.counts = np.asarray(counts, dtype=np.float64)
        self.n_states = n_states

    def transition_matrix(self) -> np.ndarray:
        """``P[s, n] = sum of q_b`` over the branches from ``s`` to ``n``."""
        n = self.n_states
        return np.bincount(self.state * n + self.next, weights=self.prob, minlength=n * n).reshape(n, n)

    def expected_counts(self) -> np.ndarray:
        """``C[s, loc] = sum of q_b c_b[loc]`` over the branches from ``s``."""
        return by_state(self.state, self.prob[:, None] * self.counts, self.n_states)


def by_state(state: np.ndarray, rows: np.ndarray, n_states: int) -> np.ndarray:
    """``out[s] = sum of rows[b]`` over the branches ``b`` from ``s``, added
    in branch order (as ``np.add.at`` adds them, in one ``np.bincount``)."""
    width = rows.shape[1]
    cells = (state[:, None] * width + np.arange(width)).ravel()
    return np.bincount(cells, weights=rows.ravel(), minlength=n_states * width).reshape(n_states, width)


def roll_branches(rules: Rules) -> Branches:
    """Enumerate the branches of one roll, as :func:`exact.build_chain` builds
    its chain (independent draws only): for each base state and roll class,
    one branch into jail (a failed throw, a third double) or each card
    branch of the landing square (:func:`exact._resolve`, probability > 0)."""
    if rules.shuffled:
        raise ValueError("roll branches are enumerated for independent draws only")
    table_prob, table_final, _, table_counted = (t[:, 0] for t in resolution_tables(Decks(rules, None)))
    loc, dbl, thr = base_states(rules.long_jail)
    sums, doubles, weights = roll_classes(rules.dice_sides)
    jail_base = 3 * N_SQUARES
    in_jail = (loc == IN_JAIL)[:, None]  # (states, 1) against (1, classes)
    stays = in_jail & rules.long_jail & ~doubles & (thr[:, None] < 2)  # a failed throw: stays in jail
    double = doubles & ~(in_jail & rules.long_jail)  # leaving by a throw earns no extra roll
    d_now = np.where(in_jail, 0, dbl[:, None])
    jailed = stays | (double & (d_now == 2))  # the roll ends in jail without moving
    landing = (np.where(in_jail, JAIL, loc[:, None]) + sums) % N_SQUARES
    # (states, classes, card branch): a jailed roll is its first branch, of probability 1
    first = np.arange(table_prob.shape[1]) == 0
    p = np.where(jailed[..., None], first, table_prob[landing])
    final = np.where(jailed[..., None], IN_JAIL, table_final[landing])
    to_jail = final == IN_JAIL
    nxt = np.where(to_jail, jail_base, final * 3 + np.where(double, d_now + 1, 0)[..., None])
    nxt = np.where(jailed[..., None], np.where(stays, jail_base + thr[:, None] + 1, jail_base)[..., None], nxt)
    keep = p > 0

    def every(a: np.ndarray) -> np.ndarray:  # each kept branch's value of an array broadcast against them
        return np.broadcast_to(a, keep.shape)[keep]

    counts = _tallied(rules.tally, table_counted[landing][keep], final[keep], every(jailed[..., None]),
                      every(double[..., None]))
    state, prob = every(np.arange(loc.size)[:, None, None]), (weights[:, None] * p)[keep]
    return Branches(state, nxt[keep], prob, counts, loc.size)


def _tallied(tally: str, counted: np.ndarray, final: np.ndarray, jailed: np.ndarray, double: np.ndarray) -> np.ndarray:
    """(B, 41) events each branch counts: ``per_landing`` the squares its
    landing counts (``counted``, -1 none) and IN_JAIL where it ends there;
    ``per_roll`` its final location; ``per_turn`` that too where the roll
    ends the turn (in jail, or no double).  A jailed roll counts IN_JAIL."""
    rows, to_jail = np.arange(final.size), final == IN_JAIL
    if tally == "per_landing":
        squares = np.where(jailed[:, None], -1, counted)
        squares = np.concatenate([squares, np.where(to_jail, IN_JAIL, -1)[:, None]], axis=1)
    elif tally == "per_roll":
        squares = final[:, None]
    else:  # per_turn: only a roll that ends the turn counts
        squares = np.where(to_jail | ~double, final, -1)[:, None]
    hit = squares >= 0
    cells = (rows[:, None] * N_LOCATIONS + squares)[hit]
    return np.bincount(cells, minlength=final.size * N_LOCATIONS).reshape(final.size, N_LOCATIONS).astype(np.float64)


def asymptotic_variance(rules: Rules) -> dict[str, np.ndarray]:
    """CLT variance per roll of every location's simulated frequency.

    Returns
    -------
    dict
        ``variance`` (41,) ``sigma^2`` with ``Var(f_hat) ~ sigma^2 / rolls``;
        ``frequency`` (41,) the long-run frequency ``f``; ``events_per_roll``
        ``mu_E``; all NaN for ``shuffled_cycle``.
    """
    if rules.shuffled:
        nan = np.full(N_LOCATIONS, np.nan)
        return {"variance": nan, "frequency": nan.copy(), "events_per_roll": np.float64(np.nan)}
    br = roll_branches(rules)
    P = br.transition_matrix()
    check_stochastic(P)
    pi = stationary(P)
    C = br.expected_counts()
    E = C.sum(axis=1)
    mu_E = pi @ E
    f = (pi @ C) / mu_E
    y = br.counts - br.counts.sum(axis=1, keepdims=True) * f  # (B, 41)
    m = by_state(br.state, br.prob[:, None] * y, br.n_states)
    m -= pi @ m  # exactly zero in exact arithmetic
    h = _poisson(P, pi, m)
    Ph = P @ h
    D = y - m[br.state] + h[br.next] - Ph[br.state]
    sigma2_y = np.einsum("b,b,bk->k", pi[br.state], br.prob, D * D)
    return {"variance": sigma2_y / mu_E**2, "frequency": f, "events_per_roll": np.float64(mu_E)}


def _poisson(P: np.ndarray, pi: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``h = Z m`` with ``Z = (I - P + 1 pi^T)^{-1}`` the fundamental matrix:
    solved, not inverted (one LU of a 123 x 123 matrix; the inverse, on a
    busy machine, cost OpenBLAS's threads up to 70 ms)."""
    n = P.shape[0]
    return np.linalg.solve(np.eye(n) - P + np.outer(np.ones(n), pi), m)


@lru_cache(maxsize=128)
def _cached(rules: Rules) -> tuple:
    out = asymptotic_variance(rules)
    return out["variance"], out["frequency"]


def asymptotic_variance_params(params: dict) -> dict:
    """The game interface's ``extras["asymptotic_variance"]``.

    Returns ``{"variance": (41,) array, "per": "rolls"}``: ``Var(f_hat) ~
    variance / N`` with ``N`` the store variable named by ``per``; NaN where
    there is no single answer (``shuffled_cycle``).
    """
    variance, _ = _cached(Rules.from_params(params))
    return {"variance": variance.copy(), "per": "rolls"}
