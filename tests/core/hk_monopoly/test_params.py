"""Parameter parsing and validation through the game interface."""

from __future__ import annotations

import numpy as np
import pytest

from boardsweep.core.games import ParameterError, get_game
from boardsweep.core.hk_monopoly.game import parse_chance, seat_table, win_interval
from boardsweep.core.hk_monopoly.rules import LONG, NEVER, SHORT

GAME = get_game("hk_monopoly")


def test_defaults():
    params = GAME.resolve_params({})
    assert params == {
        "players": 4, "dice_sides": 4, "buy_policy": "always", "jail_strategy": "short",
        "chance": "uniform:-300:200:10", "board": "default", "rounds": 100,
    }
    assert GAME.run_shape == {"games": 1000} and GAME.checkpoint_of == "games"


def test_default_chance_is_the_50_nonzero_multiples_of_10():
    amounts = parse_chance("uniform:-300:200:10")
    assert amounts.tolist() == [a for a in range(-300, 201, 10) if a != 0]
    assert len(amounts) == 50


def test_other_chance_distributions():
    assert parse_chance("values:-50,20,20").tolist() == [-50, 20, 20]
    assert parse_chance("uniform:-25:25:10").tolist() == [-20, -10, 10, 20]


def test_seat_table_per_seat_lists():
    params = GAME.resolve_params(
        {"players": 3, "buy_policy": "always,never,reserve:300", "jail_strategy": "long"}
    )
    seats = seat_table(params)
    assert seats.shape == (6, 2)
    assert seats[:, 0].tolist() == [0, NEVER, 300, 0, 0, 0]
    assert seats[:, 1].tolist() == [LONG, LONG, LONG, SHORT, SHORT, SHORT]


@pytest.mark.parametrize(
    "given, fragments",
    [
        ({"players": 7}, ["'players'", "<= 6"]),
        ({"players": 1}, ["'players'", ">= 2"]),
        ({"dice_sides": 1}, ["'dice_sides'", ">= 2"]),
        ({"rounds": 0}, ["'rounds'", ">= 1"]),
        ({"buy_policy": "sometimes"}, ["'buy_policy'", "'always'", "'never'", "reserve:R"]),
        ({"buy_policy": "reserve:-5"}, ["'buy_policy'", "reserve:R"]),
        ({"jail_strategy": "medium"}, ["'jail_strategy'", "'short'", "'long'"]),
        ({"chance": "normal:0:1"}, ["'chance'", "uniform:LO:HI:STEP", "values:"]),
        ({"chance": "values:a,b"}, ["'chance'", "integers"]),
        ({"chance": "uniform:10:-10:10"}, ["'chance'", "LO <= HI"]),
        ({"players": 3, "buy_policy": "always,never"}, ["'buy_policy'", "players=3", "exactly 3"]),
        ({"players": 2, "jail_strategy": "short,long,long"}, ["'jail_strategy'", "players=2"]),
        ({"colour": "red"}, ["'colour'", "known parameters", "buy_policy"]),
    ],
)
def test_invalid_parameters_name_parameter_and_allowed_values(given, fragments):
    with pytest.raises(ParameterError) as info:
        GAME.resolve_params(given)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_cli_strings_parse():
    assert GAME.param("players").parse("5") == 5
    with pytest.raises(ParameterError, match="'players'"):
        GAME.param("players").parse("five")


def test_checkpoints_must_end_at_games():
    params = GAME.resolve_params({})
    with pytest.raises(ParameterError, match="checkpoints"):
        GAME.simulate(params, 0, {"games": 10}, np.array([5], dtype=np.int64))


def test_win_interval_is_the_exact_binomial_one_printed_everywhere():
    """``hk_monopoly simulate``'s win interval is scipy's exact (Clopper-Pearson) one, as in
    ``query`` and the report (it was Wilson's)."""
    from scipy.stats import binomtest

    for wins, games in [(50, 100), (0, 10), (10, 10), (3, 4000)]:
        expected = binomtest(wins, games).proportion_ci(0.95, method="exact")
        assert win_interval(wins, games) == pytest.approx((expected.low, expected.high), rel=1e-9, abs=1e-12)
    assert win_interval(0, 10)[0] == 0.0 and win_interval(10, 10)[1] == 1.0
