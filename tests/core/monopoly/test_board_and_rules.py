"""Board data, decks, and parameter validation."""

import numpy as np
import pytest

from boardsweep.core.games import ParameterError, get_game
from boardsweep.core.monopoly.board import LOCATIONS, merge_jail, modal_string, next_railway, next_utility
from boardsweep.core.monopoly.cards import CHANCE_DECKS, COMMUNITY_CHEST_DECK, STAY, card_code, card_label
from boardsweep.core.monopoly.rules import Rules


def test_locations_are_40_squares_and_in_jail():
    assert len(LOCATIONS) == 41
    assert LOCATIONS[0] == "GO" and LOCATIONS[10] == "JAIL" and LOCATIONS[30] == "G2J"
    assert LOCATIONS[39] == "H2" and LOCATIONS[40] == "IN_JAIL"


def test_next_railway_and_utility_move_forward_from_chance():
    assert [next_railway[s] for s in (7, 22, 36)] == [15, 25, 5]
    assert [next_utility[s] for s in (7, 22, 36)] == [12, 28, 12]


def test_decks_have_the_documented_movers():
    standard, classic = CHANCE_DECKS["standard"], CHANCE_DECKS["classic15"]
    assert len(standard) == 16 and np.sum(standard == STAY) == 6
    assert len(classic) == 15 and np.sum(classic == STAY) == 6
    assert len(COMMUNITY_CHEST_DECK) == 16 and np.sum(COMMUNITY_CHEST_DECK == STAY) == 14
    # classic15 has one next-railway card, standard two
    assert np.sum(classic == card_code("R")) == 1 and np.sum(standard == card_code("R")) == 2


def test_card_labels_round_trip():
    for label in ["GO", "JAIL", "C1", "E3", "H2", "R1", "R", "U", "BACK3", "STAY"]:
        assert card_label(card_code(label)) == label
    with pytest.raises(ValueError, match="unknown card"):
        card_code("FREE_MONEY")


def test_merge_jail_and_modal_string():
    f = np.zeros(41)
    f[40], f[10], f[24], f[0] = 0.04, 0.03, 0.05, 0.045
    assert merge_jail(f)[10] == pytest.approx(0.07)
    assert modal_string(f) == "102400"


@pytest.mark.parametrize(
    "params, match",
    [
        ({"dice_sides": 1}, "'dice_sides': 1 is not allowed; expected an integer >= 2"),
        ({"dice_sides": "six"}, "'dice_sides'"),
        ({"deck_policy": "riffle"}, "'deck_policy': 'riffle'.*'independent', 'shuffled_cycle'"),
        ({"jail_strategy": "medium"}, "'jail_strategy': 'medium'.*'short', 'long'"),
        ({"chance_deck": "uk"}, "'chance_deck': 'uk'.*'standard', 'classic15'"),
        ({"tally": "per_game"}, "'tally': 'per_game'.*'per_roll', 'per_landing', 'per_turn'"),
        ({"dice": 6}, "no parameter 'dice'"),
    ],
)
def test_bad_parameters_name_parameter_value_and_allowed(params, match):
    with pytest.raises(ParameterError, match=match):
        Rules.from_params(params)
    with pytest.raises(ParameterError, match=match):
        get_game("monopoly").resolve_params(params)
