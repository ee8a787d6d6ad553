"""The Monopoly simulator's kernel: table-driven rolls, games interleaved.

Up to :data:`LANES` games are played side by side, one roll of each per pass
of the inner loop, so that their independent chains of table lookups overlap
in the processor.  A roll draws one 64-bit word of its game's xoshiro256**
stream (:mod:`boardsweep.core.rng`): the high half picks the ordered pair of
faces, the low half an independent card draw; it then takes two lookups in
the transition tables of :mod:`.tables` and adds one to the tally code it
produced.  Per game and checkpoint the code histogram is added to
``out_hist``; the caller turns it into counted locations.

Games are played in order and handed to a lane as one finishes; a block of
rolls runs without any test while no lane can reach its next checkpoint (a
roll ends at most one player's turn), so the inner loop has no branch that
depends on the game.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit, uint64

from boardsweep.core.rng import below, game_state, shuffle, xoshiro

__all__ = ["LANES", "run_kernel"]

LANES = 8
_MASK32 = 0xFFFFFFFF
_LOW = np.uint64(0xFFFFFFFF)


@njit(cache=True)
def _start(lane, game, key, cc_types, ch_types, shuffle_decks, rng, cc, ch, tmp):
    """Seed ``lane`` with ``game``: its stream, and with shuffled decks its orders
    (as card types; the shuffle consumes the stream even for fixed orders)."""
    game_state(key, game, tmp)
    if cc.shape[1] > 0:
        cc[lane, :] = cc_types
        ch[lane, :] = ch_types
        shuffle(tmp, cc[lane])
        shuffle(tmp, ch[lane])
        if not shuffle_decks:
            cc[lane, :] = cc_types
            ch[lane, :] = ch_types
    for i in range(4):
        rng[i, lane] = tmp[i]


@njit(cache=True)
def _swap(a, b, rng, rows, scalars):
    """Exchange the complete states of lanes ``a`` and ``b``: columns of
    ``rng``, rows of the 2-d arrays ``rows``, entries of the 1-d ``scalars``."""
    for i in range(rng.shape[0]):
        rng[i, a], rng[i, b] = rng[i, b], rng[i, a]
    for arr in rows:
        for j in range(arr.shape[1]):
            arr[a, j], arr[b, j] = arr[b, j], arr[a, j]
    for arr in scalars:
        arr[a], arr[b] = arr[b], arr[a]


@lru_cache(maxsize=None)
def run_kernel(shuffled: bool, several: bool, direct: bool):
    """The kernel compiled for a deck policy, for one or several players and
    for a throw column that is the pair of faces itself (``direct``) or looked
    up (closure constants: the branches that do not apply vanish)."""

    @njit(cache=True, inline="always")
    def _roll(lane, players, n_pairs, pair_col, width, t1, t2, rng, base, hist, ended, seat,
              player, cc, ch, at_cc, at_ch):
        """One roll of the game in ``lane``: draw, two lookups, tally, next state."""
        x, a, b, c, d = xoshiro(rng[0, lane], rng[1, lane], rng[2, lane], rng[3, lane])
        rng[0, lane], rng[1, lane], rng[2, lane], rng[3, lane] = a, b, c, d
        col = below(x >> uint64(32), n_pairs)
        if not direct:
            col = pair_col[col]
        if shuffled:
            card = ch[lane, at_ch[lane]] + cc[lane, at_cc[lane]]
        else:
            card = below(x & _LOW, width)
        e1 = t1[base[lane] + col]
        e2 = t2[(e1 >> 1) + (card & -(e1 & 1))]
        hist[lane, e2 >> 40] += 1
        ends = (e2 >> 32) & 1
        ended[lane] += ends
        nxt = e2 & _MASK32
        if shuffled:
            i = at_cc[lane] + ((e2 >> 33) & 1)
            at_cc[lane] = 0 if i == cc.shape[1] else i
            i = at_ch[lane] + ((e2 >> 34) & 1)
            at_ch[lane] = 0 if i == ch.shape[1] else i
        if several:
            p = player[lane]
            seat[lane, p] = nxt
            p += ends
            p = 0 if p == players else p
            player[lane] = p
            nxt = seat[lane, p]
        base[lane] = nxt

    @njit(cache=True)
    def _run(key, games, players, checkpoints, pair_col, width, t1, t2, cc_types, ch_types,
             n_cc_types, shuffle_decks, out_hist):
        """Play the run; add each game's tally-code histogram at turn
        ``checkpoints[k]`` to ``out_hist[k]``."""
        n_pairs = pair_col.shape[0]
        lanes = min(LANES, games)
        deck = cc_types.shape[0] if shuffled else 0
        rng = np.zeros((4, LANES), dtype=np.uint64)
        tmp = np.zeros(4, dtype=np.uint64)
        hist = np.zeros((LANES, out_hist.shape[1]), dtype=np.int64)
        seat = np.zeros((LANES, players), dtype=np.int64)  # each player's state * n_cols
        cc = np.zeros((LANES, deck), dtype=np.int64)
        ch = np.zeros((LANES, ch_types.shape[0] if shuffled else 0), dtype=np.int64)
        base = np.zeros(LANES, dtype=np.int64)  # the rolling token's state * n_cols
        player = np.zeros(LANES, dtype=np.int64)
        ended = np.zeros(LANES, dtype=np.int64)  # player turns ended
        target = np.zeros(LANES, dtype=np.int64)
        k = np.zeros(LANES, dtype=np.int64)
        at_cc = np.zeros(LANES, dtype=np.int64)
        at_ch = np.zeros(LANES, dtype=np.int64)
        ch_scaled = ch_types * n_cc_types
        for lane in range(lanes):
            _start(lane, lane, key, cc_types, ch_scaled, shuffle_decks, rng, cc, ch, tmp)
            target[lane] = checkpoints[0] * players
        next_game = lanes
        while lanes > 0:
            block = target[0] - ended[0]
            for lane in range(1, lanes):
                block = min(block, target[lane] - ended[lane])
            if lanes == LANES:  # a constant trip count, unrolled
                for _ in range(block):
                    for lane in range(LANES):
                        _roll(lane, players, n_pairs, pair_col, width, t1, t2, rng, base, hist,
                              ended, seat, player, cc, ch, at_cc, at_ch)
            else:
                for _ in range(block):
                    for lane in range(lanes):
                        _roll(lane, players, n_pairs, pair_col, width, t1, t2, rng, base, hist,
                              ended, seat, player, cc, ch, at_cc, at_ch)
            lane = 0
            while lane < lanes:
                if ended[lane] < target[lane]:
                    lane += 1
                    continue
                out_hist[k[lane]] += hist[lane]
                k[lane] += 1
                if k[lane] < checkpoints.shape[0]:
                    target[lane] = checkpoints[k[lane]] * players
                    continue
                if next_game < games:
                    _start(lane, next_game, key, cc_types, ch_scaled, shuffle_decks, rng, cc, ch, tmp)
                    next_game += 1
                else:
                    lanes -= 1
                    _swap(lane, lanes, rng, (hist, seat, cc, ch),
                          (base, player, ended, target, k, at_cc, at_ch))
                    continue
                hist[lane, :] = 0
                seat[lane, :] = 0
                base[lane] = player[lane] = ended[lane] = k[lane] = at_cc[lane] = at_ch[lane] = 0
                target[lane] = checkpoints[0] * players

    return _run
