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

from ..markov import check_stochastic, fundamental_matrix, stationary

from .board import IN_JAIL, JAIL, N_LOCATIONS, N_SQUARES
from .exact import _base_states, _Decks, _resolve, _roll_classes
from .rules import Rules

__all__ = ["Branches", "roll_branches", "asymptotic_variance", "asymptotic_variance_params"]


class Branches:
    """Every outcome of one roll from every base state (independent draws).

    Attributes: ``state``, ``next`` (B,) int state indices, ``prob`` (B,)
    probability of the branch given ``state``, ``counts`` (B, 41) counted
    events, ``n_states``.
    """

    def __init__(self, state, nxt, prob, counts, n_states):
        self.state = np.asarray(state, dtype=np.int64)
        self.next = np.asarray(nxt, dtype=np.int64)
        self.prob = np.asarray(prob, dtype=np.float64)
        self.counts = np.asarray(counts, dtype=np.float64)
        self.n_states = n_states

    def transition_matrix(self) -> np.ndarray:
        P = np.zeros((self.n_states, self.n_states))
        np.add.at(P, (self.state, self.next), self.prob)
        return P

    def expected_counts(self) -> np.ndarray:
        C = np.zeros((self.n_states, N_LOCATIONS))
        np.add.at(C, self.state, self.prob[:, None] * self.counts)
        return C


def roll_branches(rules: Rules) -> Branches:
    """Enumerate the branches of one roll, mirroring :func:`exact.build_chain`
    state by state (independent draws only)."""
    if rules.shuffled:
        raise ValueError("roll branches are enumerated for independent draws only")
    decks = _Decks(rules, None)
    loc, dbl, thr = _base_states(rules.long_jail)
    jail_base = 3 * N_SQUARES
    sums, doubles, weights = _roll_classes(rules.dice_sides)
    state, nxt, prob, counts = [], [], [], []

    def add(s, n, p, counted):
        row = np.zeros(N_LOCATIONS)
        for c in counted:
            row[c] += 1.0
        state.append(s)
        nxt.append(n)
        prob.append(p)
        counts.append(row)

    for w, (L, D, S) in enumerate(zip(loc, dbl, thr)):
        in_jail = L == IN_JAIL
        for total, dd, weight in zip(sums, doubles, weights):
            stays = in_jail and rules.long_jail and not dd and S < 2
            double = bool(dd) and not (in_jail and rules.long_jail)
            d_now = 0 if in_jail else int(D)
            if stays or (double and d_now == 2):
                add(w, jail_base + S + 1 if stays else jail_base, weight, (IN_JAIL,))
                continue
            origin = JAIL if in_jail else int(L)
            landing = (origin + int(total)) % N_SQUARES
            d_next = d_now + 1 if double else 0
            for p, final, _, counted in _resolve(landing, 0, decks):
                if p <= 0:
                    continue
                to_jail = final == IN_JAIL
                n = jail_base if to_jail else final * 3 + d_next
                if rules.tally == "per_landing":
                    tallied = tuple(counted) + ((IN_JAIL,) if to_jail else ())
                elif rules.tally == "per_roll":
                    tallied = (final,)
                else:  # per_turn: only a roll that ends the turn counts
                    tallied = (final,) if (to_jail or not double) else ()
                add(w, n, weight * p, tallied)
    return Branches(state, nxt, prob, counts, loc.size)


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
    m = np.zeros((br.n_states, N_LOCATIONS))
    np.add.at(m, br.state, br.prob[:, None] * y)
    m -= pi @ m  # exactly zero in exact arithmetic
    h = fundamental_matrix(P, pi) @ m
    Ph = P @ h
    D = y - m[br.state] + h[br.next] - Ph[br.state]
    sigma2_y = np.einsum("b,b,bk->k", pi[br.state], br.prob, D * D)
    return {"variance": sigma2_y / mu_E**2, "frequency": f, "events_per_roll": np.float64(mu_E)}


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
