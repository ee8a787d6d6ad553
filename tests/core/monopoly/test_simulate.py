"""The Monte Carlo kernel against the exact chains (5 standard errors, fixed seeds)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from boardsweep.core.monopoly.board import modal_string
from boardsweep.core.monopoly.cards import CHANCE_DECKS, COMMUNITY_CHEST_DECK
from boardsweep.core.monopoly.exact import expected_counts, long_run_frequency
from boardsweep.core.monopoly.rules import Rules
from boardsweep.core.monopoly.simulate import simulate_rules

REPLICATES = 48


def replicate_frequencies(rules, turns, seed0, deck_orders=None):
    """Frequencies of REPLICATES independent single-token runs (one per seed)."""
    freqs = []
    for r in range(REPLICATES):
        out = simulate_rules(rules, seed0 + r, 1, 1, turns, deck_orders=deck_orders)
        freqs.append(out["counts"][-1] / out["events"][-1])
    return np.array(freqs)


def assert_within_5_se(samples, exact):
    """Replicate mean within 5 standard errors of the exact value at every
    location; SE = sample sd / sqrt(R) from independent replicates.  Where the
    samples do not vary (a location never counted) the exact value must be 0."""
    mean = samples.mean(axis=0)
    se = samples.std(axis=0, ddof=1) / np.sqrt(len(samples))
    z = np.where(se > 0, np.abs(mean - exact) / np.where(se > 0, se, 1), 0.0)
    assert np.all(z < 5), f"max z = {z.max():.2f} at location {int(z.argmax())}"
    assert np.all(exact[se == 0] == mean[se == 0])


VARIANTS = [
    (n, j, c, t)
    for n in (4, 6)
    for j in ("short", "long")
    for c in ("standard", "classic15")
    for t in ("per_roll", "per_landing", "per_turn")
]


@pytest.mark.parametrize("sides, jail, deck, tally", VARIANTS)
def test_independent_frequencies_match_exact_long_run(sides, jail, deck, tally):
    rules = Rules(dice_sides=sides, jail_strategy=jail, chance_deck=deck, tally=tally)
    samples = replicate_frequencies(rules, 20_000, seed0=1000 * sides)
    assert_within_5_se(samples, long_run_frequency(rules))


@pytest.mark.parametrize("tally", ["per_roll", "per_landing", "per_turn"])
def test_stats102a_games_match_exact_expected_counts(tally):
    """1000 games of 2 players over 150 turns (seed 003's assignment) against the
    exact finite-horizon expectation from GO: unbiased at every checkpoint."""
    rules = Rules(chance_deck="classic15", jail_strategy="long", tally=tally)
    cp = np.array([10, 150])
    runs = np.array([simulate_rules(rules, 77 + r, 250, 2, 150, cp)["counts"]
                     for r in range(REPLICATES)])
    exact = 250 * 2 * expected_counts(rules, cp)["counts"]
    for k in range(cp.size):
        assert_within_5_se(runs[:, k], exact[k])


@pytest.mark.parametrize("jail, tally", [("short", "per_roll"), ("long", "per_landing")])
def test_fixed_deck_order_matches_fixed_order_chain(jail, tally):
    rng = np.random.default_rng(2024)
    orders = (rng.permutation(COMMUNITY_CHEST_DECK), rng.permutation(CHANCE_DECKS["standard"]))
    rules = Rules(deck_policy="shuffled_cycle", jail_strategy=jail, tally=tally)
    samples = replicate_frequencies(rules, 20_000, seed0=5, deck_orders=orders)
    assert_within_5_se(samples, long_run_frequency(rules, orders))


@pytest.mark.parametrize("sides, modal, turns, replicates",
                         [(4, "101524", 1_000_000, 8), (6, "102400", 12_000_000, 16)])
def test_pe84_modal_string_from_monte_carlo(sides, modal, turns, replicates):
    """PE84's answer from simulation alone.  With 6-sided dice GO (3.0961%) and
    D3 (3.0852%) differ by 1.1e-4, so the run is sized to tell them apart: the
    test also asserts that the third and fourth squares are separated by more
    than 5 standard errors (from independent replicates), so a lucky seed
    cannot make it pass."""
    from boardsweep.core.monopoly.board import merge_jail

    runs = [simulate_rules(Rules(dice_sides=sides), 840 + r, 1, 1, turns)
            for r in range(replicates)]
    f = np.array([merge_jail(o["counts"][-1] / o["events"][-1]) for o in runs])
    mean = f.mean(axis=0)
    assert modal_string(np.append(mean, 0.0)) == modal
    third, fourth = np.argsort(-mean)[2:4]
    gap = f[:, third] - f[:, fourth]
    assert gap.mean() > 5 * gap.std(ddof=1) / np.sqrt(replicates)


def test_same_seed_same_arrays_and_other_seed_other_arrays():
    rules = Rules(deck_policy="shuffled_cycle", jail_strategy="long", tally="per_landing")
    cp = np.array([1, 10, 100])
    a = simulate_rules(rules, 123, 50, 3, 100, cp)
    b = simulate_rules(rules, 123, 50, 3, 100, cp)
    c = simulate_rules(rules, 124, 50, 3, 100, cp)
    for key in a:
        assert np.array_equal(a[key], b[key])
    assert not np.array_equal(a["counts"], c["counts"])


def test_each_game_has_its_own_stream():
    """Game g's stream does not depend on how many games the run holds: the
    first 10 games of a 20-game run are the 10-game run."""
    rules = Rules(deck_policy="shuffled_cycle")
    ten = simulate_rules(rules, 9, 10, 2, 30)
    twenty = simulate_rules(rules, 9, 20, 2, 30)
    assert np.all(twenty["counts"] >= ten["counts"])
    assert twenty["events"][-1] > ten["events"][-1]
    ten_again = simulate_rules(rules, np.random.SeedSequence(9), 10, 2, 30)
    assert np.array_equal(ten["counts"], ten_again["counts"])


def test_counts_are_cumulative_and_consistent():
    rules = Rules(tally="per_landing", jail_strategy="long")
    out = simulate_rules(rules, 1, 20, 2, 150, np.array([1, 5, 150]))
    assert np.all(np.diff(out["counts"], axis=0) >= 0)
    assert np.array_equal(out["counts"].sum(axis=1), out["events"])
    assert np.all(out["counts"][:, 30] == 0)  # G2J never counted
    per_turn = simulate_rules(Rules(tally="per_turn"), 1, 20, 2, 150)
    assert per_turn["events"][-1] == 20 * 2 * 150


def test_bad_checkpoints_are_refused():
    with pytest.raises(ValueError, match="strictly increasing"):
        simulate_rules(Rules(), 1, 1, 1, 10, np.array([5, 5]))
    with pytest.raises(ValueError, match="strictly increasing"):
        simulate_rules(Rules(), 1, 1, 1, 10, np.array([11]))


_PLAIN = """
import json, sys, numpy as np
from boardsweep.core.monopoly.rules import Rules
from boardsweep.core.monopoly.simulate import simulate_rules
out = simulate_rules(Rules(**json.loads(sys.argv[1])), 31, 3, 2, 40, np.array([7, 40]))
print(json.dumps({k: v.tolist() for k, v in out.items()}))
"""


@pytest.mark.parametrize("params", [
    {"dice_sides": 6},
    {"dice_sides": 3, "deck_policy": "shuffled_cycle", "jail_strategy": "long",
     "chance_deck": "classic15", "tally": "per_landing"},
])
def test_compiled_kernel_equals_plain_python_bit_for_bit(params):
    """The same kernel run as plain Python (NUMBA_DISABLE_JIT=1) gives the same
    arrays: the benchmark's Python baseline plays exactly the same rules."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    plain = subprocess.run([sys.executable, "-c", _PLAIN, json.dumps(params)], env=env,
                           capture_output=True, text=True, check=True)
    compiled = subprocess.run([sys.executable, "-c", _PLAIN, json.dumps(params)],
                              capture_output=True, text=True, check=True)
    assert json.loads(plain.stdout) == json.loads(compiled.stdout)


