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

import numpy as np
from functools import lru_cache

from numba import njit

from boardsweep.core.rng import below, game_state, seed_key, shuffle, xoshiro

from .board import CHANCE, COMMUNITY_CHEST, G2J, IN_JAIL, JAIL, N_LOCATIONS, N_SQUARES
from .board import next_railway as _NEXT_R
from .board import next_utility as _NEXT_U
from .cards import BACK_3, NEXT_RAILWAY, NEXT_UTILITY, STAY, TO_JAIL
from .rules import Rules

__all__ = ["simulate", "simulate_rules", "deck_orders", "PER_ROLL", "PER_LANDING", "PER_TURN"]

PER_ROLL, PER_LANDING, PER_TURN = 0, 1, 2

_NEXT_R = np.ascontiguousarray(_NEXT_R)
_NEXT_U = np.ascontiguousarray(_NEXT_U)
_KIND = np.zeros(N_SQUARES, dtype=np.int64)  # 0 plain, 1 community chest, 2 chance, 3 G2J
_KIND[list(COMMUNITY_CHEST)] = 1
_KIND[list(CHANCE)] = 2
_KIND[G2J] = 3

# Status codes of a scripted run.
_OK, _OUT_OF_DICE, _OUT_OF_CARDS = 0, 1, 2
_PLAIN, _CC, _CH, _G2J = 0, 1, 2, 3


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
def _throw(sq, jail_throws, doubles, double, long_jail):
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


