"""The rules of one Monopoly roll (DESIGN 3.1), written once as numba functions.

A roll is :func:`throw` (jail, doubles and the move) then :func:`land` (the
landing resolved square by square, card by card, and the tally).  The
scripted kernel calls them roll by roll; :mod:`.tables` runs them over every
token state, throw and card draw to build the simulator's transition tables.
The exact solver (:mod:`.exact`) keeps its own, independent rule code.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .board import CHANCE, COMMUNITY_CHEST, G2J, IN_JAIL, JAIL, N_SQUARES
from .board import next_railway as _NEXT_R
from .board import next_utility as _NEXT_U
from .cards import BACK_3, NEXT_RAILWAY, NEXT_UTILITY, STAY, TO_JAIL

__all__ = ["KIND", "PLAIN", "CC", "CH", "GO_TO_JAIL", "PER_ROLL", "PER_LANDING", "PER_TURN",
           "MAX_COUNTED", "throw", "land"]

PER_ROLL, PER_LANDING, PER_TURN = 0, 1, 2
PLAIN, CC, CH, GO_TO_JAIL = 0, 1, 2, 3
#: Most locations one roll can count (per_landing: CH3, CC3, a card's target, IN_JAIL).
MAX_COUNTED = 4

_NEXT_R = np.ascontiguousarray(_NEXT_R)
_NEXT_U = np.ascontiguousarray(_NEXT_U)
KIND = np.zeros(N_SQUARES, dtype=np.int64)  # square kind: PLAIN, CC, CH or GO_TO_JAIL
KIND[list(COMMUNITY_CHEST)] = CC
KIND[list(CHANCE)] = CH
KIND[G2J] = GO_TO_JAIL


@njit(cache=True, inline="always")
def _destination(card, square):
    """Where a moving card sends a token that drew it on ``square``."""
    if card == NEXT_RAILWAY:
        return _NEXT_R[square]
    if card == NEXT_UTILITY:
        return _NEXT_U[square]
    if card == BACK_3:
        return (square + N_SQUARES - 3) % N_SQUARES
    return card


@njit(cache=True, inline="always")
def _jail_and_doubles(sq, jail_throws, doubles, double, long_jail):
    """Jail and doubles rules of one throw, before the token moves.

    Returns (outcome, square to move from, jail_throws, doubles, double):
    outcome 0 moves the token; 1 keeps it in jail (long strategy, a failed
    throw before the third turn); 2 sends it to jail (third double in a row).
    Leaving jail by a throw earns no extra roll, so ``double`` is cleared then.
    """
    if sq == IN_JAIL:
        if long_jail:
            if not double and jail_throws < 2:
                return 1, sq, jail_throws + 1, doubles, double
            double = False
        sq, jail_throws = JAIL, 0
    if double:
        doubles += 1
        if doubles == 3:
            return 2, sq, jail_throws, 0, double
    return 0, sq, jail_throws, doubles, double


@njit(cache=True, inline="always")
def _move(sq, steps):
    """Square reached from ``sq`` after ``steps`` (any dice size)."""
    sq = sq + steps - N_SQUARES if sq + steps >= N_SQUARES else sq + steps
    return sq % N_SQUARES if sq >= N_SQUARES else sq


@njit(cache=True, inline="always")
def throw(sq, jail_throws, doubles, steps, double, long_jail):
    """Jail, doubles and the move of one throw of ``steps`` (``double``: equal faces).

    The token starts the throw on ``sq`` (``IN_JAIL`` when held) with
    ``doubles`` doubles already rolled this turn.  Returns (square reached, or
    ``IN_JAIL`` when the throw keeps or sends it there, jail_throws, doubles,
    double: whether the throw earns another roll if the landing allows).
    """
    outcome, sq, jail_throws, doubles, double = _jail_and_doubles(
        sq, jail_throws, doubles, double, long_jail)
    if outcome != 0:
        return IN_JAIL, jail_throws, doubles, double
    return _move(sq, steps), jail_throws, doubles, double


@njit(cache=True, inline="always")
def land(sq, double, tally, cards, first, counted):
    """Resolve the landing on ``sq`` (from :func:`throw`) and tally the roll.

    Square by square: G2J -> jail; a card square draws the next card of
    ``cards[first:]`` (whatever its deck: the caller gives them in draw
    order), which may send the token on (back 3 from CH3 reaches CC3, drawn
    again).  The locations the ``tally`` counts for this roll are written to
    ``counted``.  Returns (location, turn ends, cards used, locations counted);
    when ``cards`` runs out, cards used is -1 and the location is the square
    that needed a card.
    """
    n, used = 0, 0
    while sq != IN_JAIL:
        kind = KIND[sq]
        if kind == GO_TO_JAIL:
            sq = IN_JAIL
            break
        if tally == PER_LANDING:
            counted[n] = sq
            n += 1
        if kind == PLAIN:
            break
        if first + used >= cards.shape[0]:
            return sq, False, -1, n
        card = cards[first + used]
        used += 1
        if card == STAY:
            break
        if card == TO_JAIL:
            sq = IN_JAIL
            break
        sq = _destination(card, sq)
    ends = sq == IN_JAIL or not double
    if tally == PER_ROLL or (ends and tally == PER_TURN) or (sq == IN_JAIL and tally == PER_LANDING):
        counted[n] = sq
        n += 1
    return sq, ends, used, n
