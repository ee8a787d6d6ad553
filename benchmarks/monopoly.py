"""Speed of the Monopoly engine: kernel rolls per second against the strongest
reference kernel written here, variant by variant, in one run; plain Python;
exact solve times.

    python benchmarks/monopoly.py [--turns 1000000] [--repeats 5] [--json] [--only VARIANT ...]

For each variant, in one process and interleaved repeat by repeat (best of
``--repeats``, and the ratio of every repeat, the two timed back to back): the
boardsweep kernel (``simulate_rules``, :data:`GAMES` games of ``--turns``
player turns, one core) and :func:`reference_for`, the yardstick: the same
rolls with nothing else.  The reference plays :data:`_LANES` games side by
side.  It draws the words of :data:`_BATCH` rolls of every game at once, the
games side by side (vector instructions), one 64-bit xoshiro256** word per
roll: its high half the ordered pair of faces, its low half an independent
card draw (with shuffled decks no card draw: the deck-position table gives the
card, as in the kernel).  Then, roll by roll, a game at a time: a branch-free lookup in the
variant's per-state transition tables (:func:`.tables.transition_tables`:
jail, doubles and cards already resolved), the next card of the game's
shuffled decks through a deck-position table when the decks cycle, one count
in the game's row of the tally histogram, and with several players the
game's tokens taking turns through a waiting queue.  It keeps no turn count,
no checkpoints and no games after the first :data:`_LANES`, its indices are
unsigned (no negative-index wrap-around) and its streams are not the
simulator's: a speed bound on the kernel's own design, not a second
simulator.  Each of its choices was measured against its alternatives and
the faster kept (``benchmarks/README.md``).  ``pe84 reference`` is the
issue's yardstick kept for comparison: 8 games interleaved, one draw per
roll, its own tables written from the PE84 rules (per_roll, independent,
short).  The ratio kernel / reference is the issue's figure (goal: >= 1.0 for
every variant).  Times are the process's CPU time, which other processes on
a shared machine change far less than wall time.  The plain-Python figure
runs the very same kernel with NUMBA_DISABLE_JIT=1 in a subprocess
(tests/core/monopoly/test_simulate.py proves both give the same arrays).  The
machine is shared: pin it (``taskset -c 1``) and compare ratios taken in one
run, not absolute figures.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import subprocess
import sys
import time
from functools import lru_cache

import numpy as np
from numba import njit, uint64

from boardsweep.core.rng import below, xoshiro

#: name -> (rule parameters, players); every variant plays 2d6.
VARIANTS = {
    f"{tally}/{deck}/{jail}": ({"tally": tally, "deck_policy": deck, "jail_strategy": jail}, 1)
    for tally, deck, jail in itertools.product(("per_roll", "per_landing", "per_turn"),
                                               ("independent", "shuffled_cycle"),
                                               ("short", "long"))
}
VARIANTS.update({
    "per_roll/independent/short/classic15": ({"chance_deck": "classic15"}, 1),
    "per_roll/independent/short, 2 players": ({}, 2),
    "per_roll/shuffled_cycle/short, 2 players": ({"deck_policy": "shuffled_cycle"}, 2),
    "per_landing/shuffled_cycle/long/classic15, 2 players": (
        {"tally": "per_landing", "deck_policy": "shuffled_cycle", "jail_strategy": "long",
         "chance_deck": "classic15"}, 2),
})
GAMES = 32  # the kernel plays them side by side (core/monopoly/kernel.py LANES)
_LANES = 32  # the reference's lanes
_BATCH = 16  # the reference's rolls drawn at once
_PE84_LANES = 8
_LOW = np.uint64(0xFFFFFFFF)

_TIMED = """
import json, sys, time
from boardsweep.core.monopoly.rules import Rules
from boardsweep.core.monopoly.simulate import simulate_rules
params, players, turns = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rules = Rules(**params)
t0 = time.process_time()
out = simulate_rules(rules, 0, 1, players, turns)
print(out["rolls"][-1] / (time.process_time() - t0))
"""


@njit(cache=True, inline="always")
def _draw(s0, s1, s2, s3, rolls, lanes, n_pairs, width, cols, cards, shuffled):
    """``rolls`` words of each lane's stream, the lanes side by side (vector
    instructions): throw column and, with independent decks, card draw of roll
    ``i``, lane ``lane`` at ``i * _LANES + lane`` (shuffled decks draw no card:
    the deck-position table gives it)."""
    for i in range(rolls):
        for lane in range(lanes):
            x, a, b, c, d = xoshiro(s0[lane], s1[lane], s2[lane], s3[lane])
            s0[lane], s1[lane], s2[lane], s3[lane] = a, b, c, d
            cols[i * _LANES + lane] = below(x >> uint64(32), n_pairs)
            if not shuffled:
                cards[i * _LANES + lane] = below(x & _LOW, width)


@lru_cache(maxsize=None)
def reference_for(shuffled: bool, several: bool):
    """The reference compiled for a deck policy and one or several players
    (closure constants: the branches that do not apply vanish)."""
    from boardsweep.core.monopoly.tables import CODE_BIT, USED_BIT

    state_mask = (1 << USED_BIT) - 1

    @njit(cache=True)
    def reference(rng, rolls, players, n_pairs, width, t1, t2, dk, adv, hist):
        """``rolls`` rolls of each of :data:`_LANES` interleaved games, drawn
        :data:`_BATCH` rolls at a time; ``hist[lane, code]`` counts tally codes.  ``rng`` (4, _LANES): the lanes' xoshiro256** states;
        ``dk[lane, deck]`` the t2 card index at deck position ``deck``,
        ``adv[4 * deck + used]`` the next deck position."""
        lanes = rng.shape[1]  # _LANES, as a loop bound the compiler does not unroll
        rng = rng.copy()
        cols, cards = np.zeros(_BATCH * lanes, np.int32), np.zeros(_BATCH * lanes, np.int32)
        base, deck, head = np.zeros(lanes, np.int64), np.zeros(lanes, np.int64), np.zeros(lanes, np.int64)
        wait = np.zeros((lanes, max(players - 1, 1)), np.int64)
        for done in range(0, rolls, _BATCH):
            batch = min(_BATCH, rolls - done)
            _draw(rng[0], rng[1], rng[2], rng[3], batch, lanes, n_pairs, width, cols, cards, shuffled)
            for i in range(batch):
                for lane in range(lanes):
                    card = np.int64(dk[lane, uint64(deck[lane])]) if shuffled else np.int64(cards[i * _LANES + lane])
                    e1 = np.int64(t1[uint64(base[lane] + cols[i * _LANES + lane])])
                    e2 = np.int64(t2[uint64((e1 >> 1) + (card & -(e1 & 1)))])
                    hist[lane, uint64(e2 >> CODE_BIT)] += 1
                    nxt = e2 & state_mask
                    if shuffled:
                        deck[lane] = adv[uint64(4 * deck[lane] + ((e2 >> USED_BIT) & 3))]
                    if several:  # at a turn's end the token sits down and the next one rises
                        ends = (e2 >> CODE_BIT) & 1
                        p = head[lane]
                        seated = wait[lane, uint64(p)]
                        wait[lane, uint64(p)] = nxt if ends else seated
                        p += ends
                        head[lane] = 0 if p == players - 1 else p
                        nxt = seated if ends else nxt
                    base[lane] = nxt

    return reference


def _decks(rules, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The reference's deck tables: per lane, the t2 card index at each deck
    position ``i_cc * n_ch + i_ch`` (decks shuffled by numpy), and the deck
    position after a roll per position and used-decks code (bit 0 CC, bit 1 CH)."""
    from boardsweep.core.monopoly.tables import card_types

    n_cc_kinds, cc_types = card_types(rules.community_cards)[0].size, card_types(rules.community_cards)[1]
    ch_types = card_types(rules.chance_cards)[1]
    n_cc, n_ch = cc_types.size, ch_types.size
    gen = np.random.default_rng(seed)
    dk = np.stack([(gen.permutation(ch_types)[None, :] * n_cc_kinds
                    + gen.permutation(cc_types)[:, None]).ravel() for _ in range(_LANES)])
    i, j, used = np.meshgrid(np.arange(n_cc), np.arange(n_ch), np.arange(4), indexing="ij")
    adv = ((i + (used & 1)) % n_cc) * n_ch + (j + (used >> 1)) % n_ch
    return dk.astype(np.int16), adv.ravel().astype(np.int16)


