"""Transition tables of the Monopoly simulator, built by running the rules.

A token's state between rolls is one of :data:`N_STATES` integers: ``3 * square
+ doubles`` (doubles rolled so far this turn) on squares 0..39, or ``120 +
jail_throws`` when held in jail.  A roll is two lookups:

* ``t1[state * n_cols + col]``, ``col`` the throw (the ordered pair of faces
  for dice of up to 8 sides, else their sum and double flag), gives the row of ``t2`` that holds the throw's outcomes, and whether
  the landing draws cards (bit 0);
* ``t2[row + card]`` gives the packed result (:func:`unpack`): the next state
  (times ``n_cols``, ready for the next lookup), which decks advanced, and a
  code: twice the code of what the tally counts, plus 1 if the turn ends.  ``card`` is 0 when
  no card is drawn; otherwise the draw's outcome: with independent decks an
  index in ``[0, width)`` (each card, or Chance then Community Chest card,
  equally often), with ``shuffled_cycle`` ``ch_type * n_cc_types + cc_type``
  of the cards on top of the two decks.

Every entry comes from :func:`.step.throw` and :func:`.step.land`, the rule
code the scripted kernel runs, so the tables and a replay cannot disagree; the
exact solver builds its chain apart from them.  ``codes`` maps a tally code to
the locations it counts (a (code, 41) matrix of counts).  Both tables are
int32, small enough for the first-level cache with dice of up to 8 sides.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit

from .board import IN_JAIL, N_LOCATIONS, N_SQUARES
from .step import CC, CH, KIND, MAX_COUNTED, land, throw

__all__ = ["N_STATES", "Tables", "transition_tables", "unpack", "card_types", "direct_columns", "builders"]

N_STATES = 3 * N_SQUARES + 3
_JAILED = 3 * N_SQUARES
_N_KEYS = N_LOCATIONS * 3 * 3 * 2  # (square reached, jail_throws, doubles, double)
_DIRECT = 64  # most ordered pairs of faces given a column each
USED_BIT, CODE_BIT = 19, 21  # bit positions in a t2 entry: decks advanced (2 bits), code
_USED, _CODE = USED_BIT, CODE_BIT


class Tables(NamedTuple):
    """The simulator's lookup tables for one rule variant (see the module docstring)."""

    pair_col: np.ndarray  # (n^2,) int64: ordered pair of faces -> column (identity: direct)
    t1: np.ndarray  # (N_STATES * n_cols,) int32
    t2: np.ndarray  # (rows,) int32 packed entries
    codes: np.ndarray  # (codes, 41) int64 locations counted per code (odd: the turn ended)
    n_cols: int
    width: int  # outcomes of an independent draw (1 with shuffled_cycle)


def unpack(entry: int, n_cols: int) -> tuple[int, bool, bool, bool, int]:
    """(next state, turn ends, CC deck advanced, CH deck advanced, tally code) of a t2 entry."""
    return ((entry & (1 << _USED) - 1) // n_cols, bool(entry >> _CODE & 1),
            bool(entry >> _USED & 1), bool(entry >> _USED + 1 & 1), entry >> _CODE + 1)


def direct_columns(n: int) -> bool:
    """Whether dice of ``n`` sides give each ordered pair of faces a column of ``t1`` (the kernel skips ``pair_col``)."""
    return n * n <= _DIRECT


def builders() -> tuple:
    """The compiled functions :func:`transition_tables` calls (each calls the rest)."""
    return _throw_keys, _landing_rows


