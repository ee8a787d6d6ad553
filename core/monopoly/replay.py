"""Scripted Monopoly: replay one token from given dice faces and card draws.

The script drives the very kernel that simulates (:func:`.simulate.run_script`),
so a replay checks the simulator's rules.  Card draws are given in the order
they happen, whichever deck they come from, by label: a square name (GO, C1,
E3, H2, R1, ...), ``JAIL`` (go to jail), ``R`` / ``U`` (advance to the next
railway / utility), ``BACK3`` or ``STAY`` (any card that does not move).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..games import ParameterError

from .board import LOCATIONS, SQUARES, merge_jail
from .cards import card_code
from .rules import Rules
from .simulate import run_script

__all__ = ["replay"]

_STATUS = {1: "the dice ran out", 2: "the card draws ran out"}


def replay(
    params: dict[str, Any], dice: Sequence[int], cards: Sequence[str], turns: int | None = None
) -> dict[str, Any]:
    """Tally of a scripted one-token game.

    Parameters
    ----------
    params : dict
        Monopoly parameters (dice_sides, jail_strategy, chance_deck, tally...).
    dice : sequence of int
        Die faces, two per roll, each in 1..dice_sides.
    cards : sequence of str
        Card labels in draw order (see the module docstring).
    turns : int, optional
        Turns to play (an error if the script runs out first); by default as
        many whole turns as the dice allow, a turn cut short being dropped.

    Returns
    -------
    dict
        ``counts`` (41 location labels -> count), ``squares`` (the 40-entry
        tally with IN_JAIL merged into JAIL, squares 0..39, as the Stats 102A
        assignment prints it), ``turns``, ``rolls``, ``events``, ``stopped`` (the real
        reason the replay ended) and ``unused_dice`` / ``unused_cards``
        (what the script gave that the game did not use).
    """
    rules = Rules.from_params(params)
    faces = np.asarray(list(dice), dtype=np.int64)
    if faces.size < 2 or faces.size % 2 or faces.min() < 1 or faces.max() > rules.dice_sides:
        raise ParameterError(
            f"--dice: expected an even number (>= 2) of faces in 1..{rules.dice_sides}"
        )
    try:
        codes = np.asarray([card_code(c) for c in cards], dtype=np.int64)
    except ValueError as exc:
        raise ParameterError(f"--cards: {exc}") from None
    limit = faces.size // 2 if turns is None else turns
    if limit < 1:
        raise ParameterError(f"--turns: expected an integer >= 1, got {turns}")
    counts, events, rolls, played, status = run_script(rules, faces, codes, limit)
    if played < limit and turns is not None:
        raise ParameterError(f"--turns {turns}: {_STATUS[status]} after {played} turns")
    used = _cards_used(rules, faces, codes, limit, played, status)
    unused_dice = faces.size - 2 * rolls
    stopped = _stop_reason(turns, status, played, unused_dice)
    squares = merge_jail(counts)
    return {
        "counts": dict(zip(LOCATIONS, counts.tolist())),
        "squares": squares.tolist(),
        "square_labels": list(SQUARES),
        "turns": played,
        "rolls": rolls,
        "events": events,
        "stopped": stopped,
        "unused_dice": faces[2 * rolls:].tolist(),
        "unused_cards": list(cards[used:]),
    }


def _stop_reason(turns: int | None, status: int, played: int, unused_dice: int) -> str:
    """Why the replay stopped, in words."""
    if turns is not None or status == 0:
        return "completed"
    if status == 2:
        return f"the card draws ran out mid-turn: turn {played + 1} was dropped"
    if unused_dice:
        return f"the dice ran out mid-turn: turn {played + 1} was dropped"
    return "completed"


def _cards_used(rules: Rules, faces: np.ndarray, codes: np.ndarray, limit: int, played: int,
                status: int) -> int:
    """How many of the scripted card draws the replay consumed.

    The fewest leading draws that replay the same turns: with fewer, the
    script runs out of cards earlier (found by bisection).
    """
    if status == 2:
        return codes.size
    lo, hi = 0, codes.size
    while lo < hi:
        mid = (lo + hi) // 2
        _, _, _, p, s = run_script(rules, faces, codes[:mid], limit)
        if s == 2 or p < played:
            lo = mid + 1
        else:
            hi = mid
    return lo
