"""One test per rule of seed 004 / DESIGN 3.3, driven by scripted dice and Chance amounts.

Squares (0-based) on the default board: 0 Go, 1 Central 800/90, 2 Wan Chai
700/65, 3 Income Tax, 4 Stanley, 5 In Jail/Just Visiting, 8 Chance,
9 Tsing Yi 400/15, 11 Shatin, 15 Go To Jail, 16 Sai Kung, 17 Yuen Long,
19 Tai O.  Location 20 is IN_JAIL.
"""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.core.hk_monopoly.board import default_board
from boardsweep.core.hk_monopoly.rules import (
    ALIVE,
    JAIL,
    LONG,
    MAX_SEATS,
    MONEY,
    NEVER,
    POS,
    SHORT,
    income_tax,
    make_cfg,
    new_state,
    scripted_game,
    scripted_turn,
)
from boardsweep.core.hk_monopoly.simulate import _settle

BOARD = default_board()
TABLE = BOARD.table
IN_JAIL = 20


def setup(players=2, reserve=NEVER, jail=SHORT, sides=4, rounds=100):
    cfg = make_cfg(players, sides, rounds, BOARD.go, BOARD.jail)
    seats = np.zeros((MAX_SEATS, 2), dtype=np.int64)
    seats[:, 0] = reserve
    seats[:, 1] = jail
    state, owner = new_state(cfg, TABLE.shape[0])
    return cfg, seats, state, owner


def turn(cfg, seats, state, owner, dice, chance=(), p=0):
    return scripted_turn(p, TABLE, cfg, seats, state, owner, dice, chance)


def test_start_everyone_on_go_with_1500():
    cfg, _, state, owner = setup(players=3)
    assert state[POS, :3].tolist() == [0, 0, 0]
    assert state[MONEY, :3].tolist() == [1500] * 3
    assert state[ALIVE].tolist() == [1, 1, 1, 0, 0, 0]
    assert (owner == -1).all()


def test_move_by_sum_of_dice_no_extra_roll_on_doubles():
    cfg, seats, state, owner = setup()
    loc = turn(cfg, seats, state, owner, [1, 1])  # a second roll would exhaust the script
    assert loc == 2 and state[POS, 0] == 2 and state[MONEY, 0] == 1500


def test_scripts_that_run_out_raise():
    cfg, seats, state, owner = setup()
    with pytest.raises(IndexError):
        turn(cfg, seats, state, owner, [1])


def test_passing_go_pays_1500():
    cfg, seats, state, owner = setup()
    state[POS, 0] = 17
    loc = turn(cfg, seats, state, owner, [2, 2])
    assert loc == 1 and state[MONEY, 0] == 3000


def test_landing_on_go_pays_1500():
    cfg, seats, state, owner = setup()
    state[POS, 0] = 16
    loc = turn(cfg, seats, state, owner, [2, 2])
    assert loc == 0 and state[MONEY, 0] == 3000


def test_each_pass_of_go_pays():
    cfg, seats, state, owner = setup(sides=20)
    loc = turn(cfg, seats, state, owner, [20, 20])  # 40 squares: around twice
    assert loc == 0 and state[MONEY, 0] == 1500 + 2 * 1500


def test_going_to_jail_pays_nothing_and_ends_turn_in_jail():
    cfg, seats, state, owner = setup()
    state[POS, 0] = 11
    loc = turn(cfg, seats, state, owner, [2, 2])  # Shatin + 4 = Go To Jail
    assert loc == IN_JAIL
    assert state[POS, 0] == BOARD.jail and state[JAIL, 0] == 0
    assert state[MONEY, 0] == 1500


def test_just_visiting_is_not_in_jail():
    cfg, seats, state, owner = setup()
    state[POS, 0] = 1
    loc = turn(cfg, seats, state, owner, [2, 2])
    assert loc == BOARD.jail and state[JAIL, 0] == -1


@pytest.mark.parametrize("money, tax", [(1999, 190), (1500, 150), (1234, 120), (99, 0), (100, 10), (0, 0)])
def test_income_tax_is_ten_percent_rounded_down_to_ten(money, tax):
    assert income_tax(money) == tax
    cfg, seats, state, owner = setup()
    state[MONEY, 0] = money
    loc = turn(cfg, seats, state, owner, [1, 2])
    assert loc == 3 and state[MONEY, 0] == money - tax


