"""Exact Monopoly chains against public reference values and their own invariants."""

import numpy as np
import pytest

from boardsweep.core.markov import check_stochastic, stationary
from boardsweep.core.monopoly.board import IN_JAIL, N_LOCATIONS, merge_jail, modal_string
from boardsweep.core.monopoly.cards import CHANCE_DECKS, COMMUNITY_CHEST_DECK
from boardsweep.core.monopoly.exact import build_chain, expected_counts, long_run_frequency
from boardsweep.core.monopoly.rules import Rules

ALL_VARIANTS = [
    Rules(dice_sides=n, jail_strategy=j, chance_deck=c, tally=t)
    for n in (3, 6)
    for j in ("short", "long")
    for c in ("standard", "classic15")
    for t in ("per_roll", "per_landing", "per_turn")
]


@pytest.mark.parametrize("sides, modal", [(6, "102400"), (4, "101524"), (8, "102400"),
                                          (10, "100024"), (20, "100005")])
def test_pe84_modal_strings(sides, modal):
    assert modal_string(long_run_frequency(Rules(dice_sides=sides))) == modal


def test_pe84_exact_percentages_for_six_sided_dice():
    squares = merge_jail(long_run_frequency(Rules(dice_sides=6))) * 100
    assert squares[10] == pytest.approx(6.2195, abs=5e-5)
    assert squares[24] == pytest.approx(3.1858, abs=5e-5)
    assert squares[0] == pytest.approx(3.0961, abs=5e-5)
    # the statement's printed values are only approximate (DESIGN 3.1)
    assert squares[[10, 24, 0]] == pytest.approx([6.24, 3.18, 3.09], abs=0.03)


@pytest.mark.parametrize("rules", ALL_VARIANTS, ids=str)
def test_chain_is_stochastic_and_frequencies_sum_to_one(rules):
    chain = build_chain(rules)
    check_stochastic(chain.P)
    f = long_run_frequency(rules)
    assert f.shape == (N_LOCATIONS,)
    assert f.sum() == pytest.approx(1.0, abs=1e-12)
    assert f.min() >= 0
    assert f[30] == 0.0  # G2J is never a resting place


def test_per_roll_frequency_is_the_stationary_law_by_location():
    rules = Rules(dice_sides=5, jail_strategy="long")
    chain = build_chain(rules)
    pi = stationary(chain.P)
    by_location = np.bincount(chain.location, weights=pi, minlength=N_LOCATIONS)
    assert np.allclose(long_run_frequency(rules), by_location, atol=1e-13)


def test_long_jail_holds_more_mass_in_jail_than_short():
    short = long_run_frequency(Rules(jail_strategy="short"))
    long = long_run_frequency(Rules(jail_strategy="long"))
    assert long[IN_JAIL] > 2 * short[IN_JAIL]


def test_chain_sizes():
    assert build_chain(Rules()).P.shape == (121, 121)
    assert build_chain(Rules(jail_strategy="long")).P.shape == (123, 123)
    orders = (COMMUNITY_CHEST_DECK, CHANCE_DECKS["classic15"])
    chain = build_chain(Rules(deck_policy="shuffled_cycle", chance_deck="classic15"), orders)
    assert chain.P.shape == (121 * 16 * 15,) * 2
    check_stochastic(chain.P)


def test_fixed_deck_order_changes_the_answer_but_not_by_much():
    rng = np.random.default_rng(7)
    rules = Rules(deck_policy="shuffled_cycle")
    f = [long_run_frequency(rules, (rng.permutation(COMMUNITY_CHEST_DECK),
                                    rng.permutation(CHANCE_DECKS["standard"])))
         for _ in range(2)]
    independent = long_run_frequency(Rules())
    assert not np.allclose(f[0], f[1], atol=1e-6)
    assert np.abs(f[0] - independent).max() < 5e-3


def test_finite_horizon_turns_into_long_run_rate():
    rules = Rules(dice_sides=6, tally="per_landing", jail_strategy="long")
    out = expected_counts(rules, np.array([1, 150, 10_000, 1_000_000]))
    first = out["counts"][0]
    assert first[[2, 3, 4, 5, 6, 7]].sum() + first[8:].sum() > 0.99  # a first turn lands once or more
    rate = (out["counts"][3] - out["counts"][2]) / (out["events"][3] - out["events"][2])
    assert np.allclose(rate, long_run_frequency(rules), atol=1e-12)
    assert np.all(np.diff(out["rolls"]) > 0)


def test_first_turn_expected_rolls_by_hand():
    """Two 2-sided dice from GO.  Roll 1: 1-1 -> CC1 (double), 1-2 / 2-1 -> A2,
    2-2 -> T1 (double).  A second roll follows a double unless CC1's jail card
    (1/16) ends the turn: P = 1/4 * 15/16 + 1/4 = 31/64.  Second roll from GO
    (1/64: continue 31/64), CC1 (14/64) or T1 (16/64) (continue 1/2 each):
    P(third roll) = 1/64 * 31/64 + 30/64 * 1/2 = 991/4096."""
    out = expected_counts(Rules(dice_sides=2), np.array([1]))
    assert out["rolls"][0] == pytest.approx(1 + 31 / 64 + 991 / 4096, abs=1e-15)
    per_turn = expected_counts(Rules(dice_sides=2, tally="per_turn"), np.array([1, 2]))
    assert per_turn["events"] == pytest.approx([1.0, 2.0], abs=1e-14)
