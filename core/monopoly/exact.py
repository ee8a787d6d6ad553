"""Exact Monopoly answers from the roll-by-roll Markov chain.

State of one token before a roll: (location, doubles so far this turn, failed
jail throws) and, for a fixed deck order, the positions in both decks:

* location 0..39 with doubles d in {0, 1, 2} (120 states), plus IN_JAIL with
  j in {0, 1, 2} failed throws (long jail) or a single IN_JAIL state (short);
* independent draws: nothing else (121 or 123 states); a fixed deck order
  (``shuffled_cycle`` with given orders): times 16 x 16 (or 16 x 15) deck
  positions, about 31,000 states.

One step is one roll.  ``P`` is the transition matrix and ``C[s, loc]`` the
expected number of events counted at ``loc`` during a roll from ``s`` under
the tally convention, so the long-run frequency of ``loc`` is
``(pi C)[loc] / sum(pi C)`` with ``pi P = pi`` (for ``per_roll`` this is just
``pi`` aggregated by location).  A turn starts in the states with d = 0; the
finite-horizon counts iterate the distribution turn by turn from GO.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from ..markov import check_stochastic, stationary

from .board import CHANCE, COMMUNITY_CHEST, G2J, IN_JAIL, JAIL, N_LOCATIONS, N_SQUARES
from .board import next_railway, next_utility
from .cards import BACK_3, NEXT_RAILWAY, NEXT_UTILITY, STAY, TO_JAIL
from .rules import Rules

__all__ = ["Chain", "build_chain", "long_run_frequency", "expected_counts"]

_MAX_COUNTED = 4  # squares one landing can count: CH3, CC3, a destination, ...


@dataclass(frozen=True)
class Chain:
    """The roll-by-roll chain of one token.

    Attributes
    ----------
    P : scipy.sparse.csr_array
        (S, S) transition matrix, rows summing to 1.
    C : numpy.ndarray
        (S, 41) expected counted events per location during a roll from each state.
    location : numpy.ndarray
        (S,) location 0..40 of each state.
    turn_start : numpy.ndarray
        (S,) True where a turn starts (no doubles pending).
    start : int
        Index of the initial state: GO, no doubles, both decks at the top.
    """

    P: sp.csr_array
    C: np.ndarray
    location: np.ndarray
    turn_start: np.ndarray
    start: int


def base_states(long_jail: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(location, doubles, failed jail throws) of every base state."""
    loc = np.repeat(np.arange(N_SQUARES), 3)
    dbl = np.tile(np.arange(3), N_SQUARES)
    jails = 3 if long_jail else 1
    loc = np.concatenate([loc, np.full(jails, IN_JAIL)])
    dbl = np.concatenate([dbl, np.zeros(jails, dtype=int)])
    thr = np.concatenate([np.zeros(3 * N_SQUARES, dtype=int), np.arange(jails)])
    return loc, dbl, thr


