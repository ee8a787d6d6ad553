"""Monopoly's batch entry (``GAME.simulate_batch``): a block of runs over a
grid mixing every rule variant, and every kernel variant (deck policy, one
or several players, a throw column that is the pair of faces or looked up),
gives each run's arrays bit for bit as ``GAME.simulate`` of its seed."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from boardsweep.core.monopoly.game import GAME
from boardsweep.core.rng import seed_key

NAMES = ("dice_sides", "deck_policy", "jail_strategy", "chance_deck", "tally")
#: 2 sides: the pair of faces is the throw column; 9 sides: looked up.
GRID = list(itertools.product([2, 9], ["independent", "shuffled_cycle"], ["short", "long"],
                              ["standard", "classic15"], ["per_roll", "per_landing", "per_turn"]))


def _columns(points: list[tuple]) -> dict:
    """Per parameter, its distinct values and each run's index into them (as the pipeline gives them)."""
    columns = {}
    for i, name in enumerate(NAMES):
        values = tuple(sorted({p[i] for p in points}, key=str))
        columns[name] = (values, np.array([values.index(p[i]) for p in points], dtype=np.int64))
    return columns


@pytest.mark.parametrize("games, players", [(1, 1), (2, 3), (40, 2)])
def test_a_block_of_every_rule_variant_is_its_runs_one_by_one_bit_for_bit(games, players):
    points = GRID + GRID[::7]  # some points twice: runs sharing rules, with seeds of their own
    run_shape = {"games": games, "players": players, "turns": 37}
    checkpoints = np.array([1, 9, 37])
    seeds = [np.random.SeedSequence([5757, j]) for j in range(len(points))]
    block = GAME.simulate_batch(_columns(points), np.stack([seed_key(s) for s in seeds]), run_shape, checkpoints)
    assert sorted(block) == ["counts", "events", "rolls"]
    assert block["counts"].shape == (len(points), 3, 41) and block["counts"].dtype == np.int64
    for j, p in enumerate(points):
        one = GAME.simulate(dict(zip(NAMES, p)), seeds[j], run_shape, checkpoints)
        for name, values in one.items():
            assert np.array_equal(block[name][j], values), (p, name)
    assert len({block["counts"][j].tobytes() for j in range(len(points))}) == len(points)  # no two runs alike


def test_a_block_refuses_checkpoints_past_the_runs_turns():
    with pytest.raises(ValueError, match="checkpoints must be strictly increasing"):
        GAME.simulate_batch(_columns(GRID[:2]), np.zeros((2, 2), dtype=np.uint64),
                            {"games": 1, "players": 1, "turns": 10}, np.array([5, 11]))
