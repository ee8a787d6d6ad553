"""The Monopoly simulator's kernel: table-driven rolls, games interleaved.

Up to :data:`LANES` games are played side by side.  A roll draws one 64-bit
word of its game's xoshiro256** stream (:mod:`boardsweep.core.rng`): the high
half picks the ordered pair of faces, the low half an independent card draw;
it then takes two lookups in the transition tables of :mod:`.tables` and adds
one to the tally code it produced.  Per game and checkpoint the code
histogram is added to ``out_hist``; the caller turns it into counted
locations.

The rolls are played in batches of up to :data:`BATCH` rolls of every lane.
A batch first draws its words, the lanes side by side (:func:`_draw`: the
same arithmetic on every lane, which the compiler turns into vector
instructions, 8 streams at once with AVX-512), keeping only the throw column
and the card draw of each; then it plays the lookups, one roll of each lane
per pass of the inner loop, so that the lanes' independent chains of table
lookups overlap in the processor.  With fewer than :data:`_FEW` lanes at play
(a run of a few games, or its last games) each roll draws its own word
instead: a batch would then wait for its draws, then for its lookups, where
roll after roll lets the processor overlap them.  Each stream is drawn exactly
as one roll after the other would draw it: the results do not depend on the
batching.

Games are played in order and handed to a lane as one finishes; a block of
rolls runs without any test while no lane can reach its next checkpoint (a
roll ends at most one player's turn), so the inner loops have no branch that
depends on the game.  Once a lane is within :data:`BATCH` turns of its
checkpoint, the lanes play whole batches and each roll's tally code is kept:
a lane's histogram at its checkpoint is the batch's end less the rolls after
the one that ended the checkpoint's turn (:func:`_tally`).  Lanes drift apart
(doubles), so blocks cut at every lane's checkpoint were a few rolls long:
with 79 checkpoints (the log ones and 64 equal batches) the kernel took 1.3x
the time of one checkpoint, with 500 turns 5.4x; whole batches, 1.2x and
about 2.3x.  Every index computed from data is cast to uint64: numba
then leaves out its negative-index wrap-around (a sign test and an add per
lookup; leaving it out doubled the speed of the shuffled-deck variants).

:func:`run_kernel` compiles the kernel for a deck policy, for one or several
players and for a throw column that is the pair of faces itself (``direct``)
or looked up, as closure constants: the branches that do not apply vanish.
The closure holds only these three booleans, so numba's on-disk cache finds
it again in a new process (a closure over a jitted function gets a new cache
key in every process, and is compiled again each time).  Each variant is
named apart (:func:`variant_name`), so it has cache files of its own: numba
updates a function's cache index by reading it, adding an entry and writing
it back, and numbers the new entry's data file from what it read, so two
processes saving two variants of one function at once could leave one
variant's entry naming the other's code.  Every other kernel function
compiles for one signature only, which two processes save alike.
"""

from __future__ import annotations

import threading
from functools import lru_cache

import numpy as np
from numba import njit, uint64

from ..rng import below, game_state, shuffle, xoshiro

from .rules import Rules
from .tables import CODE_BIT as _CODE_BIT
from .tables import USED_BIT as _USED_BIT
from .tables import builders as _table_builders
from .tables import direct_columns, transition_tables

__all__ = ["LANES", "BATCH", "deck_advance", "kernel_for", "run_kernel", "variant_name", "variant",
           "compiled_code", "compile_code"]

LANES = 32  # games played side by side: 4 vectors of 8 streams, enough loads in flight
BATCH = 16  # rolls of every lane drawn at once
_FEW = 8  # with fewer lanes at play, each roll draws its own word (no vector to fill)
_LOW = np.uint64(0xFFFFFFFF)
_STATE, _USED, _CODE = (1 << _USED_BIT) - 1, _USED_BIT, _CODE_BIT


@njit(cache=True, nogil=True)
def _start(lane, game, key, cc_types, ch_types, shuffle_decks, rng, dk, tmp):
    """Seed ``lane`` with ``game``: its stream, and with shuffled decks the card
    index ``dk[lane, i_cc * n_ch + i_ch]`` of every pair of deck positions (the
    shuffle consumes the stream even when fixed orders are played)."""
    game_state(key, game, tmp)
    if dk.shape[1] > 0:
        cc, ch = cc_types.copy(), ch_types.copy()
        shuffle(tmp, cc)
        shuffle(tmp, ch)
        if not shuffle_decks:
            cc, ch = cc_types, ch_types
        for i in range(cc.shape[0]):
            for j in range(ch.shape[0]):
                dk[lane, i * ch.shape[0] + j] = ch[j] + cc[i]
    for i in range(4):
        rng[i, lane] = tmp[i]