def roll_classes(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (sum, double) outcomes of two n-sided dice with their probabilities."""
    a, b = np.meshgrid(np.arange(1, n + 1), np.arange(1, n + 1), indexing="ij")
    keys = np.stack([(a + b).ravel(), (a == b).ravel().astype(int)], axis=1)
    classes, weight = np.unique(keys, axis=0, return_counts=True)
    return classes[:, 0], classes[:, 1].astype(bool), weight / n**2


class Decks:
    """Card draws: independent (one deck state, every card 1/len) or a fixed
    cyclic order (deck state = positions in both decks, draws deterministic)."""

    def __init__(self, rules: Rules, orders: tuple[np.ndarray, np.ndarray] | None):
        self.fixed = orders is not None
        cc, ch = (rules.community_cards, rules.chance_cards) if orders is None else orders
        self.cc, self.ch = np.asarray(cc), np.asarray(ch)
        self.count = len(self.cc) * len(self.ch) if self.fixed else 1

    def draw(self, square: int, ds: int) -> list[tuple[float, int, int]]:
        """[(probability, card, new deck state)] for a draw on ``square``."""
        deck = self.cc if square in COMMUNITY_CHEST else self.ch
        if not self.fixed:
            return [(1.0 / len(deck), int(card), ds) for card in deck]
        i, j = divmod(ds, len(self.ch))
        if square in COMMUNITY_CHEST:
            return [(1.0, int(self.cc[i]), ((i + 1) % len(self.cc)) * len(self.ch) + j)]
        return [(1.0, int(self.ch[j]), i * len(self.ch) + (j + 1) % len(self.ch))]


def _destination(card: int, square: int) -> int:
    if card == NEXT_RAILWAY:
        return int(next_railway[square])
    if card == NEXT_UTILITY:
        return int(next_utility[square])
    if card == BACK_3:
        return (square - 3) % N_SQUARES
    return card


def _resolve(square: int, ds: int, decks: Decks) -> list[tuple[float, int, int, tuple]]:
    """Branches of a landing: [(probability, final location, deck state, squares
    counted by per_landing before the final jail count)]."""
    if square == G2J:
        return [(1.0, IN_JAIL, ds, ())]
    if square not in COMMUNITY_CHEST and square not in CHANCE:
        return [(1.0, square, ds, (square,))]
    out = []
    for p, card, ds2 in decks.draw(square, ds):
        if card == STAY:
            out.append((p, square, ds2, (square,)))
        elif card == TO_JAIL:
            out.append((p, IN_JAIL, ds2, (square,)))
        else:
            for q, final, ds3, counted in _resolve(_destination(card, square), ds2, decks):
                out.append((p * q, final, ds3, (square,) + counted))
    return out


def resolution_tables(decks: Decks):
    """Padded arrays over (landing square, deck state, branch): probability,
    final location, next deck state, and the squares counted (-1 = none)."""
    table = [[_resolve(sq, ds, decks) for ds in range(decks.count)] for sq in range(N_SQUARES)]
    width = max(len(br) for row in table for br in row)
    shape = (N_SQUARES, decks.count, width)
    prob = np.zeros(shape)
    final = np.zeros(shape, dtype=np.int64)
    nxt = np.zeros(shape, dtype=np.int64)
    counted = np.full(shape + (_MAX_COUNTED,), -1, dtype=np.int64)
    for sq, row in enumerate(table):
        for ds, branches in enumerate(row):
            for b, (p, f, ds2, cnt) in enumerate(branches):
                prob[sq, ds, b], final[sq, ds, b], nxt[sq, ds, b] = p, f, ds2
                counted[sq, ds, b, : len(cnt)] = cnt
    return prob, final, nxt, counted


def _checked(rules: Rules, deck_orders):
    """``deck_orders``, given where the rules shuffle the decks and only there (else ValueError)."""
    if rules.shuffled and deck_orders is None:
        raise ValueError("shuffled_cycle needs fixed deck orders for an exact chain")
    if not rules.shuffled and deck_orders is not None:
        raise ValueError("deck orders apply to shuffled_cycle only")
    return deck_orders


def build_chain(rules: Rules, deck_orders: tuple[np.ndarray, np.ndarray] | None = None) -> Chain:
    """Transition matrix and expected counts of the roll-by-roll chain.

    Parameters
    ----------
    rules : Rules
        With ``deck_policy='independent'`` the chain has 121 or 123 states.
        With ``'shuffled_cycle'`` the deck orders must be given.
    deck_orders : (community_chest, chance), optional
        Fixed cyclic deck orders (each a permutation of the rules' deck).
    """
    decks = Decks(rules, _checked(rules, deck_orders))
    prob, final, nxt, counted = resolution_tables(decks)
    loc, dbl, thr = base_states(rules.long_jail)
    nb, nd = loc.size, decks.count
    jail_base = 3 * N_SQUARES  # index of IN_JAIL with 0 failed throws

    sums, doubles, weight = roll_classes(rules.dice_sides)
    L, S, D, W = (x[:, None] for x in (loc, thr, dbl, np.arange(nb)))  # (nb, 1)
    s_, dd, w = sums[None, :], doubles[None, :], weight[None, :]  # (1, nc)
    in_jail = L == IN_JAIL
    stays = in_jail & rules.long_jail & ~dd & (S < 2)  # failed throw, stays in jail
    double = dd & ~(in_jail & rules.long_jail)  # leaving by a throw earns no extra roll
    d_now = np.where(in_jail, 0, D)
    third = double & (d_now == 2)
    jailed = stays | third  # the roll ends in jail without moving
    origin = np.where(in_jail, JAIL, L)
    landing = (origin + s_) % N_SQUARES
    d_next = np.where(double, d_now + 1, 0)
    jail_next = np.where(stays, jail_base + S + 1, jail_base)

    ds = np.arange(nd)
    rows_j, cols_j, vals_j = _jail_events(jailed, W, jail_next, w, nd)
    # Landing events, gathered from the resolution tables: (events, nd, width).
    mb, mc = np.nonzero(~jailed)
    Lm = landing[mb, mc]
    p = prob[Lm] * w[0, mc][:, None, None]
    f = final[Lm]
    base_next = np.where(f == IN_JAIL, jail_base, f * 3 + d_next[mb, mc][:, None, None])
    rows_m = np.broadcast_to((W[mb, 0][:, None] * nd + ds)[:, :, None], f.shape)
    cols_m = base_next * nd + nxt[Lm]
    ends = (f == IN_JAIL) | ~double[mb, mc][:, None, None]

    n_states = nb * nd
    keep = p > 0
    rows = np.concatenate([rows_j, rows_m[keep]])
    cols = np.concatenate([cols_j, cols_m[keep]])
    vals = np.concatenate([vals_j, p[keep]])
    P = sp.csr_array(sp.coo_array((vals, (rows, cols)), shape=(n_states, n_states)))

    C = _counted_per_roll(rules.tally, counted[Lm] if rules.tally == "per_landing" else None, rows_m, p, f,
                          keep if rules.tally == "per_roll" else keep & ends, rows_j, vals_j, n_states)

    state_loc = np.repeat(loc, nd)
    turn_start = np.repeat(dbl == 0, nd)
    return Chain(P=P, C=C, location=state_loc, turn_start=turn_start, start=0)


def _jail_events(jailed, W, jail_next, w, nd: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows, columns and probabilities of the rolls that end in jail without
    moving (one counted IN_JAIL whatever the tally), every deck state alike."""
    ds = np.arange(nd)
    jb, jc = np.nonzero(jailed)
    rows_j = (W[jb, 0][:, None] * nd + ds).ravel()
    cols_j = (jail_next[jb, jc][:, None] * nd + ds).ravel()
    vals_j = np.repeat(w[0, jc], nd)
    return rows_j, cols_j, vals_j


def _counted_per_roll(tally: str, ct, rows_m, p, f, sel, rows_j, vals_j, n_states: int) -> np.ndarray:
    """``C[s, loc]``: the expected events counted at ``loc`` during a roll
    from ``s`` under the tally (``ct``: per_landing's counted squares of each
    landing, else ``sel``: the landings counted, their final square)."""
    jail_counts = np.bincount(rows_j, weights=vals_j, minlength=n_states)
    if tally == "per_landing":
        hit = ct >= 0  # ct: (events, nd, width, 4)
        c_rows = np.broadcast_to(rows_m[..., None], ct.shape)[hit]
        c_cols = ct[hit]
        c_vals = np.broadcast_to(p[..., None], ct.shape)[hit]
        jail_final = f == IN_JAIL
        c_rows = np.concatenate([c_rows, rows_m[jail_final]])
        c_cols = np.concatenate([c_cols, np.full(jail_final.sum(), IN_JAIL)])
        c_vals = np.concatenate([c_vals, p[jail_final]])
    else:
        c_rows, c_cols, c_vals = rows_m[sel], f[sel], p[sel]
    C = sp.coo_array((c_vals, (c_rows, c_cols)), shape=(n_states, N_LOCATIONS)).toarray()
    C[:, IN_JAIL] += jail_counts
    return C


@lru_cache(maxsize=256)
def _independent_chain(rules: Rules) -> Chain:
    chain = build_chain(rules)
    check_stochastic(chain.P)
    return chain


def _chain(rules: Rules, deck_orders) -> Chain:
    if deck_orders is None:
        return _independent_chain(rules)
    chain = build_chain(rules, deck_orders)
    check_stochastic(chain.P)
    return chain


def long_run_frequency(
    rules: Rules, deck_orders: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray:
    """Exact long-run frequency of each of the 41 locations under the tally.

    ``f = pi C / sum(pi C)`` with ``pi`` the stationary law of the roll chain
    (direct sparse solve, residual checked).
    """
    chain = _chain(rules, deck_orders)
    pi = stationary(chain.P)
    rate = pi @ chain.C
    return rate / rate.sum()


def expected_counts(
    rules: Rules,
    checkpoints: np.ndarray,
    deck_orders: tuple[np.ndarray, np.ndarray] | None = None,
    tol: float = 1e-15,
) -> dict[str, np.ndarray]:
    """Exact expected cumulative counts for one token after each checkpoint turn.

    A turn applies ``P`` up to three times; the mass that reaches a
    turn-start state (no doubles pending) has finished its turn.  Expected
    counts accumulate ``x C`` and rolls ``sum(x)`` before every roll.  Once the
    turn-start distribution stops changing (to ``tol``) every later turn adds
    the same amounts, so long horizons are extrapolated exactly.

    Returns
    -------
    dict
        ``counts`` (K, 41), ``events`` (K,) and ``rolls`` (K,), float64.
    """
    chain = _chain(rules, deck_orders)
    cp = np.asarray(checkpoints, dtype=np.int64)
    PT = chain.P.T.tocsr()
    x = np.zeros(chain.P.shape[0])
    x[chain.start] = 1.0
    counts = np.zeros(N_LOCATIONS)
    rolls = 0.0
    out_counts = np.zeros((cp.size, N_LOCATIONS))
    out_rolls = np.zeros(cp.size)
    k, t = 0, 0
    while k < cp.size:
        t += 1
        y, x_next = x, np.zeros_like(x)
        add_counts, add_rolls = np.zeros(N_LOCATIONS), 0.0
        for _ in range(3):
            add_counts += y @ chain.C
            add_rolls += y.sum()
            z = PT @ y
            x_next += np.where(chain.turn_start, z, 0.0)
            y = np.where(chain.turn_start, 0.0, z)
        counts += add_counts
        rolls += add_rolls
        settled = np.abs(x_next - x).sum() < tol
        x = x_next
        while k < cp.size and (cp[k] == t or settled):
            extra = cp[k] - t
            out_counts[k] = counts + extra * add_counts
            out_rolls[k] = rolls + extra * add_rolls
            k += 1
    return {"counts": out_counts, "events": out_counts.sum(axis=1), "rolls": out_rolls}