@lru_cache(maxsize=None)
def _kernel(tally: int, mode: str):
    """The kernel compiled for one tally convention and one mode: ``"table"``
    (independent draws, every landing resolved by one lookup), ``"cards"``
    (decks drawn in order, shuffled_cycle) or ``"scripted"`` (dice and cards
    from a script).  These are closure constants, so the branches that do
    not apply vanish from the machine code."""
    per_roll, per_landing, per_turn = tally == PER_ROLL, tally == PER_LANDING, tally == PER_TURN
    table, scripted = mode == "table", mode == "scripted"

    @njit(cache=True)
    def _run(key, games, players, turns, checkpoints, n, shuffle_decks, long_jail, chance,
             community, landing, script, cards, out_counts, out_totals, status):
        """Kernel: play the run; add cumulative ``counts`` per location and
        ``(events, rolls)`` to ``out_counts[k]`` / ``out_totals[k]`` at turn
        ``checkpoints[k]`` of every game.

        One function body on purpose: helpers take and return scalars only (the
        xoshiro256** state travels as four uint64 scalars), because numba copies
        and reference-counts every array handed to a helper, which costs more
        than the rules themselves (13 vs 65 million rolls per second here).

        A roll draws 64 bits once: the high half picks the ordered pair of faces
        (``pair_sum`` / ``pair_double`` over the n^2 pairs), the low half the
        landing's outcome in table mode (an entry of ``final`` / ``counted``).

        Turn rules (DESIGN 3.1): in jail with the long strategy, roll: doubles or
        a third turn -> move by the throw and the turn ends; else stay.  Otherwise
        roll while doubles come; a third double goes to jail without moving.
        A landing is resolved square by square: G2J -> jail; a card square draws
        a card, which may send the token on (back 3 from CH3 reaches CC3, drawn
        again).  ``script`` faces and ``cards`` codes replace the stream in
        scripted mode; ``status`` returns (code, faces used, cards used).
        """
        pair_sum, pair_double, final, counted = landing
        n_pairs, width = n * n, final.shape[1]
        rng = np.empty(4, dtype=np.uint64)
        counts = np.zeros(N_LOCATIONS, dtype=np.int64)
        pos = np.zeros(players, dtype=np.int64)
        jail = np.zeros(players, dtype=np.int64)
        cc = community.copy()
        ch = chance.copy()
        n_cc, n_ch = cc.shape[0], ch.shape[0]
        face, card_no = 0, 0
        for g in range(games):
            game_state(key, g, rng)
            if not table:  # fixed orders consume the same draws as a shuffle
                cc[:] = community
                ch[:] = chance
                shuffle(rng, cc)
                shuffle(rng, ch)
                if not shuffle_decks:
                    cc[:] = community
                    ch[:] = chance
            s0, s1, s2, s3 = rng[0], rng[1], rng[2], rng[3]
            counts[:] = 0
            pos[:] = 0
            jail[:] = 0
            events, rolls, next_cc, next_ch, k = 0, 0, 0, 0, 0
            for t in range(1, turns + 1):
                for p in range(players):
                    sq, jail_throws, doubles = pos[p], jail[p], 0
                    while True:  # one roll per pass
                        # -- roll the dice
                        if scripted:
                            if face + 1 >= script.shape[0]:
                                status[0], status[1], status[2] = _OUT_OF_DICE, face, card_no
                                return
                            steps, double = script[face] + script[face + 1], script[face] == script[face + 1]
                            face += 2
                        else:
                            x, s0, s1, s2, s3 = xoshiro(s0, s1, s2, s3)
                            pair = below(x >> np.uint64(32), n_pairs)
                            steps, double = pair_sum[pair], pair_double[pair]
                        rolls += 1
                        # -- jail and doubles: stay in jail, go to jail, or move
                        outcome, sq, jail_throws, doubles, double = _throw(
                            sq, jail_throws, doubles, double, long_jail)
                        if outcome != 0:
                            sq = IN_JAIL
                            counts[IN_JAIL] += 1
                            events += 1
                            break
                        # -- move, then resolve the landing
                        sq = _move(sq, steps)
                        if table:
                            u = below(x & np.uint64(0xFFFFFFFF), width)
                            if per_landing:
                                for c in range(counted.shape[2]):
                                    if counted[sq, u, c] < 0:
                                        break
                                    counts[counted[sq, u, c]] += 1
                                    events += 1
                            sq = np.int64(final[sq, u])
                        while not table:  # square by square, drawing cards in order
                            kind = _KIND[sq]
                            if kind == _G2J:
                                sq = IN_JAIL
                                break
                            if per_landing:
                                counts[sq] += 1
                                events += 1
                            if kind == _PLAIN:
                                break
                            if scripted:
                                if card_no >= cards.shape[0]:
                                    status[0], status[1], status[2] = _OUT_OF_CARDS, face, card_no
                                    return
                                card = cards[card_no]
                                card_no += 1
                            elif kind == _CC:
                                card = cc[next_cc]
                                next_cc = next_cc + 1 if next_cc + 1 < n_cc else 0
                            else:
                                card = ch[next_ch]
                                next_ch = next_ch + 1 if next_ch + 1 < n_ch else 0
                            if card == STAY:
                                break
                            if card == TO_JAIL:
                                sq = IN_JAIL
                                break
                            sq = _destination(card, sq)
                        # -- tally the roll; a jail landing or a non-double ends the turn
                        ends = sq == IN_JAIL or not double
                        if per_roll or (ends and per_turn) or (sq == IN_JAIL and per_landing):
                            counts[sq] += 1
                            events += 1
                        if ends:
                            break
                    pos[p], jail[p] = sq, jail_throws
                if k < checkpoints.shape[0] and t == checkpoints[k]:
                    out_counts[k] += counts
                    out_totals[k, 0] += events
                    out_totals[k, 1] += rolls
                    k += 1
        status[0], status[1], status[2] = _OK, face, card_no

    return _run