@njit(cache=True, nogil=True)
def _begin(lane, game, games, keys, run, cc_types, ch_types, shuffle_decks, rng, dk, tmp):
    """Lane ``lane`` starts game ``game`` of the runs' one sequence
    ``G = r * games + g``: game ``g`` of run ``r = run[lane]``, from its stream
    ``game_state(keys[r], g)`` (:func:`_start`).  A game plays that stream in
    whichever lane and beside whichever games, so each run's histogram is the
    integers it is played alone, and runs of a game or two fill the lanes.
    Compiled apart, not inlined: inlined twice into the kernel, the one-player
    shuffled-deck variants ran 5-10% slower (``benchmarks/README.md``)."""
    run[lane] = game // games
    _start(lane, game - run[lane] * games, keys[run[lane]], cc_types, ch_types, shuffle_decks, rng, dk, tmp)


def deck_advance(n_cc: int, n_ch: int) -> np.ndarray:
    """Deck position ``i_cc * n_ch + i_ch`` after a roll, at ``4 * position + used``
    (``used``: bit 0 the Community Chest deck advanced, bit 1 Chance); int16.

    Built with numpy, not compiled: one numba function less to compile on a first run.
    """
    i, j, used = np.meshgrid(np.arange(n_cc), np.arange(n_ch), np.arange(4), indexing="ij")
    return (((i + (used & 1)) % n_cc) * n_ch + (j + (used >> 1)) % n_ch).ravel().astype(np.int16)


@njit(cache=True, inline="always")
def _count_ended(hist, lanes, ended, out_hist, run, target, k, checkpoints, players):
    """Player turns each lane's game has ended (the odd codes of its histogram)
    into ``ended[:lanes]``; a lane whose block's last roll ended its checkpoint's
    turn adds its histogram to ``out_hist[run[lane], k]`` and moves on."""
    for lane in range(lanes):
        total = 0
        for code in range(1, hist.shape[1], 2):
            total += hist[lane, code]
        ended[lane] = total
        if total == target[lane]:
            _add_hist(out_hist[run[lane]], k[lane], hist, lane)
            k[lane] += 1
            if k[lane] < checkpoints.shape[0]:
                target[lane] = checkpoints[k[lane]] * players


@njit(cache=True, inline="always")
def _tally(rolls, lanes, cols, hist, out_hist, run, ended, target, k, checkpoints, players):
    """After a batch of ``rolls`` rolls (codes in ``cols``, :func:`_play`):
    each lane's ended player turns, and the histogram at each checkpoint the
    batch crossed, ``hist`` less the rolls after the one that ended the
    checkpoint's turn, added to ``out_hist[run[lane], k]``.  A lane past its
    last checkpoint stops there (``k`` = the checkpoints' count)."""
    for lane in range(lanes):
        for i in range(rolls):
            ended[lane] += cols[i * LANES + lane] & 1  # no branch on the code: half of them are odd
            if ended[lane] != target[lane]:  # true until the checkpoint's turn ends (its target then moves on)
                continue
            _add_hist(out_hist[run[lane]], k[lane], hist, lane)
            for j in range(i + 1, rolls):
                out_hist[run[lane], k[lane], cols[j * LANES + lane]] -= 1
            k[lane] += 1
            if k[lane] == checkpoints.shape[0]:
                break
            target[lane] = checkpoints[k[lane]] * players


@njit(cache=True, inline="always")
def _draw(s0, s1, s2, s3, rolls, lanes, n_pairs, width, cols, cards, shuffled):
    """Draw ``rolls`` words of each of the first ``lanes`` streams (state words
    ``s0..s3[lane]``): roll ``i`` of lane ``lane`` gets the throw column
    ``cols[i * LANES + lane]`` from the high half of its word and, with
    independent decks, the card draw ``cards[i * LANES + lane]`` from the low half."""
    for i in range(rolls):
        for lane in range(lanes):  # the same arithmetic on every lane: vector instructions
            x, a, b, c, d = xoshiro(s0[lane], s1[lane], s2[lane], s3[lane])
            s0[lane], s1[lane], s2[lane], s3[lane] = a, b, c, d
            cols[i * LANES + lane] = below(x >> uint64(32), n_pairs)
            if not shuffled:
                cards[i * LANES + lane] = below(x & _LOW, width)


