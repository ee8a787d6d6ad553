"""The exact CLT variance's branches and numbers against the branch-by-branch
enumeration it replaced (the mathematics is tested in tests/core/test_stats.py)."""

import numpy as np
import pytest

from boardsweep.core.markov import check_stochastic, fundamental_matrix, stationary
from boardsweep.core.monopoly import exact
from boardsweep.core.monopoly.board import IN_JAIL, JAIL, N_LOCATIONS, N_SQUARES
from boardsweep.core.monopoly.rules import Rules
from boardsweep.core.monopoly.variance import Branches, asymptotic_variance, roll_branches

VARIANTS = [Rules(dice_sides=n, jail_strategy=j, chance_deck=c, tally=t)
            for n in (2, 6, 8) for j in ("short", "long") for c in ("standard", "classic15")
            for t in ("per_roll", "per_landing", "per_turn")]


def _branches_by_loop(rules: Rules) -> Branches:
    """One roll's branches state by state, roll class by roll class (the enumeration the vectorised one replaced)."""
    decks = exact.Decks(rules, None)
    loc, dbl, thr = exact.base_states(rules.long_jail)
    sums, doubles, weights = exact.roll_classes(rules.dice_sides)
    out = []  # (state, next, probability, counted locations)
    for w, (L, D, S) in enumerate(zip(loc, dbl, thr)):
        in_jail = L == IN_JAIL
        for total, dd, weight in zip(sums, doubles, weights):
            stays = in_jail and rules.long_jail and not dd and S < 2
            double = bool(dd) and not (in_jail and rules.long_jail)
            d_now = 0 if in_jail else int(D)
            if stays or (double and d_now == 2):
                out.append((w, 3 * N_SQUARES + S + 1 if stays else 3 * N_SQUARES, weight, (IN_JAIL,)))
                continue
            landing = ((JAIL if in_jail else int(L)) + int(total)) % N_SQUARES
            for p, final, _, counted in exact._resolve(landing, 0, decks):
                if p <= 0:
                    continue
                to_jail = final == IN_JAIL
                n = 3 * N_SQUARES if to_jail else final * 3 + (d_now + 1 if double else 0)
                tallied = {"per_landing": tuple(counted) + ((IN_JAIL,) if to_jail else ()), "per_roll": (final,),
                           "per_turn": (final,) if (to_jail or not double) else ()}[rules.tally]
                out.append((w, n, weight * p, tallied))
    counts = np.zeros((len(out), N_LOCATIONS))
    for b, (*_, tallied) in enumerate(out):
        for c in tallied:
            counts[b, c] += 1.0
    state, nxt, prob, _ = zip(*out)
    return Branches(state, nxt, prob, counts, loc.size)


def _variance_by_inverse(rules: Rules) -> np.ndarray:
    """sigma^2 per roll from the loop's branches, ``np.add.at`` sums and the fundamental matrix inverted."""
    br = _branches_by_loop(rules)
    P = np.zeros((br.n_states, br.n_states))
    np.add.at(P, (br.state, br.next), br.prob)
    pi = stationary(P)
    C = np.zeros((br.n_states, N_LOCATIONS))
    np.add.at(C, br.state, br.prob[:, None] * br.counts)
    mu_E = pi @ C.sum(axis=1)
    f = (pi @ C) / mu_E
    y = br.counts - br.counts.sum(axis=1, keepdims=True) * f
    m = np.zeros((br.n_states, N_LOCATIONS))
    np.add.at(m, br.state, br.prob[:, None] * y)
    m -= pi @ m
    h = fundamental_matrix(P, pi) @ m
    D = y - m[br.state] + h[br.next] - (P @ h)[br.state]
    return np.einsum("b,b,bk->k", pi[br.state], br.prob, D * D) / mu_E**2


@pytest.mark.parametrize("rules", VARIANTS, ids=str)
def test_branches_are_the_loops_in_its_order_and_the_numbers_its_to_1e_12(rules):
    loop, br = _branches_by_loop(rules), roll_branches(rules)
    for name in ("state", "next", "prob", "counts"):  # the same branches, in the same order, bit for bit
        np.testing.assert_array_equal(getattr(br, name), getattr(loop, name))
    check_stochastic(br.transition_matrix())
    expected = _variance_by_inverse(rules)
    got = asymptotic_variance(rules)["variance"]
    assert np.all(np.abs(got - expected) <= 1e-12 * np.abs(expected))


def test_each_landing_squares_cards_are_resolved_once_not_per_state_and_roll(monkeypatch):
    """The branches come from one table of the 40 squares' card branches:
    the loop resolved a landing for each of 123 states x 11 roll classes."""
    calls = []
    resolve = exact._resolve

    def counted(square, ds, decks):
        calls.append(square)
        return resolve(square, ds, decks)

    monkeypatch.setattr(exact, "_resolve", counted)
    roll_branches(Rules(dice_sides=6, jail_strategy="long", tally="per_landing"))
    assert len(calls) <= 2 * N_SQUARES  # each square once, and each card's destination
