"""Chance and Community Chest decks as data.

A card is an integer code: a square 0..39 means "advance to that square";
the negative codes below are the relative moves.  Only the movement of the
token matters here, so every money card is ``STAY``.

* ``standard`` Chance (16 cards, PE84): GO, JAIL, C1, E3, H2, R1, next R,
  next R, next U, back 3, and 6 that do not move.
* ``classic15`` Chance (15 cards, the Stats 102A assignment's, in its order): GO, E3 (Illinois),
  C1 (St. Charles), next U, next R, R1 (Reading), H2 (Boardwalk), JAIL,
  back 3, and 6 that do not move.
* Community Chest (16 cards): GO, JAIL and 14 that do not move.
"""

from __future__ import annotations

import numpy as np

from .board import SQUARES

__all__ = [
    "STAY",
    "NEXT_RAILWAY",
    "NEXT_UTILITY",
    "BACK_3",
    "TO_JAIL",
    "CHANCE_DECKS",
    "COMMUNITY_CHEST_DECK",
    "card_code",
    "card_label",
]

STAY, NEXT_RAILWAY, NEXT_UTILITY, BACK_3, TO_JAIL = -1, -2, -3, -4, -5
_RELATIVE = {"STAY": STAY, "R": NEXT_RAILWAY, "U": NEXT_UTILITY, "BACK3": BACK_3, "JAIL": TO_JAIL}
_SQ = {name: i for i, name in enumerate(SQUARES)}

CHANCE_DECKS: dict[str, np.ndarray] = {
    "standard": np.array(
        [_SQ["GO"], TO_JAIL, _SQ["C1"], _SQ["E3"], _SQ["H2"], _SQ["R1"],
         NEXT_RAILWAY, NEXT_RAILWAY, NEXT_UTILITY, BACK_3] + [STAY] * 6,
        dtype=np.int64,
    ),
    "classic15": np.array(
        [_SQ["GO"], _SQ["E3"], _SQ["C1"], NEXT_UTILITY, NEXT_RAILWAY, _SQ["R1"],
         _SQ["H2"], TO_JAIL, BACK_3] + [STAY] * 6,
        dtype=np.int64,
    ),
}  # fmt: skip
COMMUNITY_CHEST_DECK: np.ndarray = np.array([_SQ["GO"], TO_JAIL] + [STAY] * 14, dtype=np.int64)


def card_code(label: str) -> int:
    """Code of a card label: a square name (GO, C1, E3, H2, R1, ...), ``JAIL``
    (go to jail), ``R`` / ``U`` (next railway / utility), ``BACK3`` or ``STAY``."""
    key = label.strip().upper()
    if key in _RELATIVE:
        return _RELATIVE[key]
    if key in _SQ and key != "JAIL":
        return _SQ[key]
    raise ValueError(
        f"unknown card {label!r}; expected a square name (GO, C1, E3, H2, R1, ...), "
        "JAIL, R, U, BACK3 or STAY"
    )


def card_label(code: int) -> str:
    """Inverse of :func:`card_code`."""
    for name, value in _RELATIVE.items():
        if value == code:
            return name
    return SQUARES[code]