@njit(cache=True, inline="always")
def _roll(lane, col, card, pair_col, t1, t2, base, hist, wait, head, dk, deck, adv,
          shuffled, several, direct):
    """One roll of the game in ``lane`` from its drawn ``col`` and ``card``:
    two lookups, tally, next state; returns the tally code (odd: a player's
    turn ended).

    ``shuffled``, ``several`` and ``direct`` are constants of the calling
    kernel (:func:`run_kernel`): inlined there, the branches that do not
    apply vanish.

    With several players, the players waiting for their turn form a queue
    (``wait[lane]`` from ``head[lane]``): at a turn's end the token just
    played joins it and the one at its head rolls next, without a branch.
    """
    if not direct:
        col = pair_col[uint64(col)]
    if shuffled:
        card = np.int64(dk[lane, uint64(deck[lane])])
    e1 = np.int64(t1[uint64(base[lane] + col)])
    e2 = np.int64(t2[uint64((e1 >> 1) + (card & -(e1 & 1)))])
    code = e2 >> _CODE
    hist[lane, uint64(code)] += 1
    nxt = e2 & _STATE
    if shuffled:
        deck[lane] = adv[uint64(4 * deck[lane] + ((e2 >> _USED) & 3))]
    if several:
        ends = code & 1
        h = head[lane]
        waiting = wait[lane, uint64(h)]
        wait[lane, uint64(h)] = nxt if ends else waiting
        h += ends
        head[lane] = 0 if h == wait.shape[1] else h
        nxt = waiting if ends else nxt
    base[lane] = nxt
    return code


@njit(cache=True, inline="always")
def _play(rolls, lanes, n_pairs, width, pair_col, t1, t2, rng, cols, cards, base, hist, wait,
          head, dk, deck, adv, shuffled, several, direct):
    """Play ``rolls`` rolls of each of the first ``lanes`` lanes, batch by
    batch (with fewer lanes than a vector holds, :data:`_FEW`, each roll
    draws its own word).  Roll ``i`` of a batch leaves its tally code at
    ``cols[i * LANES + lane]`` (:func:`_tally` reads them)."""
    if lanes < _FEW:
        for r in range(rolls):
            at = (r % BATCH) * LANES
            for lane in range(lanes):
                x, a, b, c, d = xoshiro(rng[0, lane], rng[1, lane], rng[2, lane], rng[3, lane])
                rng[0, lane], rng[1, lane], rng[2, lane], rng[3, lane] = a, b, c, d
                cols[at + lane] = _roll(lane, below(x >> uint64(32), n_pairs), below(x & _LOW, width), pair_col,
                                        t1, t2, base, hist, wait, head, dk, deck, adv, shuffled, several, direct)
        return
    s0, s1, s2, s3 = rng[0], rng[1], rng[2], rng[3]
    done = 0
    while done < rolls:
        batch = min(BATCH, rolls - done)
        _draw(s0, s1, s2, s3, batch, lanes, n_pairs, width, cols, cards, shuffled)
        for i in range(batch):
            for lane in range(lanes):
                cols[i * LANES + lane] = _roll(lane, cols[i * LANES + lane], cards[i * LANES + lane],
                                               pair_col, t1, t2, base, hist, wait, head, dk, deck, adv,
                                               shuffled, several, direct)
        done += batch


@njit(cache=True, inline="always")
def _retire(lane, last, rng, hist, wait, dk, base, head, deck, ended, target, k, run):
    """Lane ``lane``'s run is over: lane ``last`` (the last one still playing) takes its place."""
    for i in range(4):  # loops, not a jitted helper: no function of its own to compile (one per dtype)
        rng[i, lane], rng[i, last] = rng[i, last], rng[i, lane]
    for j in range(hist.shape[1]):
        hist[lane, j], hist[last, j] = hist[last, j], hist[lane, j]
    for j in range(wait.shape[1]):
        wait[lane, j], wait[last, j] = wait[last, j], wait[lane, j]
    for j in range(dk.shape[1]):
        dk[lane, j], dk[last, j] = dk[last, j], dk[lane, j]
    for arr in (base, head, deck, ended, target, k, run):
        arr[lane], arr[last] = arr[last], arr[lane]


