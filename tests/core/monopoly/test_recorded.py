"""The kernel against its recorded integer outputs of the Monopoly kernel, one SHA-256 per variant.

``recorded_outputs.json`` holds, for every variant of :data:`VARIANTS`, the
SHA-256 of the kernel's ``counts``, ``events`` and ``rolls`` arrays (int64,
little-endian, in that order) for :data:`SHAPE`, plus the last checkpoint's
events and rolls in clear.  It was written by the kernel before it was
rebuilt on transition tables, so the test pins every variant to the same
random stream bit for bit.  ``recorded_lanes.json`` does the same for
:data:`LANE_VARIANTS` and :data:`LANE_SHAPE`: more games than the kernel has
lanes (41 games: every lane at play, lanes refilled, then retired down to the
few that draw roll by roll), three players, dice of 10 sides (a throw column
looked up, not the pair of faces) and fixed deck orders; it was written by the
kernel of issue 43's release (8 lanes, no batches), before issue 44 rebuilt it.  To regenerate (only after an intended change of
the RNG scheme, which must also bump it)::

    .venv/bin/python tests/core/monopoly/test_recorded.py
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

FILE = Path(__file__).with_name("recorded_outputs.json")
SEED = 20261122
SHAPE = {"games": 3, "turns": 300}
CHECKPOINTS = np.array([1, 2, 17, 150, 299, 300])

VARIANTS = [
    {"dice_sides": n, "jail_strategy": j, "deck_policy": d, "chance_deck": c, "tally": t,
     "players": p}
    for n, j, d, c, t, p in itertools.product(
        (4, 6), ("short", "long"), ("independent", "shuffled_cycle"),
        ("standard", "classic15"), ("per_roll", "per_landing", "per_turn"), (1, 2))
]


LANES_FILE = Path(__file__).with_name("recorded_lanes.json")
LANE_SHAPE = {"games": 41, "turns": 60}
LANE_CHECKPOINTS = np.array([3, 40, 60])
LANE_VARIANTS = [
    {"dice_sides": n, "jail_strategy": j, "deck_policy": d, "chance_deck": c, "tally": t,
     "players": p, "orders": o}
    for n, j, d, c, t, p, o in itertools.product(
        (6, 10), ("short", "long"), ("independent", "shuffled_cycle"), ("standard", "classic15"),
        ("per_roll", "per_landing", "per_turn"), (1, 3), (False, True))
    if d == "shuffled_cycle" or not o
]


def name(variant: dict) -> str:
    return "/".join(str(variant[k]) for k in sorted(variant))


def digest(out: dict) -> str:
    h = hashlib.sha256()
    for key in ("counts", "events", "rolls"):
        h.update(np.ascontiguousarray(out[key], dtype="<i8").tobytes())
    return h.hexdigest()


def run(variant: dict) -> dict:
    from boardsweep.core.monopoly.rules import Rules
    from boardsweep.core.monopoly.simulate import simulate_rules

    params = {k: v for k, v in variant.items() if k != "players"}
    return simulate_rules(Rules(**params), SEED, SHAPE["games"], variant["players"],
                          SHAPE["turns"], CHECKPOINTS)


def run_lanes(variant: dict) -> dict:
    """A :data:`LANE_VARIANTS` run; ``orders``: play game 5's shuffled orders in every game."""
    from boardsweep.core.monopoly.rules import Rules
    from boardsweep.core.monopoly.simulate import deck_orders, simulate_rules

    params = {k: v for k, v in variant.items() if k not in ("players", "orders")}
    rules = Rules(**params)
    orders = deck_orders(rules, SEED + 1, 5) if variant["orders"] else None
    return simulate_rules(rules, SEED + 1, LANE_SHAPE["games"], variant["players"],
                          LANE_SHAPE["turns"], LANE_CHECKPOINTS, deck_orders=orders)


def record(variants: list, play) -> dict:
    table = {}
    for variant in variants:
        out = play(variant)
        table[name(variant)] = {"sha256": digest(out), "events": int(out["events"][-1]),
                                "rolls": int(out["rolls"][-1])}
    return table


@pytest.mark.parametrize("variant", VARIANTS, ids=name)
def test_kernel_reproduces_recorded_outputs_bit_for_bit(variant):
    expected = json.loads(FILE.read_text())[name(variant)]
    out = run(variant)
    assert (int(out["events"][-1]), int(out["rolls"][-1])) == (expected["events"], expected["rolls"])
    assert digest(out) == expected["sha256"]


@pytest.mark.parametrize("variant", LANE_VARIANTS, ids=name)
def test_lanes_refilled_reproduce_recorded_outputs_bit_for_bit(variant):
    expected = json.loads(LANES_FILE.read_text())[name(variant)]
    out = run_lanes(variant)
    assert (int(out["events"][-1]), int(out["rolls"][-1])) == (expected["events"], expected["rolls"])
    assert digest(out) == expected["sha256"]


def test_every_variant_is_recorded():
    assert set(json.loads(FILE.read_text())) == {name(v) for v in VARIANTS}
    assert set(json.loads(LANES_FILE.read_text())) == {name(v) for v in LANE_VARIANTS}


if __name__ == "__main__":
    import sys

    if "--lanes" in sys.argv:  # the second table only
        LANES_FILE.write_text(json.dumps(record(LANE_VARIANTS, run_lanes), indent=1,
                                         sort_keys=True) + "\n")
        print(f"wrote {LANES_FILE}")
    else:
        FILE.write_text(json.dumps(record(VARIANTS, run), indent=1, sort_keys=True) + "\n")
        print(f"wrote {FILE}")
