"""The rules of hk_monopoly, the 20-square HKD money game (DESIGN 3.3), as numba functions.

The same code plays random games (:mod:`boardsweep.core.hk_monopoly.simulate`) and
scripted ones (tests, :func:`scripted_turn`, :func:`scripted_game`): every
random value goes through :func:`draw_die` / :func:`draw_chance`, which read
the next value of a script when ``scripted`` is true and draw from the game's
xoshiro256** stream otherwise.

Rules as implemented
--------------------
* Each player starts with HKD 1500 on Go.  A turn rolls two dice of
  ``sides`` faces and moves clockwise by their sum; doubles give no extra roll.
* Passing or landing on Go pays 1500 (once per pass); being sent to jail does
  not pass Go.
* Property: unowned -> bought at its price if the seat's buy policy allows
  (``reserve >= 0`` and ``money - price >= reserve``; ``always`` is reserve 0,
  ``never`` is reserve -1); owned by another player -> the full rent is paid
  to the owner, even if that leaves the payer with negative money.
* Chance: money changes by an amount drawn from the chance table.
* Income Tax: pay 10% of money rounded down to a multiple of 10,
  ``(money // 100) * 10`` (nothing if money is negative).
* Go To Jail: the token goes to jail at once; the turn ends there.
* In jail, on each of her next three turns: with the ``short`` strategy the
  player pays 150 before rolling (allowed on the first two turns; she pays
  even if it leaves her negative, so that money never affects movement) and
  moves normally by the roll.  Otherwise she rolls: doubles -> leaves and
  moves by that throw; on a third failed throw she pays 150 and moves by that
  throw; otherwise she stays in jail.
* A player whose money is negative at the end of her turn retires: her
  properties become unowned and she takes no more turns; her money stays as
  it was (negative) in the final results.
* A round is every remaining player's turn in seat order.  The game ends
  after ``rounds`` rounds, or at once when one player is left (the round in
  progress counts as played).  The remaining player(s) with the most money
  win; several equal richest players share the win (a tie).

State layout
------------
``state`` is an int64 array (4, MAX_SEATS): rows :data:`POS` (0-based
square), :data:`MONEY`, :data:`JAIL` (-1 when free, else the number of failed
jail turns so far, 0..2) and :data:`ALIVE` (1 or 0).  ``owner`` holds the
owning seat of each square, -1 when unowned.  ``cfg`` is an int64 array
indexed by the ``C_*`` constants.  ``seats`` is int64 (MAX_SEATS, 2): buy
reserve (-1 = never) and jail strategy (0 short, 1 long).  ``cursor`` is an
int64 array of 2: the next dice and chance positions in the scripts.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from .board import CHANCE, GO_TO_JAIL, INCOME_TAX, PROPERTY
from ..rng import below, xoshiro

__all__ = [
    "MAX_SEATS",
    "START_MONEY",
    "SALARY",
    "JAIL_FINE",
    "SHORT",
    "LONG",
    "NEVER",
    "POS",
    "MONEY",
    "JAIL",
    "ALIVE",
    "C_PLAYERS",
    "C_SIDES",
    "C_ROUNDS",
    "C_GO",
    "C_JAIL",
    "C_SIZE",
    "make_cfg",
    "new_state",
    "reset_state",
    "draw_die",
    "draw_chance",
    "income_tax",
    "advance",
    "land",
    "jail_turn",
    "retire",
    "play_turn",
    "play_game",
    "winners",
    "scripted_turn",
    "scripted_game",
]

MAX_SEATS = 6
START_MONEY = 1500
SALARY = 1500
JAIL_FINE = 150
SHORT, LONG = 0, 1
NEVER = -1

POS, MONEY, JAIL, ALIVE = 0, 1, 2, 3
C_PLAYERS, C_SIDES, C_ROUNDS, C_GO, C_JAIL, C_SIZE = range(6)


def make_cfg(players: int, sides: int, rounds: int, go: int, jail: int) -> np.ndarray:
    """The int64 rule-configuration array read by the kernels."""
    cfg = np.zeros(C_SIZE, dtype=np.int64)
    cfg[C_PLAYERS], cfg[C_SIDES], cfg[C_ROUNDS] = players, sides, rounds
    cfg[C_GO], cfg[C_JAIL] = go, jail
    return cfg


@njit(cache=True, nogil=True)
def reset_state(cfg, state, owner):
    """Start a game: every seat in play on Go with HKD 1500, nothing owned."""
    state[:, :] = 0
    state[JAIL, :] = -1
    for p in range(cfg[C_PLAYERS]):
        state[POS, p] = cfg[C_GO]
        state[MONEY, p] = START_MONEY
        state[ALIVE, p] = 1
    owner[:] = -1


def new_state(cfg: np.ndarray, n_squares: int) -> tuple[np.ndarray, np.ndarray]:
    """A fresh (state, owner) pair at the start of a game."""
    state = np.zeros((4, MAX_SEATS), dtype=np.int64)
    owner = np.empty(n_squares, dtype=np.int64)
    reset_state(cfg, state, owner)
    return state, owner


@njit(cache=True, inline="always")
def draw_die(s, sides, scripted, dice_script, cursor):
    """(die face in 1..sides, stream ``s`` advanced): the next scripted face, or a random one.

    ``s`` is the xoshiro256** state as a tuple of 4 uint64 scalars, so that it
    stays in registers through a game (:func:`boardsweep.core.rng.xoshiro`).
    """
    if scripted:
        i = cursor[0]
        if i >= dice_script.shape[0]:
            raise IndexError("dice script exhausted")
        cursor[0] = i + 1
        return dice_script[i], s
    x, s0, s1, s2, s3 = xoshiro(s[0], s[1], s[2], s[3])
    return below(x >> uint64(32), sides) + 1, (s0, s1, s2, s3)


@njit(cache=True, inline="always")
def draw_chance(s, chance_table, scripted, chance_script, cursor):
    """(Chance amount, stream advanced): the next scripted amount, or a uniform table entry."""
    if scripted:
        i = cursor[1]
        if i >= chance_script.shape[0]:
            raise IndexError("chance script exhausted")
        cursor[1] = i + 1
        return chance_script[i], s
    x, s0, s1, s2, s3 = xoshiro(s[0], s[1], s[2], s[3])
    return chance_table[uint64(below(x >> uint64(32), chance_table.shape[0]))], (s0, s1, s2, s3)


@njit(cache=True, inline="always")
def income_tax(money):
    """10% of ``money`` rounded down to a multiple of 10 (0 if money < 0)."""
    if money <= 0:
        return 0
    return (money // 100) * 10


@njit(cache=True, inline="always")
def advance(pos, steps, n, go):
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
def _property(is_property, holder, p, reserve, money, price):
    """(buys, pays rent) of seat ``p`` landing on a square owned by ``holder``
    (-1: nobody; squares that are not properties are never owned), as 0/1
    integers computed without branches."""
    buy = (is_property & (holder < 0) & (reserve >= 0) & (money - price >= reserve))
    return np.int64(buy), np.int64((holder >= 0) & (holder != p))


@njit(cache=True, inline="always")
def land(p, sq, money, reserve, board, jail_sq, chance_table, state, owner, s, scripted,
         chance_script, cursor):
    """Resolve square ``sq`` that seat ``p``, holding ``money``, has just landed on.

    Returns (square, money, jail, stream): the square is the jail's and jail 0
    after Go To Jail, else ``sq`` and -1.  A property (the common case) is
    settled by arithmetic (:func:`_property`): buy if unowned and the seat's
    ``reserve`` allows, pay the rent (into ``state``) if another seat owns it.
    """
    at = uint64(sq)  # no negative-index wrap-around on the hot path
    kind, price, rent = board[at, 0], board[at, 1], board[at, 2]
    holder = owner[at]
    buy, pay = _property(kind == PROPERTY, holder, p, reserve, money, price)
    money -= buy * price + pay * rent
    state[MONEY, uint64(holder if pay else p)] += pay * rent
    owner[at] = p if buy else holder
    if kind == CHANCE:
        amount, s = draw_chance(s, chance_table, scripted, chance_script, cursor)
        money += amount
    elif kind == INCOME_TAX:
        money -= income_tax(money)
    elif kind == GO_TO_JAIL:
        return jail_sq, money, 0, s
    return sq, money, -1, s


@njit(cache=True, inline="always")
def jail_turn(failed, strategy, money, sides, s, scripted, dice_script, cursor):
    """A turn that starts in jail after ``failed`` failed turns (0..2).

    Returns (steps to move, 0: stays in jail; money; jail: -1 when out, else
    the failed turns so far; stream).
    """
    d1, s = draw_die(s, sides, scripted, dice_script, cursor)
    d2, s = draw_die(s, sides, scripted, dice_script, cursor)
    if strategy == SHORT and failed < 2:
        return d1 + d2, money - JAIL_FINE, -1, s
    if d1 == d2:
        return d1 + d2, money, -1, s
    if failed == 2:
        return d1 + d2, money - JAIL_FINE, -1, s
    return 0, money, failed + 1, s


@njit(cache=True, inline="always")
def retire(p, state, owner):
    """Seat ``p`` leaves the game; her properties become unowned."""
    state[ALIVE, p] = 0
    for sq in range(owner.shape[0]):
        if owner[sq] == p:
            owner[sq] = -1


@njit(cache=True, inline="always")
def play_turn(p, board, cfg, seats, chance_table, state, owner, s, scripted, dice_script,
              chance_script, cursor):
    """Play one turn of seat ``p``; return (the location it ends on, stream).

    The location is the 0-based square, or ``board.shape[0]`` (IN_JAIL) when
    the turn ends in jail.  A player left with negative money retires.  The
    seat's position, money and jail count are held in locals for the turn.
    """
    n = board.shape[0]
    pos, money, jail = state[POS, p], state[MONEY, p], state[JAIL, p]
    if jail >= 0:
        steps, money, jail, s = jail_turn(jail, seats[p, 1], money, cfg[C_SIDES], s, scripted,
                                          dice_script, cursor)
    else:
        d1, s = draw_die(s, cfg[C_SIDES], scripted, dice_script, cursor)
        d2, s = draw_die(s, cfg[C_SIDES], scripted, dice_script, cursor)
        steps = d1 + d2
    if steps > 0:
        pos, passes = advance(pos, steps, n, cfg[C_GO])
        pos, money, jail, s = land(p, pos, money + SALARY * passes, seats[p, 0], board, cfg[C_JAIL],
                                   chance_table, state, owner, s, scripted, chance_script, cursor)
    state[POS, p], state[MONEY, p], state[JAIL, p] = pos, money, jail
    if money < 0:
        retire(p, state, owner)
    return (n if jail >= 0 else pos), s


@njit(cache=True, nogil=True, _nrt=False)
def play_game(board, cfg, seats, chance_table, state, owner, landings, rng, scripted,
              dice_script, chance_script, cursor):
    """Play a game from ``state`` to its end; return the number of rounds played.

    Every turn's end location is added to ``landings`` (length squares + 1).
    The stream ``rng`` (4 x uint64) is read into scalars at the start and
    written back at the end.

    Compiled without numba's reference counting (``_nrt=False``; nothing here
    allocates): otherwise every array handed to the inlined rule helpers costs
    an atomic increment and decrement per turn, which took most of the time.
    """
    players = cfg[C_PLAYERS]
    s = (rng[0], rng[1], rng[2], rng[3])
    alive = 0
    for p in range(players):
        alive += state[ALIVE, p]
    played = cfg[C_ROUNDS]
    for r in range(cfg[C_ROUNDS]):
        for p in range(players):
            if state[ALIVE, p] == 0:
                continue
            loc, s = play_turn(p, board, cfg, seats, chance_table, state, owner, s, scripted,
                               dice_script, chance_script, cursor)
            landings[uint64(loc)] += 1
            if state[ALIVE, p] == 0:
                alive -= 1
                if alive <= 1:
                    played = r + 1
                    break
        if played <= r + 1:
            break
    rng[0], rng[1], rng[2], rng[3] = s
    return played


@njit(cache=True, nogil=True)
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


_NO_RNG = np.zeros(4, dtype=np.uint64)


def _scripts(dice: list[int] | np.ndarray, chance: list[int] | np.ndarray, sides: int):
    dice_script = np.asarray(dice, dtype=np.int64).reshape(-1)
    chance_script = np.asarray(chance, dtype=np.int64).reshape(-1)
    if dice_script.size and (dice_script.min() < 1 or dice_script.max() > sides):
        raise ValueError(f"scripted dice faces must be in 1..{sides}")
    return dice_script, chance_script, np.zeros(2, dtype=np.int64)


def scripted_turn(
    p: int,
    board: np.ndarray,
    cfg: np.ndarray,
    seats: np.ndarray,
    state: np.ndarray,
    owner: np.ndarray,
    dice: list[int],
    chance: list[int] = (),
) -> int:
    """Play one turn of seat ``p`` in place with scripted dice faces and chance amounts.

    Returns the location the turn ends on (see :func:`play_turn`).  Raises
    IndexError if the scripts run out.
    """
    dice_script, chance_script, cursor = _scripts(dice, chance, int(cfg[C_SIDES]))
    table = np.zeros(1, dtype=np.int64)
    s = (_NO_RNG[0], _NO_RNG[1], _NO_RNG[2], _NO_RNG[3])
    return int(play_turn(p, board, cfg, seats, table, state, owner, s, True,
                         dice_script, chance_script, cursor)[0])


def scripted_game(
    board: np.ndarray,
    cfg: np.ndarray,
    seats: np.ndarray,
    dice: list[int],
    chance: list[int] = (),
    state: np.ndarray | None = None,
    owner: np.ndarray | None = None,
) -> dict[str, np.ndarray | int]:
    """Play a whole game with scripted dice faces and chance amounts.

    The game starts from the usual start (everyone on Go with HKD 1500), or
    from copies of ``state`` and ``owner`` when given.

    Returns
    -------
    dict
        ``rounds`` played, ``landings`` per location, final ``state`` and
        ``owner``, ``won`` flags per seat and ``n_winners``.
    """
    dice_script, chance_script, cursor = _scripts(dice, chance, int(cfg[C_SIDES]))
    start_state, start_owner = new_state(cfg, board.shape[0])
    state = start_state if state is None else np.array(state, dtype=np.int64)
    owner = start_owner if owner is None else np.array(owner, dtype=np.int64)
    landings = np.zeros(board.shape[0] + 1, dtype=np.int64)
    table = np.zeros(1, dtype=np.int64)
    rounds = play_game(board, cfg, seats, table, state, owner, landings, _NO_RNG.copy(), True,
                       dice_script, chance_script, cursor)
    won = np.zeros(MAX_SEATS, dtype=np.int64)
    n_winners = winners(cfg, state, won)
    return {"rounds": int(rounds), "landings": landings, "state": state, "owner": owner,
            "won": won, "n_winners": int(n_winners)}