def test_deck_orders_are_the_ones_the_kernel_played():
    """A run with the recovered orders fixed equals the shuffled run itself."""
    from boardsweep.core.monopoly.simulate import deck_orders

    rules = Rules(deck_policy="shuffled_cycle", tally="per_landing")
    seed = np.random.SeedSequence([5, 6])
    orders = deck_orders(rules, seed, 0)
    shuffled = simulate_rules(rules, seed, 1, 2, 500)
    fixed = simulate_rules(rules, seed, 1, 2, 500, deck_orders=orders)
    assert np.array_equal(shuffled["counts"], fixed["counts"])
    assert sorted(orders[1]) == sorted(rules.chance_cards)


def test_replicate_exact_follows_the_replicates_shuffle():
    from boardsweep.core.monopoly.game import GAME

    params = GAME.resolve_params({"deck_policy": "shuffled_cycle"})
    shape = {"games": 1, "players": 1, "turns": 20_000}
    a = GAME.extras["replicate_exact"](params, 1, shape)["exact_frequency"]
    b = GAME.extras["replicate_exact"](params, 2, shape)["exact_frequency"]
    assert a.sum() == pytest.approx(1.0) and not np.allclose(a, b, atol=1e-7)
    samples = np.array([simulate_rules(Rules(deck_policy="shuffled_cycle"), 1, 1, 1, 20_000)
                        ["counts"][-1]])
    assert samples.shape == (1, 41)
