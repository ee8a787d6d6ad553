"""The table-driven, interleaved kernel against the rule functions played roll by roll.

:func:`play_by_rules` plays the same games as :func:`simulate_rules` from the
same random streams, in plain Python, calling :func:`.step.throw` and
:func:`.step.land` (the functions the scripted replay runs) for every roll and
drawing the cards the way the kernel consumes the stream: one 64-bit word per
roll, the high half for the pair of faces, the low half for an independent
draw (each card of the landing's deck, or Chance then Community Chest from
CH3, equally often), or the next card of each game's shuffled decks.  Every
variant, several players and more games than the kernel has lanes (lanes
refilled and retired; :func:`test_every_lane_at_play_equals_the_rules`) must
give the same integer arrays.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from boardsweep.core.monopoly.board import N_LOCATIONS, N_SQUARES
from boardsweep.core.monopoly.rules import Rules
from boardsweep.core.monopoly.simulate import simulate_rules
from boardsweep.core.monopoly.step import CC, CH, KIND, MAX_COUNTED, land, throw
from boardsweep.core.rng import below, game_state, next_u64, seed_key, shuffle

GAMES, TURNS = 10, 24
CHECKPOINTS = np.array([1, 5, 24])

VARIANTS = [
    {"dice_sides": n, "jail_strategy": j, "deck_policy": d, "chance_deck": c, "tally": t}
    for n, j, d, c, t in itertools.product(
        (2, 4, 6, 9), ("short", "long"), ("independent", "shuffled_cycle"),
        ("standard", "classic15"), ("per_roll", "per_landing", "per_turn"))
]


def _independent_cards(square: int, u: int, width: int, cc, ch) -> list[int]:
    """Cards of an independent draw ``u`` in [0, width) on card square ``square``."""
    if KIND[square] == CC:
        return [int(cc[u // (width // len(cc))])]
    if KIND[(square - 3) % N_SQUARES] == CC:  # back 3 reaches a CC square: two draws
        i = u // (width // (len(ch) * len(cc)))
        return [int(ch[i // len(cc)]), int(cc[i % len(cc)])]
    return [int(ch[u // (width // len(ch))])]


def play_by_rules(rules: Rules, seed: int, games: int, players: int, turns: int,
                  checkpoints: np.ndarray) -> dict[str, np.ndarray]:
    """What :func:`simulate_rules` returns, played roll by roll with the rule functions."""
    n = rules.dice_sides
    width = int(np.lcm.reduce([16, len(rules.chance_cards), 16 * len(rules.chance_cards)]))
    out = {"counts": np.zeros((checkpoints.size, N_LOCATIONS), np.int64),
           "events": np.zeros(checkpoints.size, np.int64),
           "rolls": np.zeros(checkpoints.size, np.int64)}
    buf = np.zeros(MAX_COUNTED, np.int64)
    key = seed_key(seed)
    for g in range(games):
        s = np.zeros(4, np.uint64)
        game_state(key, g, s)
        cc, ch = rules.community_cards.copy(), rules.chance_cards.copy()
        if rules.shuffled:
            shuffle(s, cc)
            shuffle(s, ch)
        at_cc = at_ch = events = rolls = k = 0
        counts = np.zeros(N_LOCATIONS, np.int64)
        seats = [(0, 0)] * players
        for t in range(1, turns + 1):
            for p in range(players):
                sq, jail_throws, doubles, ends = *seats[p], 0, False
                while not ends:
                    x = next_u64(s)
                    a, b = divmod(int(below(x >> np.uint64(32), n * n)), n)
                    sq, jail_throws, doubles, double = throw(sq, jail_throws, doubles, a + b + 2,
                                                             a == b, rules.long_jail)
                    cards = [0]
                    if sq < N_SQUARES and KIND[sq] in (CC, CH):
                        if rules.shuffled:
                            cards = ([int(ch[at_ch])] if KIND[sq] == CH else []) + [int(cc[at_cc])]
                        else:
                            u = int(below(x & np.uint64(0xFFFFFFFF), width))
                            cards = _independent_cards(sq, u, width, cc, ch)
                    first_ch = KIND[sq] == CH if sq < N_SQUARES else False
                    sq, ends, used, m = land(sq, double, rules.tally_code,
                                             np.array(cards, np.int64), 0, buf)
                    assert used >= 0
                    at_ch = (at_ch + (used >= 1 and first_ch)) % len(ch)
                    at_cc = (at_cc + (used >= 2 or (used == 1 and not first_ch))) % len(cc)
                    for loc in buf[:m]:
                        counts[loc] += 1
                    events, rolls = events + m, rolls + 1
                seats[p] = (sq, jail_throws)
            if k < checkpoints.size and t == checkpoints[k]:
                out["counts"][k] += counts
                out["events"][k] += events
                out["rolls"][k] += rolls
                k += 1
    return out


def name(variant: dict) -> str:
    return "/".join(str(variant[k]) for k in sorted(variant))


@pytest.mark.parametrize("variant", VARIANTS, ids=name)
def test_kernel_equals_the_rules_played_roll_by_roll(variant):
    rules = Rules(**variant)
    players = 1 + VARIANTS.index(variant) % 3
    seed = 7000 + VARIANTS.index(variant)
    fast = simulate_rules(rules, seed, GAMES, players, TURNS, CHECKPOINTS)
    slow = play_by_rules(rules, seed, GAMES, players, TURNS, CHECKPOINTS)
    for key in ("counts", "events", "rolls"):
        assert np.array_equal(fast[key], slow[key]), key


LANE_VARIANTS = [
    {"dice_sides": 6, "jail_strategy": "short", "deck_policy": "independent",
     "chance_deck": "standard", "tally": "per_landing"},
    {"dice_sides": 6, "jail_strategy": "long", "deck_policy": "shuffled_cycle",
     "chance_deck": "classic15", "tally": "per_turn"},
    {"dice_sides": 9, "jail_strategy": "long", "deck_policy": "independent",
     "chance_deck": "standard", "tally": "per_roll"},
]


@pytest.mark.parametrize("variant", LANE_VARIANTS, ids=name)
def test_every_lane_at_play_equals_the_rules(variant):
    """More games than the kernel's LANES: every lane drawn in batches, lanes
    refilled, then retired down to the few that draw roll by roll."""
    from boardsweep.core.monopoly.kernel import LANES

    rules, games = Rules(**variant), LANES + 9
    fast = simulate_rules(rules, 5, games, 3, 6, np.array([2, 6]))
    slow = play_by_rules(rules, 5, games, 3, 6, np.array([2, 6]))
    for key in ("counts", "events", "rolls"):
        assert np.array_equal(fast[key], slow[key]), key


@pytest.mark.parametrize("players", [1, 2])
def test_checkpoints_near_and_far_apart_equal_the_rules(players):
    """Checkpoints closer than a batch of rolls (a lane near one plays whole
    batches, its histogram taken back to the roll that ended the checkpoint's
    turn) and farther (blocks of rolls up to the nearest), lanes drifting
    apart, refilled and retired."""
    from boardsweep.core.monopoly.kernel import BATCH, LANES

    checkpoints = np.array([1, 2, 3, 9, 3 * BATCH, 3 * BATCH + 1, 5 * BATCH, 5 * BATCH + 3, 12 * BATCH])
    rules, games = Rules(**LANE_VARIANTS[1]), LANES + 9
    fast = simulate_rules(rules, 11, games, players, int(checkpoints[-1]), checkpoints)
    slow = play_by_rules(rules, 11, games, players, int(checkpoints[-1]), checkpoints)
    for key in ("counts", "events", "rolls"):
        assert np.array_equal(fast[key], slow[key]), key


def test_fixed_deck_orders_play_like_the_rules():
    """deck_orders (fixed orders after the shuffle's draws) through the same check."""
    from boardsweep.core.monopoly.simulate import deck_orders

    rules = Rules(deck_policy="shuffled_cycle", tally="per_landing", jail_strategy="long")
    orders = deck_orders(rules, 11, 0)
    one = simulate_rules(rules, 11, 1, 2, 300, deck_orders=orders)
    assert np.array_equal(one["counts"], simulate_rules(rules, 11, 1, 2, 300)["counts"])