def _dice_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sum and double flag of the n^2 equally likely ordered pairs of faces."""
    a, b = np.divmod(np.arange(n * n), n)
    return (a + b + 2).astype(np.int64), a == b


def _walk(square: int, draws: list[int], chance: np.ndarray, community: np.ndarray):
    """Follow one landing with the given card indices (in draw order): the
    final location and the squares a per_landing tally counts on the way."""
    counted = []
    while True:
        if _KIND[square] == _G2J:
            return IN_JAIL, counted
        counted.append(square)
        if _KIND[square] == _PLAIN:
            return square, counted
        deck = community if _KIND[square] == _CC else chance
        card = int(deck[draws.pop(0)])
        if card == STAY:
            return square, counted
        if card == TO_JAIL:
            return IN_JAIL, counted
        square = int(_destination(card, square))


@lru_cache(maxsize=64)
def _landing_tables(n: int, chance: tuple, community: tuple) -> tuple:
    """Lookup tables of the table-mode kernel for independent draws.

    Each landing square has equally likely outcomes: one per card of its
    deck, times one per community chest card where a chance card can send the
    token to a community chest square (back 3 from CH3).  Every square's row
    holds the same number of entries (the lcm of the outcome counts: 256 for
    the standard decks, 240 with classic15), each outcome repeated evenly, so
    the entry index is drawn without knowing the square: that keeps it off
    the roll-to-roll dependency chain.  ``final`` is where an entry leaves the
    token, ``counted`` the squares it counts for per_landing (-1 padded).
    Built by walking the kernel's own card codes, apart from the exact solver.
    """
    ch, cc = np.array(chance), np.array(community)
    radices = []
    for sq in range(N_SQUARES):
        if _KIND[sq] == _CC:
            radices.append((len(cc),))
        elif _KIND[sq] == _CH:
            back = (sq + N_SQUARES - 3) % N_SQUARES
            radices.append((len(ch), len(cc)) if _KIND[back] == _CC else (len(ch),))
        else:
            radices.append(())
    size = [int(np.prod(r)) for r in radices]
    width = int(np.lcm.reduce(size))
    final = np.zeros((N_SQUARES, width), dtype=np.int8)
    counted = np.full((N_SQUARES, width, 4), -1, dtype=np.int8)
    for sq, radix in enumerate(radices):
        repeat = width // size[sq]
        for u in range(size[sq]):
            draws = list(np.unravel_index(u, radix)) if radix else []
            end, squares = _walk(sq, draws, ch, cc)
            final[sq, u * repeat : (u + 1) * repeat] = end
            counted[sq, u * repeat : (u + 1) * repeat, : len(squares)] = squares
    pair_sum, pair_double = _dice_pairs(n)
    return pair_sum, pair_double, final, counted


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
    counts = np.zeros((cp.size, N_LOCATIONS), dtype=np.int64)
    totals = np.zeros((cp.size, 2), dtype=np.int64)
    status = np.zeros(3, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    mode = "cards" if rules.shuffled else "table"
    landing = _landing_tables(rules.dice_sides, tuple(chance), tuple(community))
    _kernel(rules.tally_code, mode)(
        seed_key(seed), games, players, turns, cp, rules.dice_sides, deck_orders is None,
        rules.long_jail, chance, community, landing, empty, empty, counts, totals, status,
    )
    return {"counts": counts, "events": totals[:, 0].copy(), "rolls": totals[:, 1].copy()}


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


def run_script(rules: Rules, dice: np.ndarray, cards: np.ndarray, turns: int) -> tuple:
    """Drive the kernel from a script: one token, ``turns`` turns at most.

    Returns (counts (41,), events, rolls, turns played, status) where status is
    0 when every turn was played, 1 when the dice ran out, 2 when the cards did.
    The kernel checks the script's length; a turn cut short by it is dropped.
    """
    cp = np.arange(1, turns + 1, dtype=np.int64)
    counts = np.zeros((turns, N_LOCATIONS), dtype=np.int64)
    totals = np.zeros((turns, 2), dtype=np.int64)
    status = np.zeros(3, dtype=np.int64)
    landing = _landing_tables(rules.dice_sides, tuple(rules.chance_cards),
                              tuple(rules.community_cards))
    _kernel(rules.tally_code, "scripted")(
        seed_key(0), 1, 1, turns, cp, rules.dice_sides, False, rules.long_jail,
        rules.chance_cards, rules.community_cards, landing, np.asarray(dice, dtype=np.int64),
        np.asarray(cards, dtype=np.int64), counts, totals, status,
    )
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
