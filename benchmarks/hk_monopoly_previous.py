"""The hk_monopoly kernel as it was before issue 12's scalar rewrite, frozen.

:mod:`benchmarks.hk_monopoly` times it beside the current kernel in one run,
so that the speed-up is a ratio measured on the same machine under the same
load.  This is a verbatim copy of the random path of
``core/hk_monopoly/rules.py`` and ``core/hk_monopoly/simulate.py`` at commit
999ffc8 (the scripted-game entry points left out); it must not be edited.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boardsweep.core.hk_monopoly.board import CHANCE, GO_TO_JAIL, INCOME_TAX, PROPERTY
from boardsweep.core.hk_monopoly.rules import (
    ALIVE, C_GO, C_JAIL, C_PLAYERS, C_ROUNDS, C_SIDES, JAIL, JAIL_FINE, MAX_SEATS, MONEY, POS,
    SALARY, SHORT, START_MONEY,
)
from boardsweep.core.rng import game_state, randint

__all__ = ["previous_kernel"]


@njit(cache=True)
def reset_state(cfg, state, owner):
    """Start a game: every seat in play on Go with HKD 1500, nothing owned."""
    state[:, :] = 0
    state[JAIL, :] = -1
    for p in range(cfg[C_PLAYERS]):
        state[POS, p] = cfg[C_GO]
        state[MONEY, p] = START_MONEY
        state[ALIVE, p] = 1
    owner[:] = -1


@njit(cache=True, inline="always")
def draw_die(rng, sides, scripted, dice_script, cursor):
    """One die face in 1..sides: the next scripted face, or a random one."""
    if scripted:
        i = cursor[0]
        if i >= dice_script.shape[0]:
            raise IndexError("dice script exhausted")
        cursor[0] = i + 1
        return dice_script[i]
    return randint(rng, sides) + 1


@njit(cache=True, inline="always")
def draw_chance(rng, chance_table, scripted, chance_script, cursor):
    """One Chance amount: the next scripted amount, or a uniform table entry."""
    if scripted:
        i = cursor[1]
        if i >= chance_script.shape[0]:
            raise IndexError("chance script exhausted")
        cursor[1] = i + 1
        return chance_script[i]
    return chance_table[randint(rng, chance_table.shape[0])]


@njit(cache=True, inline="always")
def income_tax(money):
    """10% of ``money`` rounded down to a multiple of 10 (0 if money < 0)."""
    if money <= 0:
        return 0
    return (money // 100) * 10


@njit(cache=True, inline="always")
def _advance(pos, steps, n, go):
    """(square reached from ``pos`` after ``steps`` on ``n`` squares, passes of Go).

    The first two passes are counted without a branch (a throw rarely passes
    Go twice), so that the hot path has no unpredictable jump.
    """
    rel = pos - go  # squares past Go, in [0, n) (no division: hot path)
    if rel < 0:
        rel += n
    rel += steps
    passes = np.int64(rel >= n)
    rel -= n * passes
    second = np.int64(rel >= n)
    rel -= n * second
    passes += second
    while rel >= n:
        rel -= n
        passes += 1
    pos = go + rel
    return (pos - n if pos >= n else pos), passes


@njit(cache=True, inline="always")
def advance(p, steps, board, cfg, state):
    """Move seat ``p`` forward ``steps`` squares, paying SALARY per pass of Go."""
    pos, passes = _advance(state[POS, p], steps, board.shape[0], cfg[C_GO])
    state[MONEY, p] += SALARY * passes
    state[POS, p] = pos


@njit(cache=True, inline="always")
def _property(is_property, holder, p, reserve, money, price):
    """(buys, pays rent) of seat ``p`` landing on a square owned by ``holder``
    (-1: nobody; squares that are not properties are never owned), as 0/1
    integers computed without branches."""
    buy = (is_property & (holder < 0) & (reserve >= 0) & (money - price >= reserve))
    return np.int64(buy), np.int64((holder >= 0) & (holder != p))


@njit(cache=True, inline="always")
def land(p, board, cfg, seats, chance_table, state, owner, rng, scripted, chance_script, cursor):
    """Resolve the square seat ``p`` has just landed on.

    A property (the common case) is settled by arithmetic (:func:`_property`):
    buy if unowned and the seat's reserve allows, pay the rent if another seat
    owns it.
    """
    sq = state[POS, p]
    kind, price, rent = board[sq, 0], board[sq, 1], board[sq, 2]
    holder = owner[sq]
    money = state[MONEY, p]
    buy, pay = _property(kind == PROPERTY, holder, p, seats[p, 0], money, price)
    state[MONEY, p] = money - buy * price - pay * rent
    state[MONEY, holder if pay else p] += pay * rent
    owner[sq] = p if buy else holder
    if kind == CHANCE:
        state[MONEY, p] += draw_chance(rng, chance_table, scripted, chance_script, cursor)
    elif kind == INCOME_TAX:
        state[MONEY, p] -= income_tax(state[MONEY, p])
    elif kind == GO_TO_JAIL:
        state[POS, p] = cfg[C_JAIL]
        state[JAIL, p] = 0


@njit(cache=True, inline="always")
def jail_turn(p, cfg, seats, state, rng, scripted, dice_script, cursor):
    """A turn that starts in jail: return the steps to move (0: stays in jail)."""
    sides = cfg[C_SIDES]
    failed = state[JAIL, p]
    if seats[p, 1] == SHORT and failed < 2:
        state[MONEY, p] -= JAIL_FINE
        state[JAIL, p] = -1
        return draw_die(rng, sides, scripted, dice_script, cursor) + draw_die(
            rng, sides, scripted, dice_script, cursor
        )
    d1 = draw_die(rng, sides, scripted, dice_script, cursor)
    d2 = draw_die(rng, sides, scripted, dice_script, cursor)
    if d1 == d2:
        state[JAIL, p] = -1
        return d1 + d2
    if failed == 2:
        state[MONEY, p] -= JAIL_FINE
        state[JAIL, p] = -1
        return d1 + d2
    state[JAIL, p] = failed + 1
    return 0


@njit(cache=True, inline="always")
def retire(p, state, owner):
    """Seat ``p`` leaves the game; her properties become unowned."""
    state[ALIVE, p] = 0
    for sq in range(owner.shape[0]):
        if owner[sq] == p:
            owner[sq] = -1


@njit(cache=True, inline="always")
def play_turn(p, board, cfg, seats, chance_table, state, owner, rng, scripted, dice_script,
              chance_script, cursor):
    """Play one turn of seat ``p``; return the location it ends on.

    The location is the 0-based square, or ``board.shape[0]`` (IN_JAIL) when
    the turn ends in jail.  A player left with negative money retires.
    """
    n = board.shape[0]
    if state[JAIL, p] >= 0:
        steps = jail_turn(p, cfg, seats, state, rng, scripted, dice_script, cursor)
    else:
        sides = cfg[C_SIDES]
        steps = draw_die(rng, sides, scripted, dice_script, cursor) + draw_die(
            rng, sides, scripted, dice_script, cursor
        )
    if steps > 0:
        advance(p, steps, board, cfg, state)
        land(p, board, cfg, seats, chance_table, state, owner, rng, scripted, chance_script, cursor)
    if state[MONEY, p] < 0:
        retire(p, state, owner)
    return n if state[JAIL, p] >= 0 else state[POS, p]


@njit(cache=True)
def play_game(board, cfg, seats, chance_table, state, owner, landings, rng, scripted,
              dice_script, chance_script, cursor):
    """Play a game from ``state`` to its end; return the number of rounds played.

    Every turn's end location is added to ``landings`` (length squares + 1).
    """
    players = cfg[C_PLAYERS]
    alive = 0
    for p in range(players):
        alive += state[ALIVE, p]
    for r in range(cfg[C_ROUNDS]):
        for p in range(players):
            if state[ALIVE, p] == 0:
                continue
            loc = play_turn(p, board, cfg, seats, chance_table, state, owner, rng, scripted,
                            dice_script, chance_script, cursor)
            landings[loc] += 1
            if state[ALIVE, p] == 0:
                alive -= 1
                if alive <= 1:
                    return r + 1
    return cfg[C_ROUNDS]


@njit(cache=True)
def winners(cfg, state, won):
    """Set ``won[p]`` to 1 for the richest remaining seats; return how many."""
    best = np.iinfo(np.int64).min
    for p in range(cfg[C_PLAYERS]):
        if state[ALIVE, p] == 1 and state[MONEY, p] > best:
            best = state[MONEY, p]
    count = 0
    for p in range(won.shape[0]):
        won[p] = 0
        if p < cfg[C_PLAYERS] and state[ALIVE, p] == 1 and state[MONEY, p] == best:
            won[p] = 1
            count += 1
    return count


@njit(cache=True)
def _settle(cfg, state, owner, won, wins, ties, money, retired, properties):
    """Add one finished game's outcome to the per-seat accumulators."""
    n_winners = winners(cfg, state, won)
    for p in range(cfg[C_PLAYERS]):
        if won[p] == 1:
            if n_winners == 1:
                wins[p] += 1
            else:
                ties[p] += 1
        money[p] += state[MONEY, p]
        retired[p] += 1 - state[ALIVE, p]
    for sq in range(owner.shape[0]):
        if owner[sq] >= 0:
            properties[owner[sq]] += 1


