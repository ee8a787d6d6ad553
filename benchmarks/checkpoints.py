"""What checkpoints cost the Monopoly kernel: its time at a run's checkpoints
over its time at one checkpoint (the run's end), in one process, interleaved.

A Monopoly run records each game's histogram at every checkpoint (its log
checkpoints and, with the store's equal-batch series, 64 batch ends).  For
each shape below, four rule variants (independent and shuffled decks, short
and long jail, 4- to 8-sided dice), the same runs and seeds, the kernel
alone (``simulate.simulate_batch``'s compiled call, no tables built, no
outputs formed), best of ``--repeats``, summed over the variants:

* ``quickstart``: a task of the shipped quickstart, 4 runs x 32 games x 10^5
  turns, at its 16 log checkpoints and at those and 64 batch ends (79);
* ``short``: 4 runs x 2,000 games x 500 turns (games shorter than the
  batches are many), 1 and 4 players.

Usage::

    python benchmarks/checkpoints.py [--repeats 7]

Ratios, not seconds: other processes on the machine change both alike.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from boardsweep.core.batches import with_series
from boardsweep.core.games import log_checkpoints
from boardsweep.core.monopoly.rules import Rules
from boardsweep.core.monopoly.simulate import _play_runs, transition_tables

VARIANTS = [(4, "independent", "short"), (6, "shuffled_cycle", "long"), (8, "shuffled_cycle", "short"),
            (6, "independent", "long")]

#: name: (games, players, turns)
SHAPES = {"quickstart": (32, 1, 100_000), "short": (2_000, 1, 500), "short, 4 players": (2_000, 4, 500)}


def kernel_seconds(games: int, players: int, checkpoints: np.ndarray, repeats: int) -> float:
    """Best time of the kernel on 4 runs of ``games`` games, summed over :data:`VARIANTS`."""
    keys = np.arange(8, dtype=np.uint64).reshape(4, 2)
    total = 0.0
    for sides, decks, jail in VARIANTS:
        rules = Rules.from_params({"dice_sides": sides, "deck_policy": decks, "jail_strategy": jail,
                                   "chance_deck": "standard", "tally": "per_roll"})
        cards = tuple(rules.chance_cards.tolist()), tuple(rules.community_cards.tolist())
        tables = transition_tables(rules.dice_sides, rules.long_jail, rules.tally_code, rules.shuffled, *cards)
        best = np.inf
        for _ in range(repeats):
            hist = np.zeros((4, checkpoints.size, tables.codes.shape[0]), dtype=np.int64)
            start = time.perf_counter()
            _play_runs(rules, tables, cards, keys, games, players, checkpoints, hist)
            best = min(best, time.perf_counter() - start)
        total += best
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print("shape                 checkpoints  kernel (s)  over one checkpoint")
    for name, (games, players, turns) in SHAPES.items():
        log = log_checkpoints(turns)
        sets = {"one": np.array([turns]), "log": log, "log + 64 batches": with_series(log, 64)[0]}
        kernel_seconds(games, players, sets["one"], 1)  # compiled or loaded before timing
        times = {label: kernel_seconds(games, players, cp, args.repeats) for label, cp in sets.items()}
        for label, cp in sets.items():
            print(f"{name:21s} {cp.size:4d} ({label:16s}) {times[label]:7.3f}  {times[label] / times['one']:5.2f}x")


if __name__ == "__main__":
    main()