def test_chance_adds_the_drawn_amount():
    cfg, seats, state, owner = setup()
    state[POS, 0] = 5
    turn(cfg, seats, state, owner, [1, 2], chance=[-270])
    assert state[POS, 0] == 8 and state[MONEY, 0] == 1500 - 270
    turn(cfg, seats, state, owner, [2, 2], chance=[200])  # 12: Chance
    assert state[POS, 0] == 12 and state[MONEY, 0] == 1500 - 270 + 200


@pytest.mark.parametrize(
    "reserve, money, bought",
    [(0, 1500, True), (0, 700, True), (0, 699, False), (300, 1000, True), (300, 999, False),
     (NEVER, 1500, False)],
)
def test_buy_policy(reserve, money, bought):
    cfg, seats, state, owner = setup(reserve=reserve)
    state[MONEY, 0] = money
    turn(cfg, seats, state, owner, [1, 1])  # Wan Chai, price 700
    assert bool(owner[2] == 0) is bought
    assert state[MONEY, 0] == (money - 700 if bought else money)


def test_rent_goes_to_the_owner_and_own_property_is_free():
    cfg, seats, state, owner = setup()
    owner[2] = 1
    turn(cfg, seats, state, owner, [1, 1])
    assert state[MONEY, 0] == 1500 - 65 and state[MONEY, 1] == 1500 + 65
    state[POS, 1] = 0
    turn(cfg, seats, state, owner, [1, 1], p=1)
    assert state[MONEY, 1] == 1500 + 65


def test_long_jail_third_failed_throw_pays_150_and_moves():
    cfg, seats, state, owner = setup(jail=LONG)
    state[POS, 0], state[JAIL, 0] = BOARD.jail, 0
    assert turn(cfg, seats, state, owner, [1, 2]) == IN_JAIL and state[JAIL, 0] == 1
    assert turn(cfg, seats, state, owner, [3, 4]) == IN_JAIL and state[JAIL, 0] == 2
    assert state[MONEY, 0] == 1500
    loc = turn(cfg, seats, state, owner, [1, 3])
    assert loc == 9 and state[JAIL, 0] == -1 and state[MONEY, 0] == 1350


def test_long_jail_doubles_move_by_that_throw_without_fine():
    cfg, seats, state, owner = setup(jail=LONG)
    state[POS, 0], state[JAIL, 0] = BOARD.jail, 1
    loc = turn(cfg, seats, state, owner, [2, 2])  # no extra roll either
    assert loc == 9 and state[JAIL, 0] == -1 and state[MONEY, 0] == 1500


def test_short_jail_pays_at_once_and_moves_normally():
    cfg, seats, state, owner = setup(jail=SHORT)
    state[POS, 0], state[JAIL, 0] = BOARD.jail, 0
    loc = turn(cfg, seats, state, owner, [1, 3])
    assert loc == 9 and state[JAIL, 0] == -1 and state[MONEY, 0] == 1350


def test_paying_the_fine_on_the_second_turn():
    cfg, seats, state, owner = setup(jail=SHORT)
    state[POS, 0], state[JAIL, 0] = BOARD.jail, 1  # one failed throw already
    loc = turn(cfg, seats, state, owner, [1, 3])
    assert loc == 9 and state[JAIL, 0] == -1 and state[MONEY, 0] == 1350


def test_no_voluntary_fine_on_the_third_turn():
    cfg, seats, state, owner = setup(jail=SHORT)
    state[POS, 0], state[JAIL, 0] = BOARD.jail, 2
    loc = turn(cfg, seats, state, owner, [2, 2])  # doubles: out free
    assert loc == 9 and state[MONEY, 0] == 1500


def test_leaving_jail_past_go_pays_salary():
    cfg, seats, state, owner = setup(jail=LONG, sides=20)
    state[POS, 0], state[JAIL, 0] = BOARD.jail, 0
    loc = turn(cfg, seats, state, owner, [10, 10])  # 5 + 20 -> 5, once round
    assert loc == 5 and state[MONEY, 0] == 3000