@njit(cache=True)
def _kernel(key, board, cfg, seats, chance_table, checkpoints,
            wins_out, ties_out, money_out, retired_out, properties_out, landings_out,
            turns_out, rounds_out, games_out):
    """Play ``checkpoints[-1]`` games; write cumulative totals at each checkpoint."""
    n = board.shape[0]
    state = np.zeros((4, MAX_SEATS), dtype=np.int64)
    owner = np.empty(n, dtype=np.int64)
    rng = np.empty(4, dtype=np.uint64)
    won = np.zeros(MAX_SEATS, dtype=np.int64)
    wins = np.zeros(MAX_SEATS, dtype=np.int64)
    ties = np.zeros(MAX_SEATS, dtype=np.int64)
    money = np.zeros(MAX_SEATS, dtype=np.int64)
    retired = np.zeros(MAX_SEATS, dtype=np.int64)
    properties = np.zeros(MAX_SEATS, dtype=np.int64)
    landings = np.zeros(n + 1, dtype=np.int64)
    no_script = np.zeros(0, dtype=np.int64)
    cursor = np.zeros(2, dtype=np.int64)
    rounds = 0
    c = 0
    for g in range(checkpoints[-1]):
        game_state(key, g, rng)
        reset_state(cfg, state, owner)
        rounds += play_game(board, cfg, seats, chance_table, state, owner, landings, rng, False,
                            no_script, no_script, cursor)
        _settle(cfg, state, owner, won, wins, ties, money, retired, properties)
        if g + 1 == checkpoints[c]:
            wins_out[c, :] = wins
            ties_out[c, :] = ties
            money_out[c, :] = money
            retired_out[c, :] = retired
            properties_out[c, :] = properties
            landings_out[c, :] = landings
            turns_out[c] = landings.sum()
            rounds_out[c] = rounds
            games_out[c] = g + 1
            c += 1


def previous_kernel(key, board, cfg, seats, chance_table, checkpoints, out):
    """Run the frozen kernel into ``out`` (the arrays of ``OUTPUTS``, in order)."""
    _kernel(key, board, cfg, seats, chance_table, checkpoints, *out)