@njit(cache=True, inline="always")
def _reset(lane, hist, wait, base, head, deck, ended, k, target, first):
    """Lane ``lane`` starts a new game: its histogram, queue and counters back
    to 0, its target the first checkpoint's player turns (``first``)."""
    hist[lane, :] = 0
    wait[lane, :] = 0
    base[lane] = head[lane] = deck[lane] = ended[lane] = k[lane] = 0
    target[lane] = first


@njit(cache=True, inline="always")
def _add_hist(out_hist, at, hist, lane):
    """Add lane ``lane``'s code histogram to ``out_hist[at]``."""
    for code in range(out_hist.shape[1]):  # a loop: an array expression compiles its error messages
        out_hist[at, code] += hist[lane, code]


@njit(cache=True, inline="always")
def _zeroed(arr):
    """``arr`` (1-d) set to 0 by a loop: ``np.zeros`` compiles an allocation
    and a fill of its own for every data type and dimension (about 0.35 s of
    a first run for the kernel's arrays), ``np.empty`` only the allocation."""
    for i in range(arr.shape[0]):
        arr[i] = 0
    return arr


@njit(cache=True, inline="always")
def _zeroed2(arr):
    """``arr`` (2-d) set to 0 by a loop (see :func:`_zeroed`)."""
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i, j] = 0
    return arr


_MADE = threading.Lock()


def kernel_for(shuffled: bool, several: bool, direct: bool):
    """:func:`run_kernel`, made once per process even when threads ask for
    it at once (one dispatcher, compiled once)."""
    with _MADE:
        return run_kernel(shuffled, several, direct)


@lru_cache(maxsize=None)
def run_kernel(shuffled: bool, several: bool, direct: bool):
    """The kernel compiled for these closure constants (see the module docstring)."""

    def _run(keys, games, players, checkpoints, pair_col, width, t1, t2, cc_types, ch_scaled,
             shuffle_decks, adv, out_hist, tmp):
        """Play ``games`` games of each run ``r`` (key ``keys[r]``, the runs' games one
        sequence: :func:`_begin`); add each game's code histogram at turn ``checkpoints[k]``
        to ``out_hist[r, k]``.  ``adv``: :func:`deck_advance` of the decks' sizes; ``ch_scaled``:
        the Chance cards' types times the Community Chest's types; ``tmp``: a stream's scratch
        state, 4 words (from numpy: the kernel's own arrays are made here, where the compiler knows
        they share no memory with any other; a state passed in cost runs of few games a fifth)."""
        n_pairs = pair_col.shape[0]
        total = keys.shape[0] * games
        lanes = LANES if total > LANES else total  # not min(): one overload less to compile
        n_decks = cc_types.shape[0] * ch_scaled.shape[0] if shuffled else 0
        rng = np.empty((4, LANES), dtype=np.uint64)  # empty: each lane's row written before it is read
        hist = _zeroed2(np.empty((LANES, out_hist.shape[2]), dtype=np.int64))  # a lane's codes side by side
        wait = _zeroed2(np.empty((LANES, players - 1 if players > 1 else 1), dtype=np.int64))  # states * n_cols
        dk = np.empty((LANES, n_decks), dtype=np.int16)  # small: 32 lanes' decks in the L1 cache
        cols = np.empty(BATCH * LANES, dtype=np.int32)  # int32: 16 columns to a vector store
        cards = np.empty(BATCH * LANES, dtype=np.int32)
        base = _zeroed(np.empty(LANES, dtype=np.int64))  # the rolling token's state * n_cols
        head = _zeroed(np.empty(LANES, dtype=np.int64))
        deck = _zeroed(np.empty(LANES, dtype=np.int64))
        ended = _zeroed(np.empty(LANES, dtype=np.int64))  # player turns ended, their next target, the next checkpoint
        target = np.empty(LANES, dtype=np.int64)
        k, run = _zeroed(np.empty(LANES, dtype=np.int64)), _zeroed(np.empty(LANES, dtype=np.int64))  # run: the lane's
        for lane in range(lanes):
            _begin(lane, lane, games, keys, run, cc_types, ch_scaled, shuffle_decks, rng, dk, tmp)
            target[lane] = checkpoints[0] * players
        next_game = lanes
        n_cp = checkpoints.shape[0]
        while lanes > 0:
            block = target[0] - ended[0]
            for lane in range(1, lanes):
                block = min(block, target[lane] - ended[lane])
            far = block > BATCH  # no lane near its checkpoint: play the fewest turns any still needs
            _play(block if far else BATCH, lanes, n_pairs, width, pair_col, t1, t2, rng, cols, cards, base, hist,
                  wait, head, dk, deck, adv, shuffled, several, direct)
            if far:
                _count_ended(hist, lanes, ended, out_hist, run, target, k, checkpoints, players)
            else:  # one batch, its checkpoints found roll by roll
                _tally(BATCH, lanes, cols, hist, out_hist, run, ended, target, k, checkpoints, players)
            lane = np.int64(0)  # not a literal 0: _start compiles for int64 lanes only
            while lane < lanes:
                if k[lane] < n_cp:
                    lane += 1
                    continue
                if next_game < total:
                    _begin(lane, next_game, games, keys, run, cc_types, ch_scaled, shuffle_decks, rng, dk, tmp)
                    next_game += 1
                else:
                    lanes -= 1
                    _retire(lane, lanes, rng, hist, wait, dk, base, head, deck, ended, target, k, run)
                    continue
                _reset(lane, hist, wait, base, head, deck, ended, k, target, checkpoints[0] * players)

    _run.__qualname__ = variant_name(shuffled, several, direct)  # numba's cache files are named after it
    return njit(cache=True, nogil=True)(_run)


