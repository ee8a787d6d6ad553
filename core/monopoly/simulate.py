"""Monte Carlo Monopoly: a numba kernel over games x turns x players.

:func:`simulate` plays ``games`` independent games of ``players`` tokens for
``turns`` turns each, all tokens starting on GO and sharing the decks, and
returns cumulative counts per location at the checkpoint turns.  Game ``g``
draws from its own xoshiro256** stream (:mod:`boardsweep.core.rng`), so results are
identical bit for bit for a given seed, whatever else runs.

The same rule code can be driven by a script of dice faces and card codes
instead of the random stream (``scripted=True``); :mod:`.replay` uses it, so a
replay and a simulation can never disagree on the rules.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from ..games import column_groups
from ..rng import seed_key, game_state, shuffle

from .board import N_LOCATIONS
from .kernel import deck_advance, kernel_for
from .rules import Rules
from .step import PER_LANDING, PER_ROLL, PER_TURN, MAX_COUNTED, land, throw
from .tables import card_types, transition_tables

__all__ = ["simulate", "simulate_batch", "simulate_rules", "deck_orders", "PER_ROLL", "PER_LANDING", "PER_TURN"]

# Status codes of a scripted run.
_OK, _OUT_OF_DICE, _OUT_OF_CARDS = 0, 1, 2


@njit(cache=True, nogil=True)
def _scripted(tally, turns, long_jail, script, cards, out_counts, out_totals, status):
    """One token driven by dice faces and card codes, with the rules of
    :mod:`.step`: the cumulative ``counts`` and ``(events, rolls)`` after each
    turn go to ``out_counts[t - 1]`` / ``out_totals[t - 1]``; ``status``
    returns (code, faces used, cards used).

    Turn rules (DESIGN 3.1): in jail with the long strategy, roll: doubles or
    a third turn -> move by the throw and the turn ends; else stay.  Otherwise
    roll while doubles come; a third double goes to jail without moving.
    """
    counts = np.zeros(N_LOCATIONS, dtype=np.int64)
    counted = np.zeros(MAX_COUNTED, dtype=np.int64)
    sq, jail_throws, events, rolls, face, card_no = 0, 0, 0, 0, 0, 0
    for t in range(turns):
        doubles, ends = 0, False
        while not ends:  # one roll per pass
            if face + 1 >= script.shape[0]:
                status[0], status[1], status[2] = _OUT_OF_DICE, face, card_no
                return
            steps, double = script[face] + script[face + 1], script[face] == script[face + 1]
            face += 2
            rolls += 1
            sq, jail_throws, doubles, double = throw(sq, jail_throws, doubles, steps, double,
                                                     long_jail)
            sq, ends, used, n = land(sq, double, tally, cards, card_no, counted)
            if used < 0:
                status[0], status[1], status[2] = _OUT_OF_CARDS, face, card_no
                return
            card_no += used
            for i in range(n):
                counts[counted[i]] += 1
            events += n
        out_counts[t] = counts
        out_totals[t, 0], out_totals[t, 1] = events, rolls
    status[0], status[1], status[2] = _OK, face, card_no


@lru_cache(maxsize=128)
def _deck_arrays(chance: tuple, community: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's deck arguments, made once per pair of decks (a run of a
    few games paid some 20 microseconds a call for them): each Community
    Chest card's type, and each Chance card's type times the Community
    Chest's number of types (:func:`.tables.card_types`).  Read only."""
    cc_kinds, cc_types = card_types(np.asarray(community))
    return cc_types, card_types(np.asarray(chance))[1] * cc_kinds.size


@lru_cache(maxsize=128)
def _deck_advance(chance: tuple, community: tuple) -> np.ndarray:
    """:func:`.kernel.deck_advance` of the decks' sizes, made once per pair of decks.  Read only."""
    return deck_advance(len(community), len(chance))