def card_types(deck: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct card codes, each card's index among them) of a deck."""
    kinds, types = np.unique(np.asarray(deck, dtype=np.int64), return_inverse=True)
    return kinds, types.astype(np.int64)


@njit(cache=True, nogil=True)
def _decode(state):
    """(square or IN_JAIL, jail_throws, doubles) of a token state."""
    if state >= _JAILED:
        return IN_JAIL, state - _JAILED, 0
    return state // 3, 0, state % 3


@njit(cache=True, nogil=True)
def _throw_keys(n_cols, long_jail, keys):
    """Key of every (state, throw column) into ``keys`` (N_STATES, ``n_cols``):
    what the throw leaves for the landing."""
    for state in range(N_STATES):
        sq, jail_throws, doubles = _decode(state)
        for col in range(n_cols):
            steps, double = col // 2 + 2, col % 2 == 1
            if double and steps % 2:
                keys[state, col] = -1
                continue
            to, jt, d, dbl = throw(sq, jail_throws, doubles, steps, double, long_jail)
            keys[state, col] = ((to * 3 + jt) * 3 + d) * 2 + dbl


@njit(cache=True, nogil=True)
def _draws(square, j, width, shuffled, cc, ch, cc_kinds, ch_kinds, out):
    """Cards drawn, in order, by outcome ``j`` of a landing on card square ``square``."""
    if shuffled:
        out[0] = ch_kinds[j // cc_kinds.shape[0]] if KIND[square] == CH else cc_kinds[j % cc_kinds.shape[0]]
        out[1] = cc_kinds[j % cc_kinds.shape[0]]
        return
    if KIND[square] == CC:
        out[0] = cc[j // (width // cc.shape[0])]
        return
    back = (square + N_SQUARES - 3) % N_SQUARES
    size = ch.shape[0] * cc.shape[0] if KIND[back] == CC else ch.shape[0]
    i = j // (width // size)
    if KIND[back] == CC:
        out[0], out[1] = ch[i // cc.shape[0]], cc[i % cc.shape[0]]
    else:
        out[0] = ch[i]


@njit(cache=True, nogil=True)
def _outcome(key, tally, cards, counted):
    """(next state, ends, cards used, counted locations as one integer) of a landing key."""
    double, d = key % 2 == 1, key // 2 % 3
    jail_throws, to = key // 6 % 3, key // 18
    final, ends, used, n = land(to, double, tally, cards, 0, counted)
    code = 0
    for i in range(n):
        code = code * (N_LOCATIONS + 1) + counted[i] + 1
    if final == IN_JAIL:
        return _JAILED + jail_throws, True, used, code
    return 3 * final + (0 if ends else d), ends, used, code


@njit(cache=True, nogil=True)
def _landing_rows(keys, tally, width, shuffled, cc, ch, cc_kinds, ch_kinds, nxt, flags, counted, draws, work):
    """Outcomes of every landing key over every card outcome (``n_out``, the
    columns of ``nxt``): next state ``nxt``, ``flags`` (ends, CC advanced, CH
    advanced as bits 0..2), ``counted`` locations; and whether the key
    ``draws`` cards at all.  ``work``: (counted buffer, cards drawn, keys
    present), zeroed.  Every array comes from :func:`_landing_arrays`."""
    n_out = nxt.shape[1]
    buf, cards, present = work  # present: a mask, not np.unique (sorting took seconds to compile)
    for state in range(keys.shape[0]):  # not keys.ravel(): one numba overload less to compile
        for col in range(keys.shape[1]):
            if keys[state, col] >= 0:
                present[keys[state, col]] = True
    for key in range(_N_KEYS):
        if not present[key]:
            continue
        state, ends, used, code = _outcome(key, tally, cards[:0], buf)
        draws[key] = used < 0
        square = key // 18
        for j in range(n_out if draws[key] else 1):
            if draws[key]:
                _draws(square, j, width, shuffled, cc, ch, cc_kinds, ch_kinds, cards)
                state, ends, used, code = _outcome(key, tally, cards, buf)
            advanced_ch = used >= 1 and KIND[square] == CH
            advanced_cc = used >= 2 or (used == 1 and KIND[square] == CC)
            nxt[key, j], counted[key, j] = state, code
            flags[key, j] = ends + 2 * advanced_cc + 4 * advanced_ch


def _landing_arrays(n_out: int) -> tuple:
    """:func:`_landing_rows`' arrays, zeroed, made with numpy (numba then
    compiles no allocation for them): ``nxt``, ``flags``, ``counted`` (keys,
    ``n_out``) int64, ``draws`` (keys,) bool, and its work arrays."""
    return (*np.zeros((3, _N_KEYS, n_out), dtype=np.int64), np.zeros(_N_KEYS, dtype=np.bool_),
            (np.zeros(MAX_COUNTED, dtype=np.int64), np.zeros(2, dtype=np.int64), np.zeros(_N_KEYS, dtype=np.bool_)))


def _counts_matrix(encoded: np.ndarray) -> np.ndarray:
    """(codes, 41) counts of the locations each encoded counted-list holds."""
    out = np.zeros((encoded.size, N_LOCATIONS), dtype=np.int64)
    for row, code in enumerate(encoded.tolist()):
        while code:
            code, loc = divmod(code, N_LOCATIONS + 1)
            out[row, loc - 1] += 1
    return out


@lru_cache(maxsize=128)
def transition_tables(n: int, long_jail: bool, tally: int, shuffled: bool,
                      chance: tuple, community: tuple) -> Tables:
    """The :class:`Tables` of a rule variant (decks as tuples of card codes)."""
    ch, cc = np.array(chance, dtype=np.int64), np.array(community, dtype=np.int64)
    width = 1 if shuffled else int(np.lcm.reduce([len(cc), len(ch), len(ch) * len(cc)]))
    keys = np.zeros((N_STATES, 4 * n - 2), dtype=np.int64)
    _throw_keys(keys.shape[1], long_jail, keys)
    a, b = np.divmod(np.arange(n * n), n)
    pair_col = (a + b) * 2 + (a == b)
    if direct_columns(n):  # one column per ordered pair: the kernel skips pair_col
        keys, pair_col = np.ascontiguousarray(keys[:, pair_col]), np.arange(n * n)  # C order: one signature
    n_cols = keys.shape[1]
    cc_kinds, ch_kinds = card_types(cc)[0], card_types(ch)[0]
    arrays = _landing_arrays(cc_kinds.size * ch_kinds.size if shuffled else width)
    _landing_rows(keys, tally, width, shuffled, cc, ch, cc_kinds, ch_kinds, *arrays)
    nxt, flags, counted, draws = arrays[:4]
    present = np.zeros(_N_KEYS, dtype=np.bool_)
    present[keys[keys >= 0]] = True
    # t2's entries: each present key's outcomes in key order, all of them where it draws, else the first
    rows = present[:, None] & (draws[:, None] | (np.arange(nxt.shape[1]) == 0))
    nxt, flags, counted = nxt[rows], flags[rows], counted[rows]
    # sorted, with 0 (what the outcomes left unfilled held, which numbered the codes before);
    # the inverse by binary search (return_inverse argsorts: 10x slower)
    encoded = np.unique(np.append(counted, 0))
    code = 2 * np.searchsorted(encoded, counted) + (flags & 1)
    if nxt.max() * n_cols >= 1 << _USED or code.max() >= 1 << 31 - _CODE:
        raise ValueError(f"dice of {n} sides: the transition tables overflow int32")
    t2 = (nxt * n_cols) | ((flags >> 1) << _USED) | (code << _CODE)
    used = np.flatnonzero(present)
    sizes = np.where(draws[used], rows.shape[1], 1)
    offsets = np.zeros(_N_KEYS, dtype=np.int64)
    offsets[used] = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    t1 = np.where(keys >= 0, 2 * offsets[np.maximum(keys, 0)] + draws[np.maximum(keys, 0)], 0)
    return Tables(pair_col.astype(np.int64), t1.reshape(-1).astype(np.int32),
                  t2.astype(np.int32), np.repeat(_counts_matrix(encoded), 2, axis=0), n_cols, width)