def test_retirement_frees_properties():
    cfg, seats, state, owner = setup(players=3)
    owner[[1, 2, 19]] = [0, 0, 1]
    state[MONEY, 0], state[POS, 0] = 100, 5
    turn(cfg, seats, state, owner, [1, 2], chance=[-300])
    assert state[ALIVE, 0] == 0 and state[MONEY, 0] == -200
    assert owner[1] == -1 and owner[2] == -1 and owner[19] == 1


def test_rent_that_cannot_be_paid_retires_but_owner_gets_it_in_full():
    cfg, seats, state, owner = setup()
    owner[1], owner[11] = 1, 1
    state[MONEY, 0], state[POS, 0] = 50, 19
    turn(cfg, seats, state, owner, [1, 1])  # Tai O + 2: passes Go (+1500), Central rent 90
    assert state[POS, 0] == 1 and state[MONEY, 0] == 50 + 1500 - 90 and state[ALIVE, 0] == 1
    state[MONEY, 0], state[POS, 0] = 40, 9
    turn(cfg, seats, state, owner, [1, 1])  # Shatin, rent 75
    assert state[MONEY, 0] == -35 and state[ALIVE, 0] == 0
    assert state[MONEY, 1] == 1500 + 90 + 75
    assert owner[1] == 1 and owner[11] == 1  # the owner keeps her properties


def test_game_ends_when_one_player_is_left():
    cfg, seats, state, owner = setup(players=2)
    state[MONEY, 0], state[POS, 0] = 100, 5
    result = scripted_game(TABLE, cfg, seats, [1, 2], [-300], state=state, owner=owner)
    assert result["rounds"] == 1
    assert result["landings"].sum() == 1  # seat 2 never played
    assert result["won"].tolist() == [0, 1, 0, 0, 0, 0] and result["n_winners"] == 1


def test_retired_player_takes_no_more_turns():
    cfg, seats, state, owner = setup(players=3, rounds=2)
    state[MONEY, 1], state[POS, 1] = 100, 5
    # round 1: P1 -> Wan Chai, P2 -> Chance -300 (retires), P3 -> Wan Chai;
    # round 2: P1 and P3 only.
    dice = [1, 1, 1, 2, 1, 1, 1, 2, 1, 2]
    result = scripted_game(TABLE, cfg, seats, dice, [-300, 10, 10], state=state, owner=owner)
    assert result["rounds"] == 2 and result["landings"].sum() == 5
    assert result["state"][ALIVE, :3].tolist() == [1, 0, 1]


def test_game_lasts_the_given_rounds():
    cfg, seats, _, _ = setup(players=2, rounds=3)
    result = scripted_game(TABLE, cfg, seats, [1, 1] * 6)
    assert result["rounds"] == 3 and result["landings"].sum() == 6
    assert result["state"][POS, :2].tolist() == [6, 6]


def test_ties_are_shared_wins():
    cfg, seats, _, _ = setup(players=3, rounds=1)
    # P1 and P3 stay at 1500 (Wan Chai, never buy); P2 pays tax.
    result = scripted_game(TABLE, cfg, seats, [1, 1, 1, 2, 1, 1])
    assert result["n_winners"] == 2
    assert result["won"][:3].tolist() == [1, 0, 1]
    acc = [np.zeros(MAX_SEATS, np.int64) for _ in range(5)]
    _settle(cfg, result["state"], result["owner"], np.zeros(MAX_SEATS, np.int64), *acc)
    wins, ties, money, retired, properties = acc
    assert wins.tolist() == [0] * 6
    assert ties.tolist() == [1, 0, 1, 0, 0, 0]
    assert money[:3].tolist() == [1500, 1350, 1500]


def test_sole_richest_wins_and_retired_cannot_win():
    cfg, seats, state, owner = setup(players=3, rounds=1)
    state[MONEY, 0], state[POS, 0] = 100, 5  # P1 retires at Chance
    dice = [1, 2, 1, 1, 1, 2]  # P2 Wan Chai (1500), P3 Income Tax (1350)
    result = scripted_game(TABLE, cfg, seats, dice, [-300], state=state, owner=owner)
    assert result["won"][:3].tolist() == [0, 1, 0] and result["n_winners"] == 1