def _check_checkpoints(checkpoints: np.ndarray, turns: int) -> np.ndarray:
    cp = np.asarray(checkpoints, dtype=np.int64)
    if cp.ndim != 1 or cp.size == 0 or np.any(np.diff(cp) <= 0) or cp[0] < 1 or cp[-1] > turns:
        raise ValueError(
            f"checkpoints must be strictly increasing turn numbers in [1, {turns}], got {cp}"
        )
    return cp


def simulate_rules(
    rules: Rules,
    seed: int | np.random.SeedSequence,
    games: int,
    players: int,
    turns: int,
    checkpoints: np.ndarray | None = None,
    deck_orders: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Play ``games`` games of ``players`` tokens for ``turns`` turns.

    Parameters
    ----------
    rules : Rules
        The rule variant.
    seed : int or SeedSequence
        Root of the run's random streams (game ``g`` uses stream ``g``).
    games, players, turns : int
        The run shape.
    checkpoints : array of int, optional
        Strictly increasing turn numbers at which cumulative results are
        recorded (default: only ``turns``).
    deck_orders : (community_chest, chance) arrays, optional
        With ``shuffled_cycle``, play these fixed deck orders in every game
        instead of the shuffled ones (used to compare with the fixed-order exact
        chain); the dice stream is the one the shuffled run would play.

    Returns
    -------
    dict
        ``counts`` (checkpoint, 41) int64 counted events per location,
        ``events`` (checkpoint,) int64 their total, ``rolls`` (checkpoint,)
        int64 dice rolls, all summed over games and players.
    """
    cp = _check_checkpoints(np.array([turns]) if checkpoints is None else checkpoints, turns)
    community, chance = rules.community_cards, rules.chance_cards
    if deck_orders is not None:
        community = np.asarray(deck_orders[0], dtype=np.int64)
        chance = np.asarray(deck_orders[1], dtype=np.int64)
        if sorted(community) != sorted(rules.community_cards) or sorted(chance) != sorted(
            rules.chance_cards
        ):
            raise ValueError("deck_orders must be permutations of the rules' decks")
    decks = tuple(chance.tolist()), tuple(community.tolist())
    tables = transition_tables(rules.dice_sides, rules.long_jail, rules.tally_code, rules.shuffled, *decks)
    hist = np.zeros((1, cp.size, tables.codes.shape[0]), dtype=np.int64)
    _play_runs(rules, tables, decks, seed_key(seed)[None], games, players, cp, hist, deck_orders is None)
    return _outputs(hist[0], tables)


def _play_runs(rules: Rules, tables, decks: tuple, keys: np.ndarray, games: int, players: int,
               cp: np.ndarray, hist: np.ndarray, shuffle_decks: bool = True) -> None:
    """The kernel variant of ``rules`` on runs ``keys`` (uint64 (runs, 2)),
    each run's code histogram added to ``hist[run]`` (runs, checkpoints, codes)."""
    kernel_for(rules.shuffled, players > 1, tables.n_cols == rules.dice_sides ** 2)(
        keys, games, players, cp, tables.pair_col, tables.width, tables.t1, tables.t2,
        *_deck_arrays(*decks), shuffle_decks, _deck_advance(*decks), hist, np.zeros(4, dtype=np.uint64),
    )


def _outputs(hist: np.ndarray, tables) -> dict[str, np.ndarray]:
    """The game's arrays from code histograms (..., checkpoints, codes):
    ``counts = hist @ codes``, ``events = hist @ codes 1``, ``rolls = hist 1``."""
    return {"counts": hist @ tables.codes, "events": hist @ tables.codes.sum(axis=1),
            "rolls": hist.sum(axis=-1)}


def simulate(
    params: dict,
    seed: int | np.random.SeedSequence,
    run_shape: dict,
    checkpoints: np.ndarray,
) -> dict[str, np.ndarray]:
    """The game interface's ``simulate``: see :func:`simulate_rules`."""
    return simulate_rules(
        Rules.from_params(params), seed, run_shape["games"], run_shape["players"],
        run_shape["turns"], checkpoints,
    )


def simulate_batch(columns: dict, keys: np.ndarray, run_shape: dict,
                   checkpoints: np.ndarray) -> dict[str, np.ndarray]:
    """The game interface's ``simulate_batch``: many runs, run ``i`` bit for
    bit ``simulate(params_i, seed_i, ...)`` with ``keys[i]`` its seed's key.

    The runs are grouped by their rules (each distinct combination of the
    columns' values validated and tabled once); each group is one compiled
    call, whose lanes play the group's runs side by side
    (:func:`.kernel.run_kernel`).

    Parameters
    ----------
    columns : dict
        Per parameter, (its distinct values, each run's index into them).
    keys : ndarray
        uint64 (runs, 2): each run's :func:`boardsweep.core.rng.seed_key`.
    run_shape : dict
        ``games``, ``players``, ``turns`` (shared by the runs).
    checkpoints : ndarray
        Strictly increasing turn numbers, the last at most ``turns``.

    Returns
    -------
    dict of ndarray
        ``counts`` (runs, checkpoints, 41), ``events`` and ``rolls`` (runs, checkpoints).
    """
    cp = _check_checkpoints(checkpoints, run_shape["turns"])
    keys = np.ascontiguousarray(keys, dtype=np.uint64).reshape(-1, 2)
    names = tuple(columns)
    codes = np.stack([np.asarray(columns[n][1], dtype=np.int64).reshape(-1) for n in names], axis=1)
    combos, _, members = column_groups(codes.reshape(len(keys), len(names)))
    out = {"counts": np.zeros((len(keys), cp.size, N_LOCATIONS), dtype=np.int64),
           "events": np.zeros((len(keys), cp.size), dtype=np.int64),
           "rolls": np.zeros((len(keys), cp.size), dtype=np.int64)}
    for g, combo in enumerate(combos):
        rules = Rules.from_params({n: columns[n][0][c] for n, c in zip(names, combo.tolist())})
        rows = members[g]
        decks = tuple(rules.chance_cards.tolist()), tuple(rules.community_cards.tolist())
        tables = transition_tables(rules.dice_sides, rules.long_jail, rules.tally_code, rules.shuffled, *decks)
        hist = np.zeros((rows.size, cp.size, tables.codes.shape[0]), dtype=np.int64)
        _play_runs(rules, tables, decks, keys[rows], run_shape["games"], run_shape["players"], cp, hist)
        for name, values in _outputs(hist, tables).items():
            out[name][rows] = values
    return out


def run_script(rules: Rules, dice: np.ndarray, cards: np.ndarray, turns: int) -> tuple:
    """Drive the kernel from a script: one token, ``turns`` turns at most.

    Returns (counts (41,), events, rolls, turns played, status) where status is
    0 when every turn was played, 1 when the dice ran out, 2 when the cards did.
    The kernel checks the script's length; a turn cut short by it is dropped.
    """
    counts = np.zeros((turns, N_LOCATIONS), dtype=np.int64)
    totals = np.zeros((turns, 2), dtype=np.int64)
    status = np.zeros(3, dtype=np.int64)
    _scripted(rules.tally_code, turns, rules.long_jail, np.asarray(dice, dtype=np.int64),
              np.asarray(cards, dtype=np.int64), counts, totals, status)
    played = int(np.count_nonzero(totals[:, 1]))
    if played == 0:
        return np.zeros(N_LOCATIONS, np.int64), 0, 0, 0, int(status[0])
    last = played - 1
    return counts[last], int(totals[last, 0]), int(totals[last, 1]), played, int(status[0])


def deck_orders(
    rules: Rules, seed: int | np.random.SeedSequence, game: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The (community chest, chance) orders that game ``game`` of a
    ``shuffled_cycle`` run with this seed plays: the kernel's own shuffle of
    the game's stream, replayed."""
    if not rules.shuffled:
        raise ValueError("deck orders exist for shuffled_cycle only")
    rng = np.empty(4, dtype=np.uint64)
    game_state(seed_key(seed), game, rng)
    cc, ch = rules.community_cards.copy(), rules.chance_cards.copy()
    shuffle(rng, cc)
    shuffle(rng, ch)
    return cc, ch
