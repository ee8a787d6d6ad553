"""The numba rules against an independent plain-Python reading of the rules.

The reference below is written straight from seed 004 / DESIGN 3.3 with no
code shared with :mod:`boardsweep.core.hk_monopoly.rules` (it even moves the token one
square at a time to pay for passing Go).  Hypothesis draws random boards of
strategies, dice and Chance scripts; both must end in the same state.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from boardsweep.core.hk_monopoly.board import default_board
from boardsweep.core.hk_monopoly.rules import ALIVE, MAX_SEATS, MONEY, POS, make_cfg, scripted_game

BOARD = default_board()


def reference_game(players, rounds, reserves, jails, sides, dice, chance):
    """Play a game by the written rules; return a dict of its outcome."""
    kinds = [("go", "property", "chance", "income_tax", "jail", "free_parking",
              "go_to_jail")[k] for k in BOARD.table[:, 0]]
    price, rent = BOARD.table[:, 1].tolist(), BOARD.table[:, 2].tolist()
    jail_square = kinds.index("jail")
    dice, chance = iter(dice), iter(chance)
    pos, money = [0] * players, [1500] * players
    in_jail = [None] * players  # failed throws so far while in jail
    alive, owner = [True] * players, {}
    landings, played = [0] * 21, 0

    def roll():
        return next(dice), next(dice)

    def turn(p):
        steps = 0
        if in_jail[p] is None:
            steps = sum(roll())
        elif jails[p] == "short" and in_jail[p] < 2:
            money[p] -= 150
            in_jail[p] = None
            steps = sum(roll())
        else:
            a, b = roll()
            if a == b or in_jail[p] == 2:
                if a != b:
                    money[p] -= 150
                in_jail[p] = None
                steps = a + b
            else:
                in_jail[p] += 1
        if steps:
            for _ in range(steps):
                pos[p] = (pos[p] + 1) % 20
                if kinds[pos[p]] == "go":
                    money[p] += 1500
            resolve(p)
        landings[20 if in_jail[p] is not None else pos[p]] += 1
        if money[p] < 0:
            alive[p] = False
            for sq in [sq for sq, o in owner.items() if o == p]:
                del owner[sq]

    def resolve(p):
        sq, kind = pos[p], kinds[pos[p]]
        if kind == "property" and sq not in owner:
            if reserves[p] is not None and money[p] - price[sq] >= reserves[p]:
                money[p] -= price[sq]
                owner[sq] = p
        elif kind == "property" and owner[sq] != p:
            money[p] -= rent[sq]
            money[owner[sq]] += rent[sq]
        elif kind == "chance":
            money[p] += next(chance)
        elif kind == "income_tax" and money[p] > 0:
            money[p] -= int(money[p] * 0.1) // 10 * 10
        elif kind == "go_to_jail":
            pos[p], in_jail[p] = jail_square, 0

    for r in range(rounds):
        played = r + 1
        for p in range(players):
            if alive[p]:
                turn(p)
                if sum(alive) == 1:
                    break
        if sum(alive) == 1:
            break
    best = max(money[p] for p in range(players) if alive[p])
    won = [int(alive[p] and money[p] == best) for p in range(players)]
    return {"rounds": played, "landings": landings, "money": money, "pos": pos,
            "alive": [int(a) for a in alive], "owner": owner, "won": won}


POLICIES = st.sampled_from([0, None, 100, 400])  # reserve; None = never


@st.composite
def games(draw):
    players = draw(st.integers(2, 6))
    rounds = draw(st.integers(1, 30))
    sides = draw(st.sampled_from([2, 3, 4, 6]))
    reserves = draw(st.lists(POLICIES, min_size=players, max_size=players))
    jails = draw(st.lists(st.sampled_from(["short", "long"]), min_size=players, max_size=players))
    turns = players * rounds
    dice = draw(st.lists(st.integers(1, sides), min_size=2 * turns, max_size=2 * turns))
    amounts = st.integers(-60, 40).map(lambda x: 10 * x)  # harsh, so retirements happen
    chance = draw(st.lists(amounts, min_size=turns, max_size=turns))
    return players, rounds, reserves, jails, sides, dice, chance


@settings(max_examples=300, deadline=None)
@given(games())
def test_numba_rules_match_reference(game):
    players, rounds, reserves, jails, sides, dice, chance = game
    expected = reference_game(*game)
    cfg = make_cfg(players, sides, rounds, BOARD.go, BOARD.jail)
    seats = np.zeros((MAX_SEATS, 2), dtype=np.int64)
    seats[:players, 0] = [-1 if r is None else r for r in reserves]
    seats[:players, 1] = [int(j == "long") for j in jails]
    got = scripted_game(BOARD.table, cfg, seats, dice, chance)
    state = got["state"]
    assert got["rounds"] == expected["rounds"]
    assert got["landings"].tolist() == expected["landings"]
    assert state[MONEY, :players].tolist() == expected["money"]
    assert state[POS, :players].tolist() == expected["pos"]
    assert state[ALIVE, :players].tolist() == expected["alive"]
    assert {sq: int(o) for sq, o in enumerate(got["owner"]) if o >= 0} == expected["owner"]
    assert got["won"][:players].tolist() == expected["won"]