def _reference_rate(params: dict, players: int, rolls: int, seed: int) -> float:
    from boardsweep.core.monopoly.rules import Rules
    from boardsweep.core.monopoly.tables import transition_tables

    rules = Rules(**params)
    t = transition_tables(rules.dice_sides, rules.long_jail, rules.tally_code, rules.shuffled,
                          tuple(rules.chance_cards.tolist()), tuple(rules.community_cards.tolist()))
    assert t.n_cols == rules.dice_sides ** 2  # the pair of faces is the column
    dk, adv = _decks(rules, seed)
    rng = np.random.default_rng(seed).integers(1, 2**63, size=(4, _LANES)).astype(np.uint64)
    hist = np.zeros((_LANES, t.codes.shape[0]), np.int64)
    run = reference_for(rules.shuffled, players > 1)
    t0 = time.process_time()
    run(rng, rolls, players, t.n_cols, t.width, t.t1, t.t2, dk, adv, hist)
    return _LANES * rolls / (time.process_time() - t0)


def _pe84_tables() -> tuple[np.ndarray, np.ndarray]:
    """The reference's tables, written here from the PE84 rules (states
    ``3 * square + doubles``, 120 = in jail): ``t1[state * 36 + pair]`` is
    ``2 * row + draws``, ``t2[row + (card if draws else 0)]`` the next state."""
    cc = [0, -5] + [-1] * 14  # GO, go to jail, 14 that stay
    ch = [0, -5, 11, 24, 39, 5, -2, -2, -3, -4] + [-1] * 6  # -2 next R, -3 next U, -4 back 3

    def walk(sq: int, card: int) -> int:  # card: 8 bits, Chance (high 4) then CC (low 4)
        if sq == 30:
            return 40
        code = cc[card & 15] if sq in (2, 17, 33) else ch[card >> 4] if sq in (7, 22, 36) else -1
        if code == -4:
            return walk(sq - 3, card)
        if code in (-1, -5):
            return 40 if code == -5 else sq
        if code == -2:
            return next(r for r in (5, 15, 25, 35, 45) if r > sq) % 40
        if code == -3:
            return 12 if sq < 12 or sq >= 28 else 28
        return code

    rows: dict[tuple, int] = {}
    t1, t2 = np.zeros(121 * 36, np.int64), []
    for state in range(121):
        sq, doubles = (10, 0) if state == 120 else divmod(state, 3)
        for pair in range(36):
            a, b = divmod(pair, 6)
            if a == b and doubles == 2:
                outcomes = (120,)
            else:
                end = [walk((sq + a + b + 2) % 40, card) for card in range(256)]
                outcomes = tuple(120 if e == 40 else 3 * e + (doubles + 1 if a == b else 0)
                                 for e in end)
                outcomes = outcomes[:1] if len(set(outcomes)) == 1 else outcomes
            if outcomes not in rows:
                rows[outcomes] = len(t2)
                t2.extend(outcomes)
            t1[state * 36 + pair] = 2 * rows[outcomes] + (len(outcomes) > 1)
    return t1, np.array(t2, np.int64)


@njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(cache=True)
def pe84_reference(seed, rolls, t1, t2, counts):
    """The previous yardstick, indices made unsigned: ``rolls`` rolls of each of
    8 interleaved games on its own PE84 tables; counts[game, state]."""
    s = np.empty((4, _PE84_LANES), np.uint64)
    for lane in range(_PE84_LANES):
        x = uint64(seed * _PE84_LANES + lane + 1) * uint64(0x9E3779B97F4A7C15)
        for i in range(4):
            x ^= x >> uint64(31)
            x *= uint64(0xBF58476D1CE4E5B9)
            s[i, lane] = x
    state = np.full(_PE84_LANES, 0, np.int64)
    s0, s1, s2, s3 = s[0], s[1], s[2], s[3]
    for _ in range(rolls):
        for lane in range(_PE84_LANES):
            a, b, c, d = s0[lane], s1[lane], s2[lane], s3[lane]
            x = _rotl(b * uint64(5), 7) * uint64(9)
            t = b << uint64(17)
            c ^= a
            d ^= b
            b ^= c
            a ^= d
            c ^= t
            d = _rotl(d, 45)
            s0[lane], s1[lane], s2[lane], s3[lane] = a, b, c, d
            pair = np.int64(((x >> uint64(32)) * uint64(36)) >> uint64(32))
            card = np.int64(((x & uint64(0xFFFFFFFF)) * uint64(256)) >> uint64(32))
            e = t1[uint64(state[lane] * 36 + pair)]
            state[lane] = t2[uint64((e >> 1) + (card & -(e & 1)))]
            counts[lane, uint64(state[lane])] += 1