def variant_name(shuffled: bool, several: bool, direct: bool) -> str:
    """The qualified name of a variant's kernel, and so of its files in numba's cache."""
    return "run_kernel.<locals>._run_" + "_".join((("independent", "shuffled")[shuffled], ("one", "several")[several],
                                                   ("columns", "direct")[direct]))


def variant(rules: Rules, players: int) -> tuple[bool, bool, bool]:
    """The closure constants of the kernel that plays ``rules`` with ``players`` tokens:
    (shuffled decks, several players, throw column = pair of faces)."""
    return rules.shuffled, players > 1, direct_columns(rules.dice_sides)


def compiled_code(params: dict, run_shape: dict) -> dict[tuple, bool]:
    """The game interface's ``extras["compiled_code"]``: the units of numba
    code a simulation at ``params`` runs (the tables' builders, its kernel
    variant), each with whether numba's disk cache holds it.  Each of their
    functions compiles for one signature, so a cache index that loads
    non-empty holds it (numba drops an index when its source or numba's
    version changed)."""
    key = variant(Rules.from_params(params), run_shape["players"])
    return {_TABLES: all(_in_cache(f) for f in _table_builders()), ("kernel", *key): _in_cache(run_kernel(*key))}


def compile_code(unit: tuple) -> None:
    """The game interface's ``extras["compile_code"]``: compile a unit of
    :func:`compiled_code` here (numba writes its disk cache), by running it
    on a small case with the argument types of a simulation (no game played)."""
    if unit == _TABLES:
        rules = Rules()
        transition_tables(2, False, 0, False, tuple(rules.chance_cards.tolist()), tuple(rules.community_cards.tolist()))
        return
    _, shuffled, several, direct = unit
    ints, words = np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.uint64)
    run_kernel(shuffled, several, direct)(np.zeros((1, 2), dtype=np.uint64), 0, 2 if several else 1,
                                          np.ones(1, dtype=np.int64), ints, 1, np.zeros(1, dtype=np.int32),
                                          np.zeros(1, dtype=np.int32), ints, ints, True, np.zeros(4, dtype=np.int16),
                                          np.zeros((1, 1, 2), dtype=np.int64), words)


#: The tables' builders as a unit of compiled code (:func:`compiled_code`).
_TABLES = ("tables",)


def _in_cache(dispatcher) -> bool:
    """Whether numba's disk cache holds compiled code of ``dispatcher`` (numba's
    private interface: where it has changed, True, and the code is compiled where used)."""
    try:
        return bool(dispatcher._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - any change of numba's internals
        return True
