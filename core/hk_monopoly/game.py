"""hk_monopoly registered through the game interface (:mod:`boardsweep.core.games`).

Parameters
----------
players : int, 2..6 (default 4)
    Players in each game, in seats P1..Pn (P1 moves first).
dice_sides : int, 2..20 (default 4)
    Faces of each of the two dice.
buy_policy : str (default ``always``)
    ``always`` (buy whenever she can pay), ``never``, or ``reserve:R`` (buy
    only if at least R HKD remain after buying).  One value for every seat or
    a comma-separated list with one value per seat, e.g.
    ``always,never,reserve:300``.
jail_strategy : str (default ``short``)
    ``short`` (pay the HKD 150 fine at once) or ``long`` (roll for doubles);
    one value or a comma-separated list per seat.
chance : str (default ``uniform:-300:200:10``)
    The Chance distribution: ``uniform:LO:HI:STEP`` is uniform over the
    non-zero multiples of STEP from LO to HI (the default: the 50 amounts
    -300, ..., -10, 10, ..., 200); ``values:A,B,...`` is uniform over the
    listed amounts (repeat an amount to weight it).
board : str (default ``default``)
    Path of a board file (TOML, see ``core/hk_monopoly/board.toml``) or
    ``default`` for the shipped board.
rounds : int, >= 1 (default 100)
    The game ends after this many rounds (or when one player is left).

Run shape: ``games`` (default 1000); checkpoints count games.  Output arrays
have a fixed ``seat`` dimension of size 6 (unused seats are zero) and a
``location`` dimension of 21 (the 20 squares, then ``IN_JAIL``); see
:mod:`boardsweep.core.hk_monopoly.simulate` for their meaning.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..games import Game, Headline, Param, ParameterError, Ratio, Variable, column_groups
from .board import default_board, load_board
from .rules import C_GO, C_JAIL, C_PLAYERS, C_ROUNDS, C_SIDES, C_SIZE, LONG, MAX_SEATS, NEVER, SHORT, make_cfg
from .simulate import simulate_games, simulate_runs

__all__ = [
    "GAME",
    "SEATS",
    "parse_buy_policy",
    "parse_jail_strategy",
    "parse_chance",
    "seat_table",
    "win_interval",
]

#: Seat labels of the fixed seat dimension.
SEATS = tuple(f"P{i + 1}" for i in range(MAX_SEATS))
_BUY_ALLOWED = "'always', 'never' or 'reserve:R' (R an integer >= 0)"
_JAIL = {"short": SHORT, "long": LONG}


def _per_seat(name: str, value: str, allowed: str, parse_one) -> list:
    items = [item.strip() for item in value.split(",")]
    try:
        return [parse_one(item) for item in items]
    except ValueError:
        raise ParameterError(
            f"parameter {name!r}: {value!r} is not allowed; expected {allowed}, "
            "or a comma-separated list of these with one value per seat"
        ) from None


def _buy_one(item: str) -> int:
    if item == "always":
        return 0
    if item == "never":
        return NEVER
    head, _, tail = item.partition(":")
    if head != "reserve" or not tail.strip().isdigit():
        raise ValueError(item)
    return int(tail)


def parse_buy_policy(value: str) -> list[int]:
    """Per-seat buy reserves from a ``buy_policy`` value (-1 means never)."""
    return _per_seat("buy_policy", value, _BUY_ALLOWED, _buy_one)


def _jail_one(item: str) -> int:
    if item not in _JAIL:
        raise ValueError(item)
    return _JAIL[item]


def parse_jail_strategy(value: str) -> list[int]:
    """Per-seat jail strategies from a ``jail_strategy`` value (0 short, 1 long)."""
    return _per_seat("jail_strategy", value, "'short' or 'long'", _jail_one)


def _chance_error(value: str, why: str) -> ParameterError:
    return ParameterError(
        f"parameter 'chance': {value!r} is not allowed ({why}); expected "
        "'uniform:LO:HI:STEP' (the non-zero multiples of STEP from LO to HI, STEP > 0) "
        "or 'values:A,B,...' (integer amounts, equally likely)"
    )


def parse_chance(value: str) -> np.ndarray:
    """The Chance amounts (int64, each equally likely) described by a ``chance`` value."""
    kind, _, rest = value.partition(":")
    try:
        numbers = [int(x) for x in rest.replace(":", ",").split(",")]
    except ValueError:
        raise _chance_error(value, "amounts must be integers") from None
    if kind == "values":
        amounts = numbers
    elif kind == "uniform":
        if len(numbers) != 3 or numbers[2] <= 0 or numbers[0] > numbers[1]:
            raise _chance_error(value, "need LO <= HI and STEP > 0")
        lo, hi, step = numbers
        amounts = [a for a in range(-(-lo // step) * step, hi + 1, step) if a != 0]
    else:
        raise _chance_error(value, f"unknown kind {kind!r}")
    if not amounts:
        raise _chance_error(value, "no amounts")
    return np.array(amounts, dtype=np.int64)


def _check_text(parse):
    def check(value: str) -> str:
        parse(value)
        return value

    return check


def _check_board(value: str) -> str:
    load_board(value)
    return value


def _expand(name: str, values: list[int], players: int) -> list[int]:
    if len(values) == 1:
        return values * players
    if len(values) != players:
        raise ParameterError(
            f"parameter {name!r}: {len(values)} per-seat values given for players={players}; "
            f"expected one value for every seat or exactly {players} comma-separated values"
        )
    return values


def _check_params(params: dict) -> None:
    """One value for every seat or one per seat (each value's grammar: checked by its parameter)."""
    players = params["players"]
    for name in ("buy_policy", "jail_strategy"):
        _expand(name, [None] * (params[name].count(",") + 1), players)


def seat_table(params: dict) -> np.ndarray:
    """int64 (6, 2) per-seat strategies: buy reserve (-1 never), jail strategy."""
    players = params["players"]
    seats = np.zeros((MAX_SEATS, 2), dtype=np.int64)
    seats[:players, 0] = _expand("buy_policy", parse_buy_policy(params["buy_policy"]), players)
    seats[:players, 1] = _expand("jail_strategy", parse_jail_strategy(params["jail_strategy"]), players)
    return seats


def _seat_labels(params: dict) -> dict[str, str]:
    """``P1`` -> ``"always/short"`` for the seats in play."""
    players = params["players"]
    buy = [x.strip() for x in params["buy_policy"].split(",")]
    jail = [x.strip() for x in params["jail_strategy"].split(",")]
    buy, jail = (buy * players if len(buy) == 1 else buy), (jail * players if len(jail) == 1 else jail)
    return {SEATS[p]: f"{buy[p]}/{jail[p]}" for p in range(players)}


def _simulate(params: dict, seed, run_shape: dict, checkpoints: np.ndarray) -> dict[str, np.ndarray]:
    checkpoints = np.asarray(checkpoints, dtype=np.int64)
    if checkpoints.size == 0 or checkpoints[-1] != run_shape["games"]:
        raise ParameterError(
            f"checkpoints must end at the run's games ({run_shape['games']}), got {checkpoints.tolist()}"
        )
    board = load_board(params["board"])
    cfg = make_cfg(params["players"], params["dice_sides"], params["rounds"], board.go, board.jail)
    return simulate_games(board.table, cfg, seat_table(params), parse_chance(params["chance"]),
                          seed, checkpoints)


@functools.lru_cache(maxsize=1 << 16)
def _seats(players: int, buy_policy: str, jail_strategy: str) -> np.ndarray:
    """:func:`seat_table` of these values, made once per process (read-only)."""
    table = seat_table({"players": players, "buy_policy": buy_policy, "jail_strategy": jail_strategy})
    table.setflags(write=False)
    return table


def _codes(columns: dict, names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """(the distinct combinations of ``names``' value indices, each run's
    combination, each combination's runs): :func:`~boardsweep.core.games.column_groups`."""
    return column_groups(np.stack([np.asarray(columns[n][1], dtype=np.int64) for n in names], axis=1))


def _simulate_batch(columns: dict, keys: np.ndarray, run_shape: dict, checkpoints: np.ndarray) -> dict[str, np.ndarray]:
    """Many runs at once (:attr:`Game.simulate_batch`): rules as columns,
    each per-seat strategy parsed once per distinct (players, policy, jail)
    combination, one compiled call per distinct (board, chance) pair."""
    checkpoints = np.asarray(checkpoints, dtype=np.int64)
    if checkpoints.size == 0 or checkpoints[-1] != run_shape["games"]:
        raise ParameterError(
            f"checkpoints must end at the run's games ({run_shape['games']}), got {checkpoints.tolist()}"
        )
    n = len(keys)
    combos, which, _ = _codes(columns, ("players", "buy_policy", "jail_strategy"))
    tables = np.stack([_seats(columns["players"][0][p], columns["buy_policy"][0][b], columns["jail_strategy"][0][j])
                       for p, b, j in combos])
    seats = tables[which.reshape(-1)]
    cfgs = np.zeros((n, C_SIZE), dtype=np.int64)
    for col, name in ((C_PLAYERS, "players"), (C_SIDES, "dice_sides"), (C_ROUNDS, "rounds")):
        cfgs[:, col] = np.asarray(columns[name][0], dtype=np.int64)[np.asarray(columns[name][1])]
    pairs, _, members = _codes(columns, ("board", "chance"))
    out: dict[str, np.ndarray] = {}
    for g, (b, c) in enumerate(pairs):
        board, rows = load_board(columns["board"][0][b]), members[g]
        cfgs[rows, C_GO], cfgs[rows, C_JAIL] = board.go, board.jail
        part = simulate_runs(board.table, cfgs[rows], seats[rows], parse_chance(columns["chance"][0][c]),
                             keys[rows], checkpoints)
        for name, values in part.items():
            if name not in out:
                out[name] = np.zeros((n, *values.shape[1:]), dtype=values.dtype)
            out[name][rows] = values  # one board per call (coords_params): the shapes agree
    return out


def _exact_arrays(params: dict) -> dict[str, np.ndarray]:
    """Exact frequencies averaged over the seats in play (equal turns per seat)."""
    from .exact import horizon_frequency, stationary_frequency  # scipy.sparse: imported where a chain is solved

    board = load_board(params["board"])
    strategies = seat_table(params)[: params["players"], 1]
    sides, rounds = params["dice_sides"], params["rounds"]
    freq = [stationary_frequency(board.table, board.jail, sides, bool(s)) for s in strategies]
    horizon = [horizon_frequency(board.table, board.go, board.jail, sides, bool(s), rounds)
               for s in strategies]
    return {"exact_frequency": np.mean(freq, axis=0), "exact_horizon_frequency": np.mean(horizon, axis=0)}


def _exact(params: dict, run_shape: dict | None = None, checkpoints=None) -> dict[str, np.ndarray]:
    return _exact_arrays(params)


def _summarize_exact(params: dict) -> dict[str, Any]:
    """``frequency``: the long-run share of turns ending on each location;
    ``horizon_frequency``: the expected share over the first ``rounds`` turns
    from Go of a token that never retires (what a simulation estimates where
    nobody retires)."""
    labels = load_board(params["board"]).labels()
    arrays = _exact_arrays(params)
    return {
        "game": "hk_monopoly",
        "jail_strategy": params["jail_strategy"],
        "dice_sides": params["dice_sides"],
        "frequency": dict(zip(labels, arrays["exact_frequency"].tolist())),
        "horizon_turns": params["rounds"],
        "horizon_frequency": dict(zip(labels, arrays["exact_horizon_frequency"].tolist())),
    }


def win_interval(wins: int, games: int) -> tuple[float, float]:
    """Exact (Clopper-Pearson) 95% interval of a seat's win share ``wins / games``:
    the interval the pipeline prints for every share (:func:`..stats.proportion_interval`)."""
    from ..stats import proportion_interval  # scipy.special: imported where an interval is made

    low, high = proportion_interval(wins, games, 0.95)
    return float(low), float(high)


def _per_seat_shares(counts: np.ndarray, players: int, games: int) -> dict[str, float]:
    return {SEATS[p]: counts[p] / games for p in range(players)}


def _summarize(params: dict, sim: dict[str, np.ndarray], run_shape: dict) -> dict[str, Any]:
    players = params["players"]
    games = int(sim["games"][-1])
    wins = sim["wins"][-1]
    intervals = [win_interval(int(wins[p]), games) for p in range(players)]
    labels = load_board(params["board"]).labels()
    turns = int(sim["turns"][-1])
    return {
        "game": "hk_monopoly",
        "games": games,
        "players": players,
        "strategy": _seat_labels(params),
        "win_share": _per_seat_shares(wins, players, games),
        "win_low95": {SEATS[p]: intervals[p][0] for p in range(players)},
        "win_high95": {SEATS[p]: intervals[p][1] for p in range(players)},
        "tie_share": _per_seat_shares(sim["ties"][-1], players, games),
        "retirement_share": _per_seat_shares(sim["retired"][-1], players, games),
        "mean_final_money": _per_seat_shares(sim["money"][-1], players, games),
        "mean_properties": _per_seat_shares(sim["properties"][-1], players, games),
        "mean_rounds": int(sim["rounds"][-1]) / games,
        "turns": turns,
        "frequency": dict(zip(labels, (sim["landings"][-1] / max(turns, 1)).tolist())),
    }


def _coords(params: dict) -> dict[str, tuple[str, ...]]:
    return {"seat": SEATS, "location": load_board(params.get("board", "default")).labels()}


_SEAT = ("checkpoint", "seat")
GAME = Game(
    name="hk_monopoly",
    description="20-square HKD money game with properties, rent and jail",
    params=(
        Param("players", 4, "players per game (seats P1..Pn)", minimum=2, maximum=MAX_SEATS),
        Param("dice_sides", 4, "faces of each of the two dice", minimum=2, maximum=20),
        Param("buy_policy", "always",
              "always | never | reserve:R, or a comma-separated list per seat",
              check=_check_text(parse_buy_policy)),
        Param("jail_strategy", "short",
              "short (pay at once) | long (roll for doubles), or a list per seat",
              check=_check_text(parse_jail_strategy)),
        Param("chance", "uniform:-300:200:10",
              "Chance amounts: uniform:LO:HI:STEP (non-zero multiples) or values:A,B,...",
              check=_check_text(parse_chance)),
        Param("board", "default", "board file path (TOML) or 'default'", check=_check_board),
        Param("rounds", 100, "the game ends after this many rounds", minimum=1, maximum=100_000),
    ),
    run_shape={"games": 1000},
    checkpoint_of="games",
    coords={"seat": SEATS, "location": default_board().labels()},
    variables={
        "wins": Variable(_SEAT, "int64", "games won alone by the seat"),
        "ties": Variable(_SEAT, "int64", "games whose win the seat shared"),
        "money": Variable(_SEAT, "int64", "sum of final money (retired: money at retirement)"),
        "retired": Variable(_SEAT, "int64", "games in which the seat retired"),
        "properties": Variable(_SEAT, "int64", "sum of properties owned at the end"),
        "landings": Variable(("checkpoint", "location"), "int64", "turns ending on each location"),
        "turns": Variable(("checkpoint",), "int64", "turns played"),
        "rounds": Variable(("checkpoint",), "int64", "rounds played"),
        "games": Variable(("checkpoint",), "int64", "games played"),
    },
    # exact_horizon_frequency first: it is what a run's pooled landing frequencies
    # estimate (exactly when nobody retires), so generic analysis code that
    # takes the first exact variable over `location` compares like with like.
    exact_variables={
        "exact_horizon_frequency": Variable(("location",), "float64",
                                            "expected share over `rounds` turns from Go, no retirement"),
        "exact_frequency": Variable(("location",), "float64",
                                    "long-run share of turns ending on each location"),
    },
    simulate=_simulate,
    simulate_batch=_simulate_batch,
    summarize=_summarize,
    exact=_exact,
    exact_params=("board", "players", "jail_strategy", "dice_sides", "rounds"),  # what _exact_arrays reads
    summarize_exact=_summarize_exact,
    check_params=_check_params,
    checked_params=(("players", "buy_policy"), ("players", "jail_strategy")),  # _check_params: each against players
    coords_fn=_coords,
    coords_params=("board",),  # what _coords reads
    ratios={
        "win_share": Ratio("wins", "games"),
        "tie_share": Ratio("ties", "games"),
        "retirement_share": Ratio("retired", "games"),
    },
    headlines=(
        Headline("win_share", "share of games the seat wins alone", "wins", "games", "wins",
                 question="How often does each seat win the game alone?"),
        Headline("mean_rounds", "mean game length in rounds", "rounds", "games",
                 question="How many rounds does a game last (at most the rounds cap)?", cap="rounds"),
        # the movement chain is the expectation only if every token plays every
        # round: a retirement ends a token's (or the whole game's) turns at a time
        # that depends on where it landed, so points where a seat retired are
        # not tested against it (a correct simulator would read "disagree")
        Headline("landing_frequency", "share of turns ending on each location (exact: the movement "
                 "chain over the game's rounds, tested only where nobody retired)", "landings", "turns",
                 exact="exact_horizon_frequency", kind="distribution", exact_unless="retired",
                 question="How often does a turn end on each square of the board?"),
    ),
    # the rules' document counts money in Hong Kong dollars (start HKD 1500, salary HKD 1500)
    # the strategies compared head to head (boardsweep.pipeline.analysis.headtohead): a grid
    # axis among `per_seat` whose values give one strategy per seat ("always,never") pits
    # them against each other; wins alone are exclusive, so a game scores +1, -1 or 0; a
    # two-seat game ends before the rounds cap exactly when one seat retired (`ended_early`)
    extras={"units": {"money": "HKD"},
            "head_to_head": {"per_seat": ("buy_policy", "jail_strategy"), "wins": "wins",
                             "games": "games", "ties": "ties", "ended_early": "retired",
                             "cap": "rounds"}},
)