def _kernel_rate(params: dict, players: int, turns: int, seed: int) -> tuple[float, int]:
    """(rolls/s, rolls per game) of the kernel: :data:`GAMES` games of ``turns`` player turns."""
    from boardsweep.core.monopoly.rules import Rules
    from boardsweep.core.monopoly.simulate import simulate_rules

    t0 = time.process_time()
    out = simulate_rules(Rules(**params), seed, GAMES, players, turns // players)
    return out["rolls"][-1] / (time.process_time() - t0), int(out["rolls"][-1]) // GAMES


def _pe84_rate(tables: tuple, rolls: int, seed: int) -> float:
    counts = np.zeros((_PE84_LANES, 121), np.int64)
    t0 = time.process_time()
    pe84_reference(seed, rolls, *tables, counts)
    return _PE84_LANES * rolls / (time.process_time() - t0)


def python_rate(params: dict, players: int, turns: int) -> float:
    """Rolls per second of the same kernel as plain Python (NUMBA_DISABLE_JIT=1)."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    out = subprocess.run([sys.executable, "-c", _TIMED, json.dumps(params), str(players),
                          str(turns)], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def kernel_rates(turns: int, repeats: int, only: list[str] | None = None) -> dict[str, dict]:
    """Per variant (those named in ``only``, else all): the best rolls/s of the kernel and
    of its reference, and the ratio kernel / reference of every repeat (the two timed back to back)."""
    tables = _pe84_tables()
    _pe84_rate(tables, 1000, 0)  # compile
    rolls = {}
    variants = {name: VARIANTS[name] for name in only} if only else VARIANTS
    for name, (params, players) in variants.items():
        rolls[name] = _kernel_rate(params, players, turns, 0)[1]  # compiles; the work to match
        _reference_rate(params, players, 1000, 0)
    out = {name: {"kernel": 0.0, "reference": 0.0, "ratios": []} for name in variants}
    out["pe84 reference"] = {"reference": 0.0}
    for r in range(repeats):
        pe84 = _pe84_rate(tables, rolls[next(iter(variants))], r)
        out["pe84 reference"]["reference"] = max(out["pe84 reference"]["reference"], pe84)
        for name, (params, players) in variants.items():
            fast = _kernel_rate(params, players, turns, r + 1)[0]
            ref = _reference_rate(params, players, rolls[name], r + 1)
            row = out[name]
            row["kernel"], row["reference"] = max(row["kernel"], fast), max(row["reference"], ref)
            row["ratios"].append(fast / ref)
    return out


def exact_times() -> dict[str, float]:
    from boardsweep.core.monopoly.cards import CHANCE_DECKS, COMMUNITY_CHEST_DECK
    from boardsweep.core.monopoly.exact import build_chain, long_run_frequency
    from boardsweep.core.markov import stationary
    from boardsweep.core.monopoly.rules import Rules

    long_run_frequency(Rules(dice_sides=5))  # warm imports
    t0 = time.process_time()
    stationary(build_chain(Rules(dice_sides=6)).P)
    small = time.process_time() - t0
    rng = np.random.default_rng(0)
    orders = (rng.permutation(COMMUNITY_CHEST_DECK), rng.permutation(CHANCE_DECKS["standard"]))
    t0 = time.process_time()
    stationary(build_chain(Rules(deck_policy="shuffled_cycle"), orders).P)
    large = time.process_time() - t0
    return {"exact_121_states_s": small, "exact_fixed_order_31k_states_s": large}


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        flags = open("/proc/cpuinfo").read()
        return names[0] + (", AVX-512" if " avx512f" in flags else ", AVX2" if " avx2" in flags else "")
    except (OSError, IndexError):
        return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1_000_000,
                        help=f"player turns per game ({GAMES} games)")
    parser.add_argument("--python-turns", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-python", action="store_true", help="skip the plain-Python runs")
    parser.add_argument("--no-exact", action="store_true", help="skip the exact solve times")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", action="append", choices=list(VARIANTS), metavar="VARIANT",
                        help="time this variant only (repeatable; default: every variant)")
    args = parser.parse_args()
    rates = kernel_rates(args.turns, args.repeats, args.only)
    variants = {name: VARIANTS[name] for name in args.only} if args.only else VARIANTS
    report: dict[str, float | str] = {"cpu": cpu_name(), "load_average_1min_before": os.getloadavg()[0],
                                      "pe84 reference rolls/s": rates["pe84 reference"]["reference"]}
    for name, (params, players) in variants.items():
        row = rates[name]
        report[f"{name}: kernel rolls/s"] = row["kernel"]
        report[f"{name}: reference rolls/s"] = row["reference"]
        report[f"{name}: ratio to reference (best / best)"] = row["kernel"] / row["reference"]
        report[f"{name}: ratio, repeats min-max"] = (
            f"{min(row['ratios']):.3f}-{max(row['ratios']):.3f}")
        if not args.no_python and name in list(variants)[:1]:
            slow = python_rate(params, players, args.python_turns)
            report[f"{name}: python rolls/s"] = slow
            report[f"{name}: speed-up over python"] = row["kernel"] / slow
    worst = min(variants, key=lambda n: rates[n]["kernel"] / rates[n]["reference"])
    report["slowest variant against its reference"] = (
        f"{worst}: {rates[worst]['kernel'] / rates[worst]['reference']:.3f}x (goal 1.0x)")
    if not args.no_exact:
        report.update(exact_times())
    report["load_average_1min"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            text = value if isinstance(value, str) else f"{value:14,.4g}"
            print(f"{key:72s} {text}")


if __name__ == "__main__":
    main()
